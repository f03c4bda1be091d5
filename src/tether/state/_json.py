"""The compact JSON form of a state (schema version 3), written message by message.

Every model of the state is written without the fields that hold their default; a
discriminator `type` is always written (the unions need it to load: its default factory
takes the data, so `exclude_defaults` never compares it). On top of that, a message
leaves out what a reader can work out (`tether.message._compact` reads it back, so a
message body in this form validates as a `Msg`):

- a `name` equal to the `role`;
- a text, thinking, hint or data block whose id is `<msg id>.<position>` has no `id`;
- a message whose content is one such text block stores the text alone (`"content": "hi"`);
- a result right after its run of calls, in call order, with its call's name, is written
  inside the call as `"result"` (its output string alone when that is all it holds);
- another result has no `name` when the first call with its id has that name;
- a tool call has no `state` when it is `finished` and answered by a result in the message,
  or `pending` and not answered;
- a call's `input` that is exactly the `json.dumps` of an object is written as that object.

A message without calls is written by its compiled serialiser in one call
(`exclude_defaults`, plus an `exclude` of the derivable fields); one with calls is built
as values (the folding moves blocks). Unchanged messages reuse their JSON (`message_json`).
"""

from __future__ import annotations

import enum
import functools
import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaSerializer, from_json, to_json

from tether._ids import derived_block_id
from tether.message import (
    AssistantMsg,
    Msg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)

__all__ = [
    "compact_context",
    "compact_model",
    "context_json",
    "message_json",
    "remember_message_json",
]

