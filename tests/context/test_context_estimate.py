"""The token estimate against the real Qwen tokenizer, and the config's rules."""

from __future__ import annotations

import pytest
from context_helpers import qwen_tokens
from context_samples import SAMPLES

from tether.agent import ContextConfig as SeedContextConfig
from tether.context import (
    ContextConfig,
    count_text_tokens,
    estimate_msg_tokens,
    estimate_text_tokens,
)
from tether.errors import ConfigError
from tether.message import AssistantMsg, ToolCallBlock, ToolResultBlock
from tether.model import ScriptedChatModel


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_estimate_is_close_to_qwen_and_never_far_under(name: str) -> None:
    text = SAMPLES[name]
    ratio = estimate_text_tokens(text) / qwen_tokens(text)
    # under-counting delays compression past the window: keep it within 10%;
    # over-counting only compresses early (Chinese is over-counted for Qwen by design).
    assert 0.9 <= ratio <= 1.8, ratio


def test_the_naive_bytes_over_four_rule_would_fail_json_and_chinese() -> None:
    for name in ("JSON", "Chinese"):
        text = SAMPLES[name]
        naive = len(text.encode()) // 4 if name == "JSON" else len(text) // 4
        assert naive < 0.7 * qwen_tokens(text)
        assert estimate_text_tokens(text) >= 0.95 * qwen_tokens(text)


@pytest.mark.parametrize(
    "text, low, high",
    [
        ("", 0, 0),
        ("hello", 1, 1),
        ("1234567890", 10, 10),  # digit by digit, as Qwen and Llama split them
        ("你好世界", 4, 4),
        ('{"a": 1, "b": [true, null]}', 10, 16),
        ("RateLimiter", 2, 3),
        ("dGhpcyBpcyBiYXNlNjQgZW5jb2RlZCB0ZXh0", 10, 30),
    ],
)
def test_estimate_of_small_pieces(text: str, low: int, high: int) -> None:
    assert low <= estimate_text_tokens(text) <= high


def test_message_estimate_counts_calls_results_and_framing() -> None:
    msg = AssistantMsg(
        name="a",
        content=[
            ToolCallBlock(id="c", name="Read", input='{"file_path": "/tmp/x"}'),
            ToolResultBlock(id="c", name="Read", output="contents"),
        ],
    )
    blocks = estimate_text_tokens("Read") + estimate_text_tokens('{"file_path": "/tmp/x"}') + 4
    assert estimate_msg_tokens(msg) == 4 + blocks + estimate_text_tokens("contents") + 4


def test_an_exact_counter_wins_over_the_estimate() -> None:
    class Exact(ScriptedChatModel):
        def count_tokens(self, text: str) -> int | None:
            return qwen_tokens(text)

    text = SAMPLES["Chinese"]
    assert count_text_tokens(text, Exact([])) == qwen_tokens(text)
    assert count_text_tokens(text, ScriptedChatModel([])) == estimate_text_tokens(text)
    assert count_text_tokens(text) == estimate_text_tokens(text)


def test_config_defaults_and_seed_values() -> None:
    assert SeedContextConfig is ContextConfig
    default = ContextConfig()
    assert (default.trigger_ratio, default.reserve_ratio, default.tool_result_limit) == (
        0.8,
        0.2,
        5_000,
    )
    seed = ContextConfig(trigger_ratio=0.7, reserve_ratio=0.2, tool_result_limit=1000)
    assert (seed.threshold(16_000), seed.reserve(16_000)) == (11_200, 3_200)
    assert seed.summary_budget(16_000) == 1_600
    assert ContextConfig(trigger_ratio=0.3, reserve_ratio=0.2).summary_budget(16_000) == 800


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"reserve_ratio": 0.8, "trigger_ratio": 0.7}, "0 < reserve_ratio < trigger_ratio <= 1"),
        ({"reserve_ratio": 0}, "0 < reserve_ratio < trigger_ratio <= 1"),
        ({"trigger_ratio": 1.2}, "got reserve_ratio=0.2, trigger_ratio=1.2"),
        ({"tool_result_limit": 0}, "tool_result_limit must be at least 1"),
        ({"summary_ratio": 1.0}, "summary_ratio must be between 0 and 1"),
        ({"trigger": 0.5}, "Extra inputs are not permitted"),
    ],
)
def test_config_rejects_bad_values(kwargs: dict, message: str) -> None:
    with pytest.raises((ConfigError, ValueError), match=message):
        ContextConfig(**kwargs)


def test_config_is_frozen() -> None:
    with pytest.raises(ValueError):
        ContextConfig().trigger_ratio = 0.5  # type: ignore[misc]
