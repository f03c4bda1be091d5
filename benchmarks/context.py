"""Context management benchmark: per-step overhead vs history length, and estimate error.

Run: `python benchmarks/context.py [--tokenizer-json PATH]`

1. Per-step overhead: the context work of one reasoning step that does not compress
   (the threshold check in `compress_context`, fitting one tool result, accounting for
   the new blocks, re-anchoring on the reported usage) on a context of 100, 1,000 and
   10,000 messages. It must stay flat (within 1.5x), as the work is O(new content).
   One actual compression (O(history), once per trigger) is timed for reference.
2. Estimate error: `estimate_text_tokens` against real tokenizers on English, Chinese,
   code and JSON: Qwen's BPE (bundled in the `dashscope` package, loaded offline with
   `tiktoken`) and any Hugging Face `tokenizer.json` given with `--tokenizer-json`
   (e.g. the Claude tokenizer shipped in `anthropic==0.37.1`:
   `pip download --no-deps anthropic==0.37.1 && unzip -j anthropic-*.whl anthropic/tokenizer.json`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

from tether.context import (
    CompressionRequest,
    ContextConfig,
    compress_context,
    estimate_text_tokens,
    fit_tool_result,
)
from tether.message import AssistantMsg, ChatUsage, ToolCallBlock, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState, ReplyCursor

ROOT = Path(__file__).resolve().parents[1]
SIZES = (100, 1_000, 10_000)
STEPS = 2_000
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def samples() -> dict[str, str]:
    path = ROOT / "tests" / "context" / "context_samples.py"
    spec = importlib.util.spec_from_file_location("context_samples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.SAMPLES)


def build_state(messages: int) -> AgentState:
    state = AgentState()
    for i in range(messages - 1):
        if i % 2 == 0:
            state.add_message(UserMsg(name="u", content=f"question {i}: what about the logs?"))
        else:
            call = ToolCallBlock(id=f"c{i}", name="grep", input='{"pattern": "error"}')
            result = ToolResultBlock(id=f"c{i}", name="grep", output="no matches " * 20)
            state.add_message(AssistantMsg(name="a", content=[call, result], id=f"r{i}"))
    state.add_message(AssistantMsg(name="a", content=[], id="current"))
    state.reply = ReplyCursor(reply_id="current")
    state.record_usage(ChatUsage(input_tokens=50_000, output_tokens=100))
    return state


async def step_overhead(messages: int) -> float:
    """Mean microseconds of context work per non-compressing step."""
    state = build_state(messages)
    model = ScriptedChatModel([], context_length=10_000_000)
    config = ContextConfig()
    prompt = "You are a careful assistant. " * 200
    request = CompressionRequest(state, model, config, None, prompt, "current")
    result = ToolResultBlock(id="x", name="grep", output="line of output\n" * 200)
    usage = ChatUsage(input_tokens=50_000, output_tokens=120)
    start = time.perf_counter()
    for _ in range(STEPS):
        assert await compress_context(request) is None
        kept = await fit_tool_result(result, config, None, state)
        state.note_blocks([kept])
        state.record_usage(usage)
    return (time.perf_counter() - start) / STEPS * 1e6


async def one_compression(messages: int) -> float:
    """Milliseconds of one forced compression (summariser answers at once)."""
    state = build_state(messages)
    model = ScriptedChatModel(
        [AssistantMsg(name="s", content="## Goal\nsummary")] * 400, context_length=10_000_000
    )
    request = CompressionRequest(
        state, model, ContextConfig(reserve_ratio=0.0001), None, "You help.", "current", force=True
    )
    start = time.perf_counter()
    assert await compress_context(request) is not None
    return (time.perf_counter() - start) * 1e3


def qwen_counter() -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    spec = importlib.util.find_spec("dashscope")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "resources" / "qwen.tiktoken"
    encoding = tiktoken.Encoding(
        "qwen",
        pat_str=QWEN_PATTERN,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens={},
    )
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def hf_counter(path: str) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def estimate_table(tokenizer_json: str | None) -> list[str]:
    counters = {"Qwen (dashscope)": qwen_counter()}
    if tokenizer_json:
        counters[f"{Path(tokenizer_json).parent.name or 'hf'} tokenizer.json"] = hf_counter(
            tokenizer_json
        )
    rows = [
        "| sample | chars | estimate | "
        + " | ".join(f"{name} | est/real | bytes÷4 /real" for name in counters)
        + " |"
    ]
    rows.append("|" + "---|" * (3 + 3 * len(counters)))
    for name, text in samples().items():
        est = estimate_text_tokens(text)
        cells = [name, f"{len(text):,}", f"{est:,}"]
        for count in counters.values():
            real = count(text)
            cells += [f"{real:,}", f"{est / real:.2f}", f"{len(text.encode()) / 4 / real:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer-json", help="a Hugging Face tokenizer.json to compare with")
    args = parser.parse_args()
    print(f"## Per-step context overhead ({STEPS:,} steps each, no compression)\n")
    print("| messages | µs per step | vs 100 | one compression (ms) |")
    print("|---:|---:|---:|---:|")
    base = None
    for size in SIZES:
        await step_overhead(size)  # warm up
        micros = min([await step_overhead(size) for _ in range(3)])
        base = base or micros
        print(
            f"| {size:,} | {micros:.1f} | {micros / base:.2f}x | {await one_compression(size):.1f} |"
        )
    print("\n## Token estimate vs real tokenizers (ratio > 1 = over-count)\n")
    for row in estimate_table(args.tokenizer_json):
        print(row)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
