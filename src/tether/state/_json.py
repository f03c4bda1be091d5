"""The compact JSON form of a state (schema version 2), and its expansion on load.

Every model of the state is written without the fields that hold their default; a
discriminator `type` is always written (the unions need it to load: its default factory
takes the data, so `exclude_defaults` never compares it). On top of that, a message
leaves out what its other blocks already say:

- a text, thinking, hint or data block whose id is `<msg id>.<position>` has no `id`;
- a message whose content is one such text block stores the text alone (`"content": "hi"`);
- a tool result has no `name` when the first call with its id has that name;
- a tool call has no `state` when it is `finished` and answered by a result in the message,
  or `pending` and not answered.

A message is written by its compiled serialiser in one call (`exclude_defaults`, plus an
`exclude` of the derivable fields); `expand_context` restores what was left out from the
raw JSON values before validation, so the validated models equal the ones written.
"""

from __future__ import annotations

import enum
import functools
import weakref
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaSerializer, from_json, to_json

from tether._ids import derived_block_id, new_id
from tether.message import (
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
)

__all__ = ["compact_context", "compact_model", "context_json", "expand_context"]

_ID_BLOCKS = frozenset({"text", "thinking", "hint", "data"})
"""Block types whose id tether makes up (calls and results carry the provider's id)."""
# Exclude sets for the serialiser (sets, as its signature asks; never changed).
_ID: set[str] = {"id"}
_NAME: set[str] = {"name"}
_STATE: set[str] = {"state"}
_NO_CONTENT: set[str] = {"content"}
_FINISHED, _PENDING = ToolCallState.FINISHED, ToolCallState.PENDING


@functools.cache
def _msg_serializer() -> SchemaSerializer:
    """The compiled serialiser of `Msg` (built on first use, not at import)."""
    Msg.model_rebuild()  # deferred until now; afterwards the class holds the real one
    return Msg.__pydantic_serializer__


def compact_model(model: BaseModel) -> dict[str, Any]:
    """A model of the head (cursor, usage, permissions) as JSON values, defaults left out."""
    out: dict[str, Any] = model.__pydantic_serializer__.to_python(
        model, mode="json", exclude_defaults=True
    )
    return out


def context_json(context: list[Msg]) -> bytes:
    """The messages as a compact JSON array."""
    return b"[" + b",".join([message_json(msg) for msg in context]) + b"]"


def compact_context(context: list[Msg]) -> list[Any]:
    """The messages in their compact form as JSON values (what `context_json` writes)."""
    return [from_json(message_json(msg)) for msg in context]


def message_json(msg: Msg) -> bytes:
    """One message in the compact JSON form (see the module docstring).

    A message that did not change since it was last written is not serialised again: its
    JSON is kept with a snapshot of its values (by identity and equality), taken only of
    messages whose containers are all empty or immutable, so any change shows (see
    `_snapshot`).
    """
    snapshot = _snapshot(msg)
    if snapshot is None:
        return _message_json(msg)
    key = id(msg)
    entry = _MEMO.get(key)
    if entry is not None and entry[0]() is msg and entry[1] == snapshot:
        return entry[2]
    body = _message_json(msg)
    if len(_MEMO) >= _MEMO_SIZE:
        _MEMO.clear()
    _MEMO[key] = (weakref.ref(msg), snapshot, body)
    return body


_MEMO: dict[int, tuple[weakref.ref[Msg], tuple[Any, ...], bytes]] = {}
"""id(msg) → (the message, the snapshot its JSON was written from, that JSON)."""
_MEMO_SIZE = 8192
"""Messages remembered at most (then the memo starts again): bounds its memory."""
_ATOMS = frozenset({str, int, float, bool, type(None), ToolCallState, ToolResultState})


def _snapshot(msg: Msg) -> tuple[Any, ...] | None:
    """What the message's JSON is written from, or None if that can change unseen.

    Values are compared by identity, then equality. A list or dict can change in place,
    so only empty ones are allowed (one that fills up makes the next snapshot None);
    nested models are taken apart the same way.
    """
    head = _values(msg, "content")
    if head is None:
        return None
    parts: list[Any] = [head]
    for block in msg.content:
        values = _values(block, None)
        if values is None:
            return None
        parts.append(block)
        parts.append(values)
    return tuple(parts)


def _values(model: BaseModel, skip: str | None) -> tuple[Any, ...] | None:
    values: list[Any] = []
    for name, value in model.__dict__.items():
        kind = type(value)
        if kind in _ATOMS or name == skip:
            values.append(value)
        elif kind is dict or kind is list:
            if value:
                return None
            values.append(value)
        elif isinstance(value, BaseModel):
            inner = _values(value, None)
            if inner is None:
                return None
            values.append(value)
            values.append(inner)
        elif isinstance(value, enum.Enum):
            values.append(value)
        else:
            return None
    return tuple(values)


