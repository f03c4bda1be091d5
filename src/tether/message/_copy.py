"""`detached`: a copy of a message or block that shares nothing mutable with it.

Used at the trust boundaries (what the caller hands in, what events and `reply()` hand
out), so that a caller who changes an object changes nothing stored. Only the fields
whose declared type can hold a mutable value are copied (lists, dicts, models that are
not frozen), which makes it several times faster than `model_copy(deep=True)`: the loop
pays it on every reply.
"""

from __future__ import annotations

import copy
import enum
import types
import typing
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["detached"]

M = TypeVar("M", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__
# pydantic's own slots, written through their descriptors (no attribute lookup by name)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_ATOMS = (str, int, float, bool, bytes, type(None))
_NOT_COPIED = frozenset({"__weakref__", "_json_memo"})
"""Slots a copy starts without (`_json_memo` describes the original's objects)."""
_PLANS: dict[type[BaseModel], tuple[tuple[str, ...], tuple[Any, ...]]] = {}
"""Per model class (worked out once): the fields whose values may be mutable, and the
descriptors of the slots it adds to pydantic's (e.g. `Msg._structured_output`)."""


def detached(model: M) -> M:
    """A copy of `model` whose lists, dicts and mutable nested models are copies too."""
    cls = type(model)
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _plan(cls)
    fields, slots = plan
    values = model.__dict__.copy()
    for name in fields:
        values[name] = _item(values[name])
    new = _new(cls)
    _set(new, "__dict__", values)
    _set_fields_set(new, set(model.__pydantic_fields_set__))
    extra, private = model.__pydantic_extra__, model.__pydantic_private__
    _set_extra(new, None if extra is None else copy.deepcopy(extra))
    # Private attributes hold loop-made values (a validated structured answer): shared.
    _set_private(new, None if private is None else dict(private))
    for slot in slots:  # read through the slot's descriptor: an unset one raises at once
        try:
            value = slot.__get__(model)
        except AttributeError:
            continue
        slot.__set__(new, value)
    return new


def _plan(cls: type[BaseModel]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """What copying a model of `cls` takes: its possibly mutable fields, its own slots."""
    fields = tuple(
        name for name, info in cls.model_fields.items() if not _immutable(info.annotation)
    )
    slots = tuple(
        klass.__dict__[name]
        for klass in cls.__mro__
        if issubclass(klass, BaseModel) and klass is not BaseModel
        for name in klass.__dict__.get("__slots__", ())
        if name not in _NOT_COPIED
    )
    plan = _PLANS[cls] = (fields, slots)
    return plan


def _item(value: Any) -> Any:
    if value is None:
        return None
    kind = type(value)
    if kind is list:
        return [_item(v) for v in value] if value else []
    if kind in _PLANS:  # a model class copied before (the blocks of a message)
        return detached(value)
    if kind is dict:  # JSON-like data (metadata): copied level by level, no deepcopy memo
        return {k: _item(v) for k, v in value.items()} if value else {}
    if isinstance(value, _ATOMS):  # str-based enums included
        return value
    if isinstance(value, BaseModel):
        return detached(value)
    return copy.deepcopy(value)


def _immutable(annotation: Any) -> bool:
    """Whether every value of this declared type is immutable."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Union or origin is types.UnionType:
        return all(_immutable(arg) for arg in typing.get_args(annotation))
    if origin is typing.Annotated:
        return _immutable(typing.get_args(annotation)[0])
    if not isinstance(annotation, type):
        return False
    if annotation in _ATOMS or issubclass(annotation, enum.Enum):
        return True
    if issubclass(annotation, BaseModel) and annotation.model_config.get("frozen"):
        return all(_immutable(f.annotation) for f in annotation.model_fields.values())
    return False
