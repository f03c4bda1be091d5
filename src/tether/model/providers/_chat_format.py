"""The chat-completions message format, shared by OpenAI-compatible APIs and DashScope."""

from __future__ import annotations

import json
from typing import Any, Literal

from tether.message import DataBlock, HintBlock, TextBlock, ThinkingBlock, ToolCallBlock
from tether.model._types import ChatRequest, NamedToolChoice
from tether.model.providers._cache import split_system
from tether.model.providers._names import CHAT_NAMES, ToolNames
from tether.model.providers._tool_proxy import (
    PROXY_TOOL,
    ToolProxy,
    proxy_arguments,
    with_definitions,
)
from tether.model.providers._turns import (
    Turn,
    data_url,
    tool_result_data,
    tool_result_text,
)

__all__ = [
    "ReasoningPolicy",
    "append_chat_volatile",
    "format_chat_messages",
    "format_chat_tools",
    "format_tool_choice",
    "mark_chat_message",
    "split_chat_system",
]

ReasoningPolicy = Literal["auto", "always", "never"]
"""When to send `reasoning_content` back: with tool-call steps (`auto`), always, never."""

ImageStyle = Literal["openai", "dashscope"]


def _image_part(block: DataBlock, style: ImageStyle) -> dict[str, Any]:
    if style == "dashscope":
        return {"type": "image", "url": data_url(block)}
    return {"type": "image_url", "image_url": {"url": data_url(block)}}


def _user_content(turn: Turn, style: ImageStyle) -> str | list[dict[str, Any]]:
    if not any(isinstance(b, DataBlock) for b in turn.blocks):
        return turn.text()
    parts: list[dict[str, Any]] = []
    for block in turn.blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, HintBlock):
            parts.append({"type": "text", "text": block.hint})
        elif isinstance(block, DataBlock):
            parts.append(_image_part(block, style))
    return parts


def _arguments(text: str) -> str:
    """The call's arguments if they are a JSON object, else `{}`.

    A call whose arguments were cut or garbled got an error result the model reads; the
    text itself cannot go back: DashScope (and strict OpenAI-compatible servers) reject
    the whole request when `function.arguments` is not JSON.
    """
    try:
        value = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return "{}"
    return text if isinstance(value, dict) else "{}"


def _function(call: ToolCallBlock, names: ToolNames, proxy: ToolProxy | None) -> dict[str, Any]:
    if proxy is not None and call.name in proxy.names:
        return {"name": PROXY_TOOL, "arguments": proxy_arguments(call.name, call.input)}
    return {"name": names.name(call.name), "arguments": _arguments(call.input)}


def _assistant(
    turn: Turn, reasoning: ReasoningPolicy, names: ToolNames, proxy: ToolProxy | None
) -> dict[str, Any]:
    text = "".join(b.text for b in turn.blocks if isinstance(b, TextBlock))
    calls = [b for b in turn.blocks if isinstance(b, ToolCallBlock)]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": names.call_id(c.id), "type": "function", "function": _function(c, names, proxy)}
            for c in calls
        ]
    thinking = "".join(b.thinking for b in turn.blocks if isinstance(b, ThinkingBlock))
    if thinking and (reasoning == "always" or (reasoning == "auto" and calls)):
        message["reasoning_content"] = thinking
    if message["content"] is None and not calls:
        message["content"] = ""
    return message


def _tool_messages(
    turn: Turn, style: ImageStyle, with_name: bool, names: ToolNames, proxy: ToolProxy | None
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for result in turn.results:
        text = tool_result_text(result)
        message: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": names.call_id(result.id),
            "content": text if proxy is None else with_definitions(result, text, proxy),
        }
        if with_name:
            proxied = proxy is not None and result.name in proxy.names
            message["name"] = PROXY_TOOL if proxied else names.name(result.name)
        messages.append(message)
        data = tool_result_data(result)
        if data:
            images.append(
                {"type": "text", "text": f"Images returned by `{result.name}` ({result.id}):"}
            )
            images.extend(_image_part(b, style) for b in data)
    if images:
        # Tool messages carry text only; images follow in a user message.
        messages.append({"role": "user", "content": images})
    return messages


def format_chat_messages(
    turns: list[Turn],
    *,
    reasoning: ReasoningPolicy = "auto",
    image_style: ImageStyle = "openai",
    tool_name: bool = False,
    names: ToolNames | None = None,
    proxy: ToolProxy | None = None,
) -> list[dict[str, Any]]:
    """Chat-completions messages for `turns` (tool names and call ids made safe by `names`).

    `proxy`: calls of the proxied tools go through `PROXY_TOOL`, and the results that load
    them carry their definitions.
    """
    names = names or ToolNames(CHAT_NAMES)
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "system":
            messages.append({"role": "system", "content": turn.text()})
        elif turn.role == "user":
            messages.append({"role": "user", "content": _user_content(turn, image_style)})
        elif turn.role == "assistant":
            messages.append(_assistant(turn, reasoning, names, proxy))
        else:
            messages.extend(_tool_messages(turn, image_style, tool_name, names, proxy))
    return messages


def format_chat_tools(
    request: ChatRequest,
    names: ToolNames | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Function tools in the chat-completions shape (`tools`: instead of the request's own)."""
    names = names or ToolNames(CHAT_NAMES)
    return [
        {
            "type": "function",
            "function": {
                "name": names.name(t["name"]),
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in (request.tools if tools is None else tools)
    ]


def format_tool_choice(choice: Any, names: ToolNames | None = None) -> str | dict[str, Any]:
    """`auto`/`none`/`required`, or the named-function form."""
    if isinstance(choice, NamedToolChoice):
        name = (names or ToolNames(CHAT_NAMES)).name(choice.name)
        return {"type": "function", "function": {"name": name}}
    return str(choice)


def split_chat_system(
    messages: list[dict[str, Any]], volatile: str, tail: str | None = None
) -> str:
    """Take `volatile` out of the leading system message; return what to send last (or "").

    That is `tail` when given (the short form of `volatile`), else `volatile` itself.
    """
    if not volatile or not messages or messages[0]["role"] != "system":
        return ""
    content = messages[0]["content"]
    if not isinstance(content, str):
        return ""
    stable, moved = split_system(content, volatile, tail)
    if stable != content:
        messages[0]["content"] = stable or ""
    return moved


def append_chat_volatile(messages: list[dict[str, Any]], text: str) -> None:
    """Send `text` last: closing the final user message, or as a user message of its own."""
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "user":
        content = last["content"]
        if isinstance(content, str):
            last["content"] = f"{content}\n\n{text}" if content else text
        else:
            content.append({"type": "text", "text": text})
        return
    messages.append({"role": "user", "content": text})


def mark_chat_message(message: dict[str, Any], control: dict[str, str]) -> None:
    """Put an explicit cache marker on the last part of `message` (text becomes a part list)."""
    content = message.get("content")
    if isinstance(content, str) and content:
        message["content"] = [{"type": "text", "text": content, "cache_control": control}]
    elif isinstance(content, list) and content:
        content[-1]["cache_control"] = control
