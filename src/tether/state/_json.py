"""The compact JSON form of a state (schema version 2), and its expansion on load.

Every model of the state is written without the fields that hold their default (a
discriminator `type` is always written: the unions need it to load). On top of that, a
message leaves out what its other blocks already say:

- a text, thinking, hint or data block whose id is `<msg id>.<position>` has no `id`;
- a message whose content is one such text block stores the text alone (`"content": "hi"`);
- a tool result has no `name` when the first call with its id has that name;
- a tool call has no `state` when it is `finished` and answered by a result in the message,
  or `pending` and not answered.

`expand_context` restores all of it from the raw JSON values before validation, so the
validated models are the same as the ones that were written.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from tether._ids import new_id
from tether.message import Msg, TextBlock, ToolCallBlock, ToolCallState, ToolResultBlock
from tether.message._msg import derived_block_id

__all__ = ["compact_context", "compact_model", "expand_context"]

_KEEP, _DEFAULT, _EMPTY = 0, 1, 2
"""How a field is written: always, unless it equals its default, unless it is empty."""
_Plan = tuple[tuple[str, int, Any, bool], ...]
_PLANS: dict[type[BaseModel], _Plan] = {}
_ID_BLOCKS = frozenset({"text", "thinking", "hint", "data"})
"""Block types whose id the model makes up (calls and results carry the provider's id)."""


def _plan(cls: type[BaseModel]) -> _Plan:
    """Per field: (name, how it is written, its default, whether it may hold models)."""
    plan = []
    for name, info in cls.model_fields.items():
        nested = _may_hold_models(info.annotation)
        if typing.get_origin(info.annotation) is typing.Literal:
            plan.append((name, _KEEP, None, nested))  # a discriminator: always written
        elif info.default is not PydanticUndefined:
            plan.append((name, _DEFAULT, info.default, nested))
        elif info.default_factory in (list, dict):
            plan.append((name, _EMPTY, None, nested))
        else:  # required, or made by a factory (ids, times): always written
            plan.append((name, _KEEP, None, nested))
    _PLANS[cls] = result = tuple(plan)
    return result


def _may_hold_models(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_may_hold_models(arg) for arg in typing.get_args(annotation))


def compact_model(model: BaseModel) -> dict[str, Any]:
    """`model` as JSON-ready values, without the fields that hold their default."""
    cls = type(model)
    plan = _PLANS.get(cls) or _plan(cls)
    values = model.__dict__
    out: dict[str, Any] = {}
    for name, how, default, nested in plan:
        value = values[name]
        if how == _DEFAULT:
            if value == default and type(value) is type(default):
                continue
        elif how == _EMPTY and not value:
            continue
        if nested:
            value = _nested(value)
        out[name] = value
    return out


def _nested(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return compact_model(value)
    if type(value) is list:
        return [compact_model(v) if isinstance(v, BaseModel) else v for v in value]
    return value


def compact_context(context: list[Msg]) -> list[dict[str, Any]]:
    """The messages in their compact JSON form."""
    return [compact_msg(msg) for msg in context]


def compact_msg(msg: Msg) -> dict[str, Any]:
    """One message in the compact JSON form (see the module docstring)."""
    out = compact_model(msg)
    blocks = msg.content
    if not blocks:
        return out
    call_names: dict[str, str] = {}
    answered: set[str] = set()
    for block in blocks:
        if type(block) is ToolCallBlock:
            call_names.setdefault(block.id, block.name)
        elif type(block) is ToolResultBlock:
            answered.add(block.id)
    content = out["content"]
    for i, (block, raw) in enumerate(zip(blocks, content, strict=True)):
        kind = type(block)
        if kind is ToolCallBlock:
            _compact_call_state(block, raw, block.id in answered)  # type: ignore[arg-type]
        elif kind is ToolResultBlock:
            if call_names.get(block.id) == block.name:  # type: ignore[union-attr]
                del raw["name"]
        elif raw.get("id") == derived_block_id(msg.id, i):
            del raw["id"]
    if len(content) == 1 and type(blocks[0]) is TextBlock and "id" not in content[0]:
        if content[0].keys() == {"type", "text"}:
            out["content"] = blocks[0].text
    return out


def _compact_call_state(call: ToolCallBlock, raw: dict[str, Any], answered: bool) -> None:
    if answered and call.state == ToolCallState.FINISHED:
        raw.pop("state", None)
    elif answered and call.state == ToolCallState.PENDING:
        raw["state"] = ToolCallState.PENDING.value
    # else: `pending` unanswered is the default (already left out), any other is written


def expand_context(raw: Any) -> Any:
    """Raw message values of a state's JSON with what `compact_msg` left out put back."""
    if type(raw) is not list:
        return raw
    return [_expand_msg(m) if type(m) is dict else m for m in raw]


def _expand_msg(msg: dict[str, Any]) -> dict[str, Any]:
    content = msg.get("content")
    if type(content) is not list or not content:
        return msg
    msg_id = msg.get("id")
    if msg_id is None:
        msg = {**msg, "id": new_id()}
        msg_id = msg["id"]
    call_names: dict[str, Any] = {}
    answered: set[str] = set()
    for block in content:
        if type(block) is dict and type(block_id := block.get("id")) is str:
            kind = block.get("type")
            if kind == "tool_call":
                call_names.setdefault(block_id, block.get("name"))
            elif kind == "tool_result":
                answered.add(block_id)
    expanded = [
        _expand_block(block, i, msg_id, call_names, answered) if type(block) is dict else block
        for i, block in enumerate(content)
    ]
    return {**msg, "content": expanded}


def _expand_block(
    block: dict[str, Any], i: int, msg_id: Any, call_names: dict[str, Any], answered: set[str]
) -> dict[str, Any]:
    kind = block.get("type")
    if kind in _ID_BLOCKS:
        if "id" not in block and type(msg_id) is str:
            return {**block, "id": derived_block_id(msg_id, i)}
    elif kind == "tool_call":
        if "state" not in block:
            done = block.get("id") in answered if type(block.get("id")) is str else False
            return {**block, "state": "finished" if done else "pending"}
    elif kind == "tool_result" and "name" not in block:
        block_id = block.get("id")
        name = call_names.get(block_id) if type(block_id) is str else None
        if name is not None:
            return {**block, "name": name}
    return block
