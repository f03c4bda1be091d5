"""Tether turns as Anthropic Messages API parameters."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from tether.message import (
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from tether.model._types import ChatRequest, NamedToolChoice
from tether.model.providers._names import ANTHROPIC_NAMES, ToolNames
from tether.model.providers._turns import OPENING_TEXT, Turn, parse_arguments, tool_result_text
from tether.tool import TOOL_REFERENCES_KEY

__all__ = [
    "MAX_BREAKPOINTS",
    "TOOL_SEARCH_BETA",
    "add_cache_breakpoints",
    "append_volatile",
    "format_anthropic_messages",
    "format_anthropic_tool_choice",
    "format_anthropic_tools",
]


def _image(block: DataBlock) -> dict[str, Any]:
    source = block.source
    if source.type == "url":
        return {"type": "image", "source": {"type": "url", "url": source.url}}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": source.media_type, "data": source.data},
    }


def _user_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in turn.blocks:
        if isinstance(block, TextBlock) and block.text:
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, HintBlock) and block.hint:
            blocks.append({"type": "text", "text": block.hint})
        elif isinstance(block, DataBlock):
            blocks.append(_image(block))
    return blocks


def _assistant_blocks(turn: Turn, names: ToolNames) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in turn.blocks:
        if isinstance(block, ThinkingBlock):
            # Anthropic verifies thinking by its signature; unsigned thinking (from another
            # provider) cannot be sent back as thinking.
            if block.redacted and block.signature:
                blocks.append({"type": "redacted_thinking", "data": block.signature})
            elif block.signature:
                blocks.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                )
        elif isinstance(block, TextBlock) and block.text:
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCallBlock):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": names.call_id(block.id),
                    "name": names.name(block.name),
                    "input": parse_arguments(block.input),
                }
            )
    return blocks


def _references(
    result: ToolResultBlock, names: ToolNames, deferred: Set[str]
) -> list[dict[str, Any]]:
    """`tool_reference` blocks for the deferred tools the result makes callable."""
    wanted = result.metadata.get(TOOL_REFERENCES_KEY) or () if result.metadata else ()
    return [{"type": "tool_reference", "tool_name": names.name(n)} for n in wanted if n in deferred]


def _tool_result(
    result: ToolResultBlock, names: ToolNames, deferred: Set[str] = frozenset()
) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    references = _references(result, names, deferred) if deferred else []
    if isinstance(result.output, str) and references:
        content = [{"type": "text", "text": tool_result_text(result)}, *references]
    elif isinstance(result.output, str):
        content = tool_result_text(result)
    else:
        content = [
            {"type": "text", "text": b.text} if isinstance(b, TextBlock) else _image(b)
            for b in result.output
            if not isinstance(b, TextBlock) or b.text
        ]
    return {
        "type": "tool_result",
        "tool_use_id": names.call_id(result.id),
        "content": content,
        "is_error": result.state is not ToolResultState.SUCCESS,
    }


def format_anthropic_messages(
    turns: list[Turn], names: ToolNames | None = None, deferred: Set[str] = frozenset()
) -> tuple[str | None, list[dict[str, Any]]]:
    """The `system` text and the alternating user/assistant `messages`.

    `deferred`: tools sent with `defer_loading`; a result that makes some of them callable
    (a plugin's wake) references them, which loads their definitions there.
    """
    names = names or ToolNames(ANTHROPIC_NAMES)
    system = "\n\n".join(t.text() for t in turns if t.role == "system") or None
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "system":
            continue
        if turn.role == "assistant":
            role, blocks = "assistant", _assistant_blocks(turn, names)
        elif turn.role == "tool":
            role, blocks = "user", [_tool_result(r, names, deferred) for r in turn.results]
        else:
            role, blocks = "user", _user_blocks(turn)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)  # the API wants roles to alternate
        else:
            messages.append({"role": role, "content": blocks})
    if messages and messages[0]["role"] != "user":  # the API rejects any other opening
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING_TEXT}]})
    return system, messages


def format_anthropic_tools(
    request: ChatRequest,
    names: ToolNames | None = None,
    tools: list[dict[str, Any]] | None = None,
    deferred: Set[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Tools in the Messages API shape.

    `tools`: instead of the request's own; `deferred`: names sent with `defer_loading`,
    loaded only where a tool result references them.
    """
    names = names or ToolNames(ANTHROPIC_NAMES)
    formatted = []
    for t in request.tools if tools is None else tools:
        tool = {
            "name": names.name(t["name"]),
            "description": t.get("description", ""),
            "input_schema": t.get("parameters") or {"type": "object", "properties": {}},
        }
        if t["name"] in deferred:
            tool["defer_loading"] = True
        formatted.append(tool)
    return formatted


def format_anthropic_tool_choice(choice: Any, names: ToolNames | None = None) -> dict[str, Any]:
    """`auto` / `none` / `any` / a named tool."""
    if isinstance(choice, NamedToolChoice):
        return {"type": "tool", "name": (names or ToolNames(ANTHROPIC_NAMES)).name(choice.name)}
    return {"type": {"required": "any"}.get(str(choice), str(choice))}


TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"
"""The beta that lets a request defer tool definitions (`defer_loading`) and load them
with `tool_reference` blocks (Anthropic's tool search; custom search returns them from a
tool of one's own)."""

MAX_BREAKPOINTS = 4
"""The most `cache_control` markers the Messages API accepts in one request."""

_UNMARKABLE = ("thinking", "redacted_thinking")


def _last_markable(message: dict[str, Any]) -> dict[str, Any] | None:
    for block in reversed(message["content"]):
        if block.get("type") not in _UNMARKABLE:
            return block  # type: ignore[no-any-return]  # a block dict we built
    return None


def add_cache_breakpoints(params: dict[str, Any], control: dict[str, str]) -> int:
    """Mark the end of the tools, of the system prompt and of the last two user turns.

    The API caches the prefix up to each marker (tools → system → messages), and looks for
    an earlier cached prefix up to 20 blocks back from each. The marker on the previous
    user turn keeps a step that adds many blocks at once (parallel tool results) cached.
    Returns how many markers were placed (never more than `MAX_BREAKPOINTS`).
    """
    placed = 0
    loaded = [t for t in params.get("tools", ()) if not t.get("defer_loading")]
    if loaded:  # deferred definitions are not part of the prefix
        loaded[-1]["cache_control"] = control
        placed += 1
    system = params.get("system")
    if system:
        params["system"] = [{"type": "text", "text": system, "cache_control": control}]
        placed += 1
    users = [m for m in params["messages"] if m["role"] == "user"]
    for message in reversed(users[-2:]):
        block = _last_markable(message)
        if block is not None and placed < MAX_BREAKPOINTS:
            block["cache_control"] = control
            placed += 1
    return placed


def append_volatile(messages: list[dict[str, Any]], text: str) -> None:
    """Send `text` last: a block closing the final user turn (or a user turn of its own)."""
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(block)
    else:
        messages.append({"role": "user", "content": [block]})
