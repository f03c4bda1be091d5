"""A sampling request's conversation as tether messages, and the model's tool calls back.

MCP (2025-11-25) lets a server offer tools in `sampling/createMessage`: the assistant's
turns may hold `tool_use` parts and the user's turns the matching `tool_result` parts.
tether keeps a call's result in the assistant message right after the call, so each
`tool_result` joins the assistant message that made the call.
"""

from __future__ import annotations

import json
from typing import Any

from tether.mcp._requests import SamplingRequest
from tether.message import (
    AssistantMsg,
    Msg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)

__all__ = ["to_messages", "tool_calls_of", "tool_schemas"]


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    parts = content if isinstance(content, list) else [content]
    return [p for p in parts if isinstance(p, dict)]


def _result_text(part: dict[str, Any]) -> str:
    return "\n".join(str(c.get("text", "")) for c in _parts(part) if c.get("type") == "text")


def to_messages(request: SamplingRequest) -> list[Msg]:
    """The system prompt and the conversation of `request`, as tether messages."""
    messages: list[Msg] = [SystemMsg("system", request.system_prompt or "")]
    names: dict[str, str] = {}  # tool_use id -> tool name
    for message in request.messages:
        parts = _parts(message)
        text = "\n".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
        if message.get("role") == "assistant":
            blocks: list[Any] = [TextBlock(text=text)] if text else []
            for part in (p for p in parts if p.get("type") == "tool_use"):
                names[str(part.get("id"))] = str(part.get("name"))
                arguments = json.dumps(part.get("input") or {})
                blocks.append(
                    ToolCallBlock(
                        id=str(part.get("id")), name=str(part.get("name")), input=arguments
                    )
                )
            messages.append(AssistantMsg(request.server, blocks or text))
            continue
        results = [p for p in parts if p.get("type") == "tool_result"]
        last = messages[-1]
        for part in results:
            call_id = str(part.get("toolUseId", part.get("tool_use_id", "")))
            if isinstance(last, AssistantMsg) and call_id in names:
                last.content.append(
                    ToolResultBlock(id=call_id, name=names[call_id], output=_result_text(part))
                )
        if text or not results:
            messages.append(UserMsg(request.server, text))
    return messages


def tool_schemas(request: SamplingRequest) -> list[dict[str, Any]]:
    """The tools the server offers, as a `ChatRequest`'s tool schemas."""
    return [
        {
            "name": str(tool.get("name")),
            "description": str(tool.get("description") or ""),
            "parameters": tool.get("inputSchema") or {"type": "object", "properties": {}},
        }
        for tool in request.tools
    ]


def tool_calls_of(content: list[Any]) -> list[dict[str, Any]]:
    """The model's tool calls as `{"id", "name", "input"}` (the input parsed from JSON)."""
    calls = []
    for block in content:
        if isinstance(block, ToolCallBlock):
            try:
                arguments = json.loads(block.input or "{}")
            except ValueError:
                arguments = {}
            calls.append({"id": block.id, "name": block.name, "input": arguments})
    return calls
