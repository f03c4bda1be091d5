"""`detached`: a copy of a message or block that shares nothing mutable with it; `made`.

`detached` is used at the trust boundaries (what the caller hands in, what events and
`reply()` hand out), so that a caller who changes an object changes nothing stored. Only
the fields whose declared type can hold a mutable value are copied (lists, dicts, models
that are not frozen), which makes it several times faster than `model_copy(deep=True)`:
the loop pays it on every reply. Each class gets its copier once (`_copier`).

`made` builds a model from values that are already valid, without validating them: for
the loop's own messages, whose every value it made itself.
"""

from __future__ import annotations

import copy
import enum
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["detached", "made"]

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
_COPIERS: dict[type[Any], Callable[[Any], Any]] = {}
"""Per model class (made once, `_copier`): the function that copies its models."""


def detached(model: M) -> M:
    """A copy of `model` whose lists, dicts and mutable nested models are copies too."""
    copier = _COPIERS.get(type(model))
    if copier is None:
        copier = _copier(type(model))
    result: M = copier(model)
    return result


def _copier(cls: type[BaseModel]) -> Callable[[Any], Any]:
    """The copier of `cls`: its possibly mutable fields and its own slots, worked out once."""
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

    # Validation leaves no extra (unless `extra="allow"`) and no private dict (unless the
    # class declares private attributes): a class with neither copies no such dict.
    plain = not cls.__private_attributes__ and cls.model_config.get("extra") != "allow"

    def copier(model: Any) -> Any:
        values = model.__dict__.copy()
        for name in fields:
            value = values[name]
            kind = type(value)
            if kind is list:
                values[name] = [_item(v) for v in value] if value else []
            elif kind is dict:
                values[name] = {k: _item(v) for k, v in value.items()} if value else {}
            elif value is not None and kind is not str:
                values[name] = _item(value)
        new = _new(cls)
        _set(new, "__dict__", values)
        _set_fields_set(new, set(model.__pydantic_fields_set__))
        if plain:
            _set_extra(new, None)
            _set_private(new, None)
        else:
            extra, private = model.__pydantic_extra__, model.__pydantic_private__
            _set_extra(new, None if extra is None else copy.deepcopy(extra))
            # Private attributes hold loop-made values (a validated structured answer): shared.
            _set_private(new, None if private is None else dict(private))
        for slot in slots:  # read through the slot's descriptor: an unset one raises at once
            try:
                slot_value = slot.__get__(model)
            except AttributeError:
                continue
            slot.__set__(new, slot_value)
        return new

    _COPIERS[cls] = copier
    return copier


def _item(value: Any) -> Any:
    kind = type(value)
    copier = _COPIERS.get(kind)
    if copier is not None:  # a model class copied before (the blocks of a message)
        return copier(value)
    if kind is list:
        return [_item(v) for v in value] if value else []
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


_MISSING: Any = object()
_Plan = tuple[
    dict[str, Any],
    frozenset[str],
    tuple[tuple[str, Callable[..., Any], bool], ...],
    tuple[tuple[str, Any], ...],
]
_PLANS: dict[type[BaseModel], _Plan] = {}
"""Per model class (worked out once): its fields in order with their immutable defaults
(`_MISSING` for the others), the required ones, the default factories (each with whether
it takes the data), and the mutable defaults (copied for each model)."""


def made(cls: type[M], /, **values: Any) -> M:
    """A `cls` holding `values` and the defaults of the other fields, not validated.

    Only for values validation would keep as they are (exact `str`s, fresh lists the
    caller made, ...) and classes whose validators change nothing for them: the test of
    each use compares it with `cls(**values)`. The fields given are the fields set, as
    with `cls(**values)`; default factories are called in field order (one that takes the
    data gets every given value: ours ignore it).
    """
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _plan(cls)
    template, required, factories, mutable = plan
    data = {**template, **values}
    if len(data) != len(template) or not required <= values.keys():
        raise TypeError(f"{cls.__name__} takes {sorted(template)}, not {sorted(values)}")
    for name, factory, takes_data in factories:
        if name not in values:
            data[name] = factory(data) if takes_data else factory()
    for name, default in mutable:
        if name not in values:
            data[name] = copy.deepcopy(default)
    new = _new(cls)
    _set(new, "__dict__", data)
    _set_fields_set(new, set(values))
    _set_extra(new, None)
    _set_private(new, None)
    return new


def _plan(cls: type[BaseModel]) -> _Plan:
    if cls.__private_attributes__ or cls.model_config.get("extra") == "allow":
        raise TypeError(f"`made` builds no {cls.__name__}: it has private or extra attributes")
    fields = cls.model_fields
    template = {
        name: info.default if isinstance(info.default, _ATOMS) else _MISSING
        for name, info in fields.items()
    }
    required = frozenset(name for name, info in fields.items() if info.is_required())
    factories = tuple(
        (name, info.default_factory, bool(info.default_factory_takes_validated_data))
        for name, info in fields.items()
        if info.default_factory is not None
    )
    mutable = tuple(
        (name, info.default)
        for name, info in fields.items()
        if not info.is_required()
        and info.default_factory is None
        and not isinstance(info.default, _ATOMS)
    )
    plan = _PLANS[cls] = (template, required, factories, mutable)
    return plan