# Exclude sets for the serialiser (sets, as its signature asks; never changed).
_ID: set[str] = {"id"}
_NAME: set[str] = {"name"}
_STATE: set[str] = {"state"}
_NO_CONTENT: set[str] = {"content"}
_NO_CONTENT_NAME: set[str] = {"content", "name"}
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
    JSON is kept on the message (a slot) with a snapshot of what it was written from (see
    `_snapshot`), and checking that snapshot is a few C-level comparisons. This is what
    makes a save of a long context cost the messages that changed (issue #17).
    """
    if type(msg) not in _MSG_CLASSES and not isinstance(msg, Msg):  # (isinstance is slow)
        # an unvalidated assignment: written as pydantic would
        return _msg_serializer().to_json(msg, warnings=False)
    try:  # the slot itself: an unset one raises here, in C, not in BaseModel.__getattr__
        memo: _Memo | None = _MEMO_SLOT.__get__(msg)
    except AttributeError:
        memo = None
    if memo is not None:
        values, models, empties, filled, items, blocks, body = memo
        if (
            tuple(msg.content) == blocks
            and _values(msg, models) == values
            and not any(empties)
            and (not filled or [x if type(x) is dict else tuple(x) for x in filled] == items)
        ):
            return body
    try:
        body = _message_json(msg)
    except (AttributeError, TypeError):  # a value of the wrong type assigned unvalidated
        return _msg_serializer().to_json(msg, exclude_defaults=True, warnings=False)
    snapshot = _snapshot(msg)
    if snapshot is not None:
        _set(msg, "_json_memo", (*snapshot, body))
    elif memo is not None:
        _set(msg, "_json_memo", None)
    return body


def remember_message_json(msg: Msg, body: bytes) -> None:
    """Record that `msg` was just read from `body` (its JSON in this form or an older one).

    Until the message changes, `message_json` gives `body` back without serialising it: a
    storage that loads a session and saves it again writes and compares only the messages
    that changed since (issue #17). Call it right after loading, before anything can
    change the message; a body in an older form stays as it was read until then.
    """
    snapshot = _snapshot(msg)
    if snapshot is not None:
        _set(msg, "_json_memo", (*snapshot, body))


_Snapshot = tuple[
    list[Any],
    tuple[BaseModel, ...],
    tuple[Any, ...],
    tuple[Any, ...],
    list[Any],
    tuple[Any, ...],
]
_Memo = tuple[
    list[Any],
    tuple[BaseModel, ...],
    tuple[Any, ...],
    tuple[Any, ...],
    list[Any],
    tuple[Any, ...],
    bytes,
]
"""`_snapshot` (the values of the message and of the models inside it then, in one flat
list (`_values`: 8 bytes a value, where a copy of each model's dict cost 184-464 bytes),
those models, the lists and dicts they hold that were empty, those that were not and
copies of their items then, the message's blocks then), and the JSON. A model's keys are
its fields, in their order, so its values alone say what it holds. The message itself is
not in it: a memo that named its own message would make every message a reference cycle,
which only the cyclic collector frees (a loaded state that is dropped would linger, and a
full collection would walk it)."""
_set = object.__setattr__
_MEMO_SLOT = Msg.__dict__["_json_memo"]
"""The `_json_memo` slot's descriptor (a new message has it unset: reading it through
`getattr` would go through `BaseModel.__getattr__`, two exceptions and a formatted message)."""
_MSG_CLASSES = frozenset({Msg, UserMsg, AssistantMsg, SystemMsg})
_ATOMS = frozenset({str, int, float, bool, type(None), ToolCallState, ToolResultState})


def _snapshot(msg: Msg) -> _Snapshot | None:
    """The objects the message's JSON is written from, or None if one can change unseen.

    Every model (the message, its blocks, their nested models) is listed with a copy of its
    values, and every list and dict they hold with a copy of its items; a later check
    compares those copies (identity first, then equality) with what the objects hold
    then. A dict may hold only atoms (a container in it could change in place unseen); a
    list's items are listed themselves.
    """
    content = msg.content
    if type(content) is not list:
        return None
    models: list[Any] = [msg]
    containers: list[Any] = []
    atoms = _ATOMS
    i = 0
    while i < len(models):  # the message, its blocks, their nested models, breadth first
        model = models[i]
        i += 1
        for value in model.__dict__.values():
            kind = type(value)
            if kind in atoms:
                continue
            if kind is list:
                if value is not content:
                    containers.append(value)
                if not _list_models(value, models):
                    return None
            elif kind is dict:
                if value:
                    for item in value.values():
                        if type(item) not in atoms:
                            return None
                containers.append(value)
            elif isinstance(value, BaseModel):
                models.append(value)
            elif not isinstance(value, enum.Enum):
                return None
    del models[0]
    inner = tuple(models)
    values = list(_values(msg, inner))  # exact size (`+=` over-allocates)
    if not any(containers):  # the usual case: every list and dict empty
        return values, inner, tuple(containers), (), [], tuple(content)
    filled = tuple(c for c in containers if c)
    return (
        values,
        inner,
        tuple(c for c in containers if not c),
        filled,
        [tuple(c) if type(c) is list else dict(c) for c in filled],
        tuple(content),
    )


def _values(msg: Msg, models: tuple[BaseModel, ...]) -> list[Any]:
    """The values of `msg` and of `models`, in order, as one list.

    As fast to build and compare as copies of their dicts were, at 8 bytes a value.
    """
    values = [*msg.__dict__.values()]
    for model in models:
        values += model.__dict__.values()
    return values


def _list_models(items: list[Any], models: list[Any]) -> bool:
    """Add a list's models to `models`; False if it holds something else but atoms."""
    for item in items:
        if type(item) in _ATOMS:
            continue
        if not isinstance(item, BaseModel):
            return False
        models.append(item)
    return True


def _message_json(msg: Msg) -> bytes:
    serializer = _msg_serializer()
    blocks = msg.content
    own_name = msg.name != msg.role
    if not blocks:
        if own_name:
            return serializer.to_json(msg, exclude_defaults=True)
        return serializer.to_json(msg, exclude_defaults=True, exclude=_NAME)
    for block in blocks:
        if type(block) is ToolCallBlock:
            return _with_calls(serializer, msg, own_name)
    exclude = _derivable(msg, blocks)
    if len(blocks) == 1 and 0 in exclude and type(blocks[0]) is TextBlock:
        head = serializer.to_json(
            msg, exclude_defaults=True, exclude=_NO_CONTENT if own_name else _NO_CONTENT_NAME
        )
        return head[:-1] + b',"content":' + to_json(blocks[0].text) + b"}"
    if not exclude:
        if own_name:
            return serializer.to_json(msg, exclude_defaults=True)
        return serializer.to_json(msg, exclude_defaults=True, exclude=_NAME)
    excluded: dict[str, Any] = {"content": exclude}
    if not own_name:
        excluded["name"] = True
    return serializer.to_json(msg, exclude_defaults=True, exclude=excluded)


def _derivable(msg: Msg, blocks: list[Any]) -> dict[int, set[str]]:
    """Per block position, the ids a reader can work out (a message without calls)."""
    exclude: dict[int, set[str]] = {}
    msg_id = msg.id
    for i, block in enumerate(blocks):
        if type(block) is not ToolResultBlock and block.id == derived_block_id(msg_id, i):
            exclude[i] = _ID
    return exclude


def _with_calls(serializer: SchemaSerializer, msg: Msg, own_name: bool) -> bytes:
    """A message with tool calls, built as values: results fold into their calls."""
    raw: dict[str, Any] = serializer.to_python(
        msg, mode="json", exclude_defaults=True, exclude=None if own_name else _NAME
    )
    blocks: list[Any] = msg.content
    out: list[dict[str, Any]] = raw["content"]
    names: dict[str, str] = {}
    answered: set[str] = set()
    for block in blocks:
        kind = type(block)
        if kind is ToolCallBlock:
            names.setdefault(block.id, block.name)
        elif kind is ToolResultBlock:
            answered.add(block.id)
    msg_id = msg.id
    for i, (block, values) in enumerate(zip(blocks, out, strict=True)):
        kind = type(block)
        if kind is ToolCallBlock:
            if block.id in answered:
                if block.state == _FINISHED:
                    del values["state"]
                elif block.state == _PENDING:
                    values["state"] = _PENDING.value
            if "input" in values:
                values["input"] = _input_value(values["input"])
        elif kind is ToolResultBlock:
            if names.get(block.id) == block.name:
                values.pop("name", None)
        elif values.get("id") == derived_block_id(msg_id, i):
            del values["id"]
    raw["content"] = _fold_results(blocks, out)
    content = raw["content"]
    if len(content) == 1 and content[0].keys() == _TEXT_KEYS and content[0]["type"] == "text":
        raw["content"] = content[0]["text"]  # not reached today: a call is always kept
    if "content" in raw:
        raw["content"] = raw.pop("content")  # written last, as the compiled path does
    return to_json(raw)


_TEXT_KEYS = {"type", "text"}


@functools.lru_cache(maxsize=1024)  # a reply's message is written at each save point
def _input_value(text: str) -> Any:
    """A call's input as a JSON object if reading that object back gives `text` exactly.

    That is when `text` is the object's `json.dumps` (what the `input` validator writes
    for a dict); anything else stays the string.
    """
    if not text.startswith("{"):
        return text
    try:
        value = json.loads(text)
        if type(value) is dict and json.dumps(value, ensure_ascii=False, allow_nan=False) == text:
            return value
    except ValueError:  # not JSON, or a NaN that a JSON object cannot hold
        pass
    return text


def _fold_results(blocks: list[Any], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`out` with each result that follows its run of calls, in call order, folded in.

    A result folds into its call when it comes right after the run of calls (or after the
    results folded before it), answers a later call of the run than the one before it, and
    has the call's name; the first that does not stays a flat block, and so do the rest.
    A reader puts folded results back right after their run, in call order: exactly here.
    A run whose folded results would be followed by another call folds nothing (the reader
    would see one run).
    """
    folded: list[dict[str, Any]] = []
    n = len(blocks)
    i = 0
    while i < n:
        if type(blocks[i]) is not ToolCallBlock:
            folded.append(out[i])
            i += 1
            continue
        j = i
        while j < n and type(blocks[j]) is ToolCallBlock:
            j += 1
        k, p = j, i
        pairs: list[tuple[int, int]] = []
        while k < n and type(result := blocks[k]) is ToolResultBlock:
            q = p
            while q < j and blocks[q].id != result.id:
                q += 1
            if q == j or blocks[q].name != result.name:
                break
            pairs.append((q, k))
            p, k = q + 1, k + 1
        if k < n and type(blocks[k]) is ToolCallBlock:
            pairs, k = [], j  # a reader would take the next calls for the same run
        for q, r in pairs:
            out[q]["result"] = _result_value(out[r])
        folded += out[i:j]
        i = k
    return folded


def _result_value(values: dict[str, Any]) -> Any:
    """A folded result: its output alone when that is all it holds, else its fields."""
    del values["type"], values["id"]
    values.pop("name", None)
    if not values:
        return ""
    if len(values) == 1 and type(output := values.get("output")) is str:
        return output
    return values
