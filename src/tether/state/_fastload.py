"""The compiled reader of a state's JSON: one pydantic-core pass, then one light fix-up.

`AgentState`'s own schema validates a message through `Msg`'s before-validator, which
makes pydantic-core hand each message to Python as dicts (a copy of everything) before
validating it again. This reader is the same schema with the context's messages swapped
for a schema of the compact form itself (built once, from the models' own schemas): the
role picks the class, a text block may lack its id, a call may carry its `result` and an
object `input`, a result may lack its name. pydantic-core validates all of it in one pass
from the JSON; `_finish` then puts back, on the models, what the compact form left out
(as `tether.message._compact` does on dicts), in one Python call for the whole context.

Anything this reader refuses is read again by the checked path (which migrates older
versions and explains what is wrong), so it never has to explain; what it must never do is
accept what the checked path would refuse, or read anything differently.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import SchemaValidator, core_schema

from tether import _fast
from tether._fast import fields_of as _fields_of
from tether._fast import new_model, set_class, set_fields_set
from tether._ids import derived_block_id
from tether.message import (
    AssistantMsg,
    Msg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.state._light import shared_fields_set

__all__ = ["check_message_json", "fast_validator"]

_ENCODE = _fast.json_encoder()
"""`json.dumps(value, ensure_ascii=False)`: what `ToolCallBlock`'s `input` validator writes."""
_ID_KINDS = frozenset({"text", "thinking", "hint", "data"})
_FINISHED, _PENDING = ToolCallState.FINISHED, ToolCallState.PENDING


@functools.cache
def fast_validator(state_cls: type[Any]) -> SchemaValidator | None:
    """The compiled reader of `state_cls` (`AgentState`), built on first use.

    None if pydantic's schemas are not shaped as `tether._fast` assumes: then every state
    takes the checked path (`tether._fast.taken()` says so).
    """
    try:
        validator = _reader(state_cls)
    except (_fast.SchemaShapeError, KeyError, TypeError):
        validator = None
    _fast.reader_taken(validator is not None)
    return None if _fast.FORCE_FALLBACK else validator


def _reader(state_cls: type[Any]) -> SchemaValidator:
    schema = _fast.core_schema_of(state_cls)
    model = dict(schema["schema"])
    fields = _fields_of(model)
    context = dict(fields["context"])
    default = dict(context["schema"])  # {"type": "default", "schema": list[Msg], ...}
    msg = default["schema"]["items_schema"]["schema"]  # after(_as_role_class) → model(Msg)
    if msg.get("cls") is not Msg:
        raise _fast.SchemaShapeError("the context's items are not `Msg` model schemas")
    items = _message_union(msg, {d["ref"]: d for d in schema["definitions"]})
    default["schema"] = core_schema.no_info_after_validator_function(
        _finish, core_schema.list_schema(items)
    )
    context["schema"] = default
    fields["context"] = context
    model["schema"] = {**model["schema"], "fields": fields}
    if model["schema"].get("type") != "model-fields":
        raise _fast.SchemaShapeError("`AgentState`'s fields are wrapped by a validator")
    model["cls"] = _fast.shadow(state_cls)
    model.pop("ref", None)
    schema["schema"] = core_schema.no_info_after_validator_function(_fast.unshadow, model)
    return SchemaValidator(schema)


def check_message_json(body: bytes) -> None:
    """Raise `ValueError` (a `ValidationError`) unless `body` loads as a message.

    The same compiled reader as a state's messages take (one pydantic-core pass; the
    fix-up that follows it refuses nothing `message_json` writes), a quarter of what
    `TypeAdapter(Msg).validate_json` costs; the latter is used if the reader cannot be
    built. The message made is dropped.
    """
    reader = _message_reader()
    if reader is None:
        _MSG.validate_json(body)
    else:
        reader.validate_json(body)


