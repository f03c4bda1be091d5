"""Scheduling keeps the cached prefix: byte-identical bodies across processes, and a wake
that changes only what comes after the last cache marker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cache_render_turn import bodies, requests

SCRIPT = Path(__file__).with_name("cache_render_turn.py")
NOTE_TOOLS = ["add_note", "list_notes", "delete_note"]


def run_once() -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=SCRIPT.parent,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return report


def test_the_same_state_renders_byte_identical_bodies_in_two_processes() -> None:
    first, second = run_once(), run_once()
    assert first == second
    assert set(first) == {"anthropic", "openai", "dashscope"} and len(first["anthropic"]) == 4


def _clean(value: Any) -> Any:
    """The prompt content: cache markers are not part of it."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _until_last_marker(body: dict[str, Any]) -> tuple[Any, Any, list[Any]]:
    """Tools, system and the messages up to (and with) the last marked block."""
    messages = body["messages"]
    at = max(i for i, m in enumerate(messages) if any("cache_control" in b for b in m["content"]))
    last = messages[at]["content"]
    cut = max(i for i, b in enumerate(last) if "cache_control" in b)
    head = [*messages[:at], {**messages[at], "content": last[: cut + 1]}]
    return _clean(body["tools"]), _clean(body["system"]), _clean(head)


async def test_waking_a_plugin_changes_only_what_follows_the_last_anthropic_marker() -> None:
    before, woken = bodies(await requests())["anthropic"][1:3]  # turn 2: asleep, then woken
    tools, system, head = _until_last_marker(before)
    assert _clean(woken["tools"]) == tools  # every note tool is there, deferred, both times
    assert _clean(woken["system"]) == system
    assert _clean(woken["messages"])[: len(head) - 1] == head[:-1]
    opened = _clean(woken["messages"][len(head) - 1]["content"])
    assert opened[: len(head[-1]["content"])] == head[-1]["content"]
    deferred = [t["name"] for t in woken["tools"] if t.get("defer_loading")]
    assert set(NOTE_TOOLS) <= set(deferred)
    # the wake's answer loads the note tools; the awake block closes the request
    result = next(
        b for m in woken["messages"] for b in m["content"] if b.get("type") == "tool_result"
    )
    refs = [c["tool_name"] for c in result["content"] if c.get("type") == "tool_reference"]
    assert sorted(refs) == sorted(NOTE_TOOLS)
    tail = woken["messages"][-1]["content"][-1]["text"]
    assert tail.startswith('<plugin_status module_name="note" state="active" rounds_left="3">')
    assert "NOTES-COUNT=0" in tail and "Keep titles short." not in tail  # the block is above
    assert 'state="active"' not in json.dumps(woken["system"])


async def test_the_loop_still_shows_the_whole_block_in_the_system_message() -> None:
    woken = (await requests())[2]
    system = woken.messages[0].get_text_content() or ""
    assert '<plugin name="Note plugin" module_name="note" state="active"' in system
    assert "Keep titles short." in system and woken.volatile_prompt in system
    assert woken.volatile_tail is not None and "<plugin_status" in woken.volatile_tail


def _chat_parts(body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """Tools and messages of a chat-completions body (DashScope's too), markers left out."""
    messages = body["input"]["messages"] if "input" in body else body["messages"]
    tools = body["parameters"]["tools"] if "parameters" in body else body["tools"]
    return _clean(tools), _clean(messages)


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


@pytest.mark.parametrize("provider", ["openai", "dashscope"])
async def test_a_wake_only_appends_to_a_chat_completions_request(provider: str) -> None:
    before, woken, used = bodies(await requests())[provider][1:4]
    tools, messages = _chat_parts(before)
    woken_tools, woken_messages = _chat_parts(woken)
    assert woken_tools == tools  # the tools array is byte-identical across the wake
    sent = [t["function"]["name"] for t in tools]
    assert "call_plugin_tool" in sent and not set(NOTE_TOOLS) & set(sent)
    # everything before is kept but the volatile text closing the last message
    assert woken_messages[: len(messages) - 1] == messages[:-1]
    assert _text(messages[-1]).startswith(_text(woken_messages[len(messages) - 1]))
    answer = next(m for m in woken_messages if m["role"] == "tool")
    for name in NOTE_TOOLS:  # the wake's answer defines the woken tools
        assert f'{{"name":"{name}"' in _text(answer)
    _, used_messages = _chat_parts(used)
    assert used_messages[: len(woken_messages) - 1] == woken_messages[:-1]
    call = used_messages[len(woken_messages) - 1]["tool_calls"][0]["function"]
    assert call["name"] == "call_plugin_tool"
    assert json.loads(call["arguments"]) == {
        "name": "add_note",
        "arguments": {"title": "a", "content": "b"},
    }
    if provider == "openai":
        assert woken["extra_body"] == before["extra_body"]  # the same prompt_cache_key


async def test_claude_models_without_tool_search_get_the_append_only_order() -> None:
    from cache_render_turn import MODELS

    from tether.credential import AnthropicCredential
    from tether.model import AnthropicChatModel, PromptCache

    calls = await requests()
    older = AnthropicChatModel(AnthropicCredential(api_key="x"), "claude-3-5-haiku-latest")
    off = AnthropicChatModel(prompt_cache=PromptCache(defer_tools=False))
    for model in (older, off):
        before, woken = (model.build_params(r) for r in calls[1:3])
        assert not any(t.get("defer_loading") for t in woken["tools"])
        names = [t["name"] for t in before["tools"]]
        assert [t["name"] for t in woken["tools"]][: len(names)] == names
        assert "extra_headers" not in woken
    assert any(t.get("defer_loading") for t in MODELS["anthropic"].build_params(calls[2])["tools"])