def _message_json(msg: Msg) -> bytes:
    serializer = _msg_serializer()
    blocks = msg.content
    if not blocks:
        return serializer.to_json(msg, exclude_defaults=True)
    exclude = _derivable(msg, blocks)
    if exclude is None:  # an answered call still `pending`: its state must be written
        return _with_pending_states(serializer, msg)
    if len(blocks) == 1 and 0 in exclude and type(blocks[0]) is TextBlock:
        head = serializer.to_json(msg, exclude_defaults=True, exclude=_NO_CONTENT)
        return head[:-1] + b',"content":' + to_json(blocks[0].text) + b"}"
    if not exclude:
        return serializer.to_json(msg, exclude_defaults=True)
    return serializer.to_json(msg, exclude_defaults=True, exclude={"content": exclude})


def _derivable(msg: Msg, blocks: list[Any]) -> dict[int, set[str]] | None:
    """Per block position, the fields a reader can work out (None: see `message_json`)."""
    call_names: dict[str, str] = {}
    answered: set[str] = set()
    for block in blocks:
        kind = type(block)
        if kind is ToolCallBlock:
            call_names.setdefault(block.id, block.name)
        elif kind is ToolResultBlock:
            answered.add(block.id)
    exclude: dict[int, set[str]] = {}
    msg_id = msg.id
    for i, block in enumerate(blocks):
        kind = type(block)
        if kind is ToolCallBlock:
            if block.id in answered:
                if block.state == _FINISHED:
                    exclude[i] = _STATE
                elif block.state == _PENDING:
                    return None
        elif kind is ToolResultBlock:
            if call_names.get(block.id) == block.name:
                exclude[i] = _NAME
        elif block.id == derived_block_id(msg_id, i):
            exclude[i] = _ID
    return exclude


def _with_pending_states(serializer: SchemaSerializer, msg: Msg) -> bytes:
    """The rare message with an answered call still `pending`: built as values."""
    raw: dict[str, Any] = serializer.to_python(msg, mode="json", exclude_defaults=True)
    answered = {b.id for b in msg.content if type(b) is ToolResultBlock}
    names: dict[str, str] = {}
    for block in msg.content:
        if type(block) is ToolCallBlock:
            names.setdefault(block.id, block.name)
    for i, (block, out) in enumerate(zip(msg.content, raw["content"], strict=True)):
        if isinstance(block, ToolCallBlock):
            if block.id in answered and block.state == _FINISHED:
                del out["state"]
            elif block.id in answered and block.state == _PENDING:
                out["state"] = _PENDING.value
        elif isinstance(block, ToolResultBlock):
            if names.get(block.id) == block.name:
                del out["name"]
        elif out.get("id") == derived_block_id(msg.id, i):
            del out["id"]
    return to_json(raw)


def expand_context(raw: Any, *, fresh: bool = False) -> Any:
    """Raw message values of a state's JSON with what `message_json` left out put back.

    `fresh` values come straight from a JSON parser and are changed in place; others (a
    caller's dicts) are copied where something is put back.
    """
    if type(raw) is not list:
        return raw
    if fresh:
        for msg in raw:
            if type(msg) is dict and type(content := msg.get("content")) is list and content:
                _expand_content(msg, content, content)
        return raw
    out = []
    for msg in raw:
        if type(msg) is dict and type(content := msg.get("content")) is list and content:
            msg = {**msg}
            msg["content"] = expanded = list(content)
            _expand_content(msg, content, expanded, copy=True)
        out.append(msg)
    return out


def _expand_content(
    msg: dict[str, Any], content: list[Any], out: list[Any], *, copy: bool = False
) -> None:
    """Fill `out` (`content` itself, or a copy of it) with the expanded blocks."""
    msg_id = msg.get("id")
    if msg_id is None:
        msg["id"] = msg_id = new_id()
    call_names: dict[str, Any] = {}
    answered: set[str] = set()
    calls: list[int] = []  # calls without a state, results without a name: fixed at the end
    results: list[int] = []
    for i, block in enumerate(content):
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "tool_call":
            if type(block_id := block.get("id")) is str:
                call_names.setdefault(block_id, block.get("name"))
            if "state" not in block:
                calls.append(i)
        elif kind == "tool_result":
            if type(block_id := block.get("id")) is str:
                answered.add(block_id)
                if "name" not in block:
                    results.append(i)
        elif "id" not in block and kind in _ID_BLOCKS and type(msg_id) is str:
            out[i] = block = {**block} if copy else block
            block["id"] = derived_block_id(msg_id, i)
    for i in calls:
        out[i] = block = {**content[i]} if copy else content[i]
        block_id = block.get("id")
        block["state"] = "finished" if type(block_id) is str and block_id in answered else "pending"
    for i in results:
        name = call_names.get(content[i]["id"])
        if name is not None:
            out[i] = block = {**content[i]} if copy else content[i]
            block["name"] = name