@functools.cache
def _message_reader() -> SchemaValidator | None:
    try:
        schema = _fast.core_schema_of(Msg)
        msg = schema["schema"]
        while msg.get("type") != "model":  # the role-class validator wraps the model
            msg = msg["schema"]
        items = _message_union(msg, {d["ref"]: d for d in schema["definitions"]})
        reader = SchemaValidator(core_schema.definitions_schema(items, schema["definitions"]))
    except (_fast.SchemaShapeError, KeyError, TypeError):
        reader = None
    _fast.message_reader_taken(reader is not None)
    return None if _fast.FORCE_FALLBACK else reader


_MSG = TypeAdapter(Msg)


def _model(cls: type[Any], fields: Any, title: str) -> Any:
    kind = _CALL if cls is ToolCallBlock else _RESULT if cls is ToolResultBlock else _OTHER
    _PLANS[_fast.shadow(cls)] = (cls, shared_fields_set(cls), kind)
    return core_schema.model_schema(
        _fast.shadow(cls),
        core_schema.model_fields_schema(fields, model_name=title),
        config=core_schema.CoreConfig(extra_fields_behavior="forbid", title=title),
    )


def _optional(field: Any, inner: Any = None) -> Any:
    """`field` with the default None: what the compact form may leave out, for `_finish`."""
    schema = field["schema"]
    if inner is None:
        inner = schema["schema"] if schema["type"] == "default" else schema
    return {**field, "schema": core_schema.with_default_schema(inner, default=None)}


def _message_union(msg: Any, definitions: Any) -> Any:
    fields = _fields_of(msg)
    content = fields["content"]["schema"]  # default(list(tagged-union of blocks))
    choices = {
        kind: definitions.get(s.get("schema_ref"), s)
        for kind, s in content["schema"]["items_schema"]["choices"].items()
    }
    result_fields = _fields_of(choices["tool_result"])
    folded = core_schema.union_schema(
        [
            core_schema.str_schema(),
            core_schema.typed_dict_schema(
                {
                    name: core_schema.typed_dict_field(
                        result_fields[name]["schema"]["schema"], required=False
                    )
                    for name in ("output", "state", "metadata")
                },
                extra_behavior="forbid",
            ),
        ]
    )
    blocks = {kind: _block(kind, schema, folded) for kind, schema in choices.items()}
    block_union = core_schema.tagged_union_schema(blocks, discriminator="type")
    fields["name"] = _optional(fields["name"])
    fields["content"] = {
        **fields["content"],
        "schema": core_schema.with_default_schema(
            core_schema.union_schema(
                [core_schema.str_schema(), core_schema.list_schema(block_union)]
            ),
            default_factory=list,
        ),
    }
    roles = {}
    for role, cls in (("user", UserMsg), ("assistant", AssistantMsg), ("system", SystemMsg)):
        mine = {**fields, "role": {**fields["role"], "schema": core_schema.literal_schema([role])}}
        roles[role] = _model(cls, mine, cls.__name__)
    return core_schema.tagged_union_schema(roles, discriminator="role")


def _block(kind: str, schema: Any, folded: Any) -> Any:
    cls = schema["cls"]
    fields = _fields_of(schema)
    if kind in _ID_KINDS:
        fields["id"] = _optional(fields["id"])
    elif kind == "tool_call":
        text_or_object = core_schema.union_schema(
            [
                core_schema.str_schema(),
                core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()),
            ]
        )
        fields["input"] = {
            **fields["input"],
            "schema": core_schema.with_default_schema(text_or_object, default="{}"),
        }
        fields["state"] = _optional(fields["state"])
        fields["result"] = core_schema.model_field(
            core_schema.with_default_schema(core_schema.nullable_schema(folded), default=None)
        )
    elif kind == "tool_result":
        fields["name"] = _optional(fields["name"])
    return _model(cls, fields, cls.__name__)


