"""Tether turns as `google-genai` contents and config.

Thought signatures: a call's signature lives in `ToolCallBlock.metadata["thought_signature"]`
and goes back on its `functionCall` part. A `ThinkingBlock.signature` goes back on the
part that follows it in the step (the one before it, if it is last). Both are stored as
standard base64 text and handed to the SDK as bytes.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from tether.message import (
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultState,
)
from tether.model._types import ChatRequest, NamedToolChoice
from tether.model.providers._names import GEMINI_NAMES, ToolNames
from tether.model.providers._turns import (
    OPENING_TEXT,
    Turn,
    parse_arguments,
    tool_result_data,
    tool_result_text,
)

__all__ = ["SIGNATURE_KEY", "decode_signature", "encode_signature", "format_gemini"]

SIGNATURE_KEY = "thought_signature"


def encode_signature(raw: bytes) -> str:
    """Signature bytes as the text tether stores."""
    return base64.b64encode(raw).decode("ascii")


def decode_signature(text: str) -> bytes | None:
    """Stored signature text back to bytes (standard or URL-safe base64)."""
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _data_part(types: Any, block: DataBlock) -> Any:
    source = block.source
    if source.type == "url":
        return types.Part(
            file_data=types.FileData(file_uri=source.url, mime_type=source.media_type)
        )
    return types.Part(
        inline_data=types.Blob(mime_type=source.media_type, data=base64.b64decode(source.data))
    )


def _user_parts(types: Any, turn: Turn) -> list[Any]:
    parts: list[Any] = []
    for block in turn.blocks:
        if isinstance(block, TextBlock):
            parts.append(types.Part(text=block.text))
        elif isinstance(block, HintBlock):
            parts.append(types.Part(text=block.hint))
        elif isinstance(block, DataBlock):
            parts.append(_data_part(types, block))
    return parts


def _model_parts(types: Any, turn: Turn, names: ToolNames) -> list[Any]:
    parts: list[Any] = []
    pending: bytes | None = None
    for block in turn.blocks:
        if isinstance(block, ThinkingBlock):
            if block.signature and not block.redacted:  # a redacted block is Anthropic's
                pending = decode_signature(block.signature)
            continue
        if isinstance(block, TextBlock):
            part = types.Part(text=block.text)
        elif isinstance(block, ToolCallBlock):
            call = types.FunctionCall(
                id=block.id, name=names.name(block.name), args=parse_arguments(block.input)
            )
            part = types.Part(function_call=call)
            own = block.metadata.get(SIGNATURE_KEY)
            if isinstance(own, str):
                part.thought_signature = decode_signature(own)
        else:
            continue
        if pending is not None and part.thought_signature is None:
            part.thought_signature, pending = pending, None
        parts.append(part)
    if pending is not None and parts and parts[-1].thought_signature is None:
        parts[-1].thought_signature = pending
    return parts


def _result_parts(types: Any, turn: Turn, names: ToolNames) -> list[Any]:
    parts: list[Any] = []
    for result in turn.results:
        key = "error" if result.state is ToolResultState.ERROR else "output"
        response = types.FunctionResponse(
            id=result.id, name=names.name(result.name), response={key: tool_result_text(result)}
        )
        parts.append(types.Part(function_response=response))
        parts.extend(_data_part(types, b) for b in tool_result_data(result))
    return parts


def format_gemini(
    turns: list[Turn], names: ToolNames | None = None
) -> tuple[str | None, list[Any]]:
    """The system instruction and the `Content` list for `turns`."""
    from google.genai import types

    names = names or ToolNames(GEMINI_NAMES)
    system = "\n\n".join(t.text() for t in turns if t.role == "system") or None
    contents: list[Any] = []
    for turn in turns:
        if turn.role == "system":
            continue
        if turn.role == "assistant":
            role, parts = "model", _model_parts(types, turn, names)
        elif turn.role == "tool":
            role, parts = "user", _result_parts(types, turn, names)
        else:
            role, parts = "user", _user_parts(types, turn)
        if not parts:
            continue
        if contents and contents[-1].role == role:
            contents[-1].parts.extend(parts)
        else:
            contents.append(types.Content(role=role, parts=parts))
    if contents and contents[0].role != "user":  # the API rejects any other opening
        contents.insert(0, types.Content(role="user", parts=[types.Part(text=OPENING_TEXT)]))
    return system, contents


def format_gemini_tools(
    request: ChatRequest,
    names: ToolNames | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> tuple[list[Any], Any]:
    """The function declarations and the tool config (`tools`: instead of the request's)."""
    from google.genai import types

    names = names or ToolNames(GEMINI_NAMES)
    declarations = [
        types.FunctionDeclaration(
            name=names.name(t["name"]),
            description=t.get("description", ""),
            parameters_json_schema=t.get("parameters") or {"type": "object", "properties": {}},
        )
        for t in (request.tools if tools is None else tools)
    ]
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        allowed = [names.name(choice.name)]
        config = types.FunctionCallingConfig(mode="ANY", allowed_function_names=allowed)
    else:
        mode = {"auto": "AUTO", "none": "NONE", "required": "ANY"}[str(choice)]
        config = types.FunctionCallingConfig(mode=mode)
    return [types.Tool(function_declarations=declarations)], types.ToolConfig(
        function_calling_config=config
    )