def _finish(context: list[Msg]) -> list[Msg]:
    """Put back on the validated messages what the compact form left out (see module doc).

    The messages and blocks also get their real class back and their class's shared
    fields-set (as `lighten` gives what joins a state). This runs once per model of the
    state, so it is written for speed: one pass per message, plans looked up by class.
    """
    plans = _PLANS
    for msg in context:
        cls, shared, _kind = plans[type(msg)]
        set_class(msg, cls)
        set_fields_set(msg, shared)
        values = msg.__dict__
        if values["name"] is None:
            values["name"] = values["role"]
        content = values["content"]
        if type(content) is str:
            values["content"] = [_text(content, derived_block_id(values["id"], 0))]
        elif content:
            values["content"] = _finish_blocks(values["id"], content)
    return context


def _text(text: str, block_id: str) -> TextBlock:
    return new_model(TextBlock, {"type": "text", "text": text, "id": block_id}, _TEXT_SET)


def _finish_blocks(msg_id: str, content: list[Any]) -> list[Any]:
    """The blocks of one message, folded results unfolded after their run of calls.

    A folded result goes right after the run of calls it was written in, so each block's
    place in the returned list is known when it is appended (a derived id needs it). Only
    a call's left-out state (finished if a result anywhere in the message answers it, else
    pending) and a result's left-out name (its first call's) wait for the message's end.
    """
    plans, result_set, encode = _PLANS, _RESULT_SET, _ENCODE
    out: list[Any] = []
    folded: list[Any] = []
    answered: set[str] = set()
    undecided: list[dict[str, Any]] = []  # calls whose state was left out, unanswered yet
    nameless: list[dict[str, Any]] = []  # results whose name was left out
    names: dict[str, str] = {}
    for block in content:
        cls, shared, kind = plans[type(block)]
        set_class(block, cls)
        set_fields_set(block, shared)
        values = block.__dict__
        if kind == _CALL:
            call_id = values["id"]
            if call_id not in names:
                names[call_id] = values["name"]
            result = values.pop("result")
            if type(values["input"]) is dict:
                values["input"] = encode(values["input"])
            if result is not None:
                answered.add(call_id)
                if values["state"] is None:
                    values["state"] = _FINISHED
                folded.append(_result(call_id, values["name"], result, result_set))
            elif values["state"] is None:
                undecided.append(values)
        else:
            if folded:
                out += folded
                folded = []
            if kind == _RESULT:
                answered.add(values["id"])
                if values["name"] is None:
                    nameless.append(values)
            elif values["id"] is None:
                values["id"] = derived_block_id(msg_id, len(out))
        out.append(block)
    out += folded
    for values in undecided:
        values["state"] = _FINISHED if values["id"] in answered else _PENDING
    for values in nameless:
        name = names.get(values["id"])
        if name is None:
            raise ValueError(f"tool result {values['id']!r} has no name and no call")
        values["name"] = name
    return out


def _result(call_id: str, name: str, result: Any, shared: set[str]) -> ToolResultBlock:
    if type(result) is str:
        values: dict[str, Any] = {
            "type": "tool_result",
            "id": call_id,
            "name": name,
            "output": result,
            "state": _SUCCESS,
            "metadata": {},
        }
    else:
        values = {
            "type": "tool_result",
            "id": call_id,
            "name": name,
            "output": result.get("output", ""),
            "state": result.get("state", _SUCCESS),
            "metadata": result["metadata"] if "metadata" in result else {},
        }
    return new_model(ToolResultBlock, values, shared)


_SUCCESS = ToolResultBlock.model_fields["state"].default
_CALL, _RESULT, _OTHER = 1, 2, 0
_PLANS: dict[type[Any], tuple[type[Any], set[str], int]] = {}
"""Per message or block class this reader builds (a shadow, see `_model`): its real
class, shared fields-set and kind."""
_TEXT_SET, _RESULT_SET = shared_fields_set(TextBlock), shared_fields_set(ToolResultBlock)
