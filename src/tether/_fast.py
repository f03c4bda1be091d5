"""The one module that relies on how pydantic (and CPython's `json`) work inside.

Everything else in tether uses pydantic's public API. Three fast paths measurably pay
for leaving it (docs/decisions/lean.md has the figures), and they live here:

- `builder`: pydantic-core builds a model from a finished `__dict__` (the delta events,
  thousands per reply, `tether.event._deltas`);
- `detached`: a copy of a message or block sharing nothing mutable with it (every trust
  boundary, several per reply);
- `AS_STR`: a `StrEnum` field serialised as the string its member is, without the
  call back into Python for the member's `.value` that pydantic's enum serializer makes
  (more than half of what encoding an event costs);
- the compiled state reader's pieces (`core_schema_of`, `fields_of`, `shadow`, `unshadow`,
  `set_class`, `set_fields_set`, `new_model`, `json_encoder`; `tether.state._fastload`).

The assumptions they make, each asserted by `tests/test_pydantic_contract.py`:

1. A model instance is its `__dict__` (field values, in field order) and three slots
   declared on `BaseModel`: `__pydantic_fields_set__`, `__pydantic_extra__`,
   `__pydantic_private__`; setting the four is a complete construction.
2. A validator of `model_schema(cls, any_schema())` built while `cls` is not (its class
   uses `defer_build`) makes a `cls` from `(__dict__, None, fields_set)` as given.
3. `cls.__pydantic_core_schema__`, once `cls.model_rebuild()` ran, is a model schema,
   possibly inside a `definitions` schema and function validators; a model's schema
   holds a `model-fields` schema, possibly wrapped in function validators (`fields_of`).
4. A model schema naming a subclass that is never built (a *shadow*) is validated with
   the schema given, not the class's own.
5. `json.encoder.c_make_encoder` exists (else the pure-Python encoder is used, slower).
6. pydantic-core's `str` serializer writes a `str` subclass (a `StrEnum` member) as its
   characters, and gives a plain `str` in JSON mode: `AS_STR` (the event types and the
   call and result states, in every event and message body written).

Each fast path checks its assumption once, on first use, against what the public API
gives; if they differ it falls back to the public API and says so in `taken()`, which
the contract test reads: a pydantic release that breaks an assumption fails that test
instead of silently slowing tether down. pyproject pins pydantic below the next minor.
"""

from __future__ import annotations

import copy
import enum
import functools
import json
import json.encoder
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, GetCoreSchemaHandler, GetPydanticSchema
from pydantic_core import SchemaSerializer, SchemaValidator, core_schema

__all__ = [
    "AS_STR",
    "Build",
    "builder",
    "core_schema_of",
    "detached",
    "fields_of",
    "json_encoder",
    "new_model",
    "put",
    "set_class",
    "set_fields_set",
    "shadow",
    "taken",
    "unshadow",
]

M = TypeVar("M", bound=BaseModel)
Build = Callable[[tuple[dict[str, Any], None, set[str]]], Any]
"""pydantic-core's build of a model from `(__dict__, extra, fields_set)`."""

_TAKEN: dict[str, bool] = {}
"""Per fast path (by name), whether it is taken (False: it fell back to the public API)."""
FORCE_FALLBACK = False
"""Set by the contract test to prove that a fallback is seen: every check then fails."""


def taken() -> dict[str, bool]:
    """Per fast path checked so far, whether it is taken (a copy)."""
    return dict(_TAKEN)


# Assumption 1: the slots, written through their descriptors (no lookup by name).
set_class = object.__dict__["__class__"].__set__
"""`obj.__class__ = cls` without `__setattr__` (pydantic's refuses it)."""
_set_dict = BaseModel.__dict__["__dict__"].__set__
set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
"""Write a model's fields-set (`tether.state._light` shares one per class)."""
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_new = object.__new__


def new_model(cls: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """A `cls` holding `values` (its whole `__dict__`, in field order), not validated.

    Only for a class with no extra and no private attributes, and values validation
    would keep as they are.
    """
    model: M = _new(cls)
    _set_dict(model, values)
    set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model


def put(model: BaseModel, name: str, value: Any) -> None:
    """`model.<name> = value` for a field of a model that validates no assignment.

    pydantic's `__setattr__` does the same (store, note the name as set) in two Python
    calls; the loop writes a few fields at every step.
    """
    model.__dict__[name] = value
    fields = model.__pydantic_fields_set__
    if name not in fields:
        fields.add(name)


# Assumption 2: pydantic-core builds from a finished `__dict__`.
def _core_build(cls: type[Any]) -> Build:
    return SchemaValidator(core_schema.model_schema(cls, core_schema.any_schema())).validate_python


_BUILDS: dict[type[Any], Build] = {}


def prepare(*classes: type[Any]) -> None:
    """Make the builds of `classes` now, before anything builds the classes themselves.

    Once a class is built, pydantic-core validates any schema naming it with the class's
    own (validating) validator; so call this at import, for `defer_build` classes.
    """
    for cls in classes:
        _BUILDS.setdefault(cls, _core_build(cls))


def builder(cls: type[M], sample: dict[str, Any]) -> Build | None:
    """pydantic-core's build of `cls` from `(__dict__, None, fields_set)`, once checked.

    The check builds `cls(**sample)` (validated) and the same `__dict__` through the
    build; the build is returned only if both give the same class, `__dict__` (in
    order), JSON, fields-set, and no extra or private values. Else None: validate.
    """
    name = f"builder:{cls.__name__}"
    build = _BUILDS.get(cls)
    ok = False
    if build is not None and not FORCE_FALLBACK:
        expected = cls(**sample)
        try:
            made = build((dict(expected.__dict__), None, set(sample)))
        except ValueError:  # a ValidationError: it validated instead of building
            made = None
        ok = made is not None and _same(made, expected) and made.model_fields_set == set(sample)
    _TAKEN[name] = ok
    return build if ok else None


def _same(made: Any, expected: Any) -> bool:
    return bool(
        type(made) is type(expected)
        and list(made.__dict__.items()) == list(expected.__dict__.items())
        and made.model_dump_json() == expected.model_dump_json()
        and made.model_extra is None
        and made.__pydantic_private__ is None
    )


# The detached copy (assumption 1).
_ATOMS = (str, int, float, bool, bytes, type(None))
_NOT_COPIED = frozenset({"__weakref__", "_json_memo"})
"""Own slots a copy starts without (`_json_memo` describes the original's objects)."""
_COPIERS: dict[type[Any], Callable[[Any], Any]] = {}


def detached(model: M) -> M:
    """A copy of `model` whose lists, dicts and mutable nested models are copies too.

    What `model.model_copy(deep=True)` gives (without copying what cannot change: strs,
    numbers, enums, frozen models of those), several times faster: it runs at every
    trust boundary of a reply. Falls back to `model_copy(deep=True)` if the first copy
    of a class differs from it.
    """
    copier = _COPIERS.get(type(model))
    if copier is None:
        copier = _checked_copier(type(model), model)
    result: M = copier(model)
    return result


def _checked_copier(cls: type[BaseModel], model: BaseModel) -> Callable[[Any], Any]:
    copier = _copier(cls)
    made, expected = copier(model), model.model_copy(deep=True)
    ok = (
        not FORCE_FALLBACK
        and _same(made, expected)
        and made.model_fields_set == expected.model_fields_set
    )
    _TAKEN[f"detached:{cls.__name__}"] = ok
    if not ok:
        copier = _COPIERS[cls] = _public_copy
    return copier


def _public_copy(model: Any) -> Any:
    return model.model_copy(deep=True)


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
        _set_dict(new, values)
        set_fields_set(new, set(model.__pydantic_fields_set__))
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


# The compiled state reader's pieces (assumptions 3 and 4).
class SchemaShapeError(Exception):
    """A core schema is not shaped as assumption 3 says (the reader is then not used)."""


def core_schema_of(cls: type[BaseModel]) -> dict[str, Any]:
    """A shallow copy of `cls`'s core schema as a `definitions` schema, built if deferred.

    (pydantic makes it one when the class's schema refers to shared parts; one that does
    not is wrapped with no definitions.)
    """
    cls.model_rebuild()
    schema = dict(cls.__pydantic_core_schema__)
    if schema.get("type") != "definitions":
        return {"type": "definitions", "schema": schema, "definitions": []}
    if "schema" not in schema or "definitions" not in schema:
        raise SchemaShapeError(f"{cls.__name__}'s core schema is not a definitions schema")
    return schema


def fields_of(model: Any) -> dict[str, Any]:
    """A copy of the fields of a `model` core schema (below any function validators)."""
    if model.get("type") != "model":
        raise SchemaShapeError(f"expected a model schema, got {model.get('type')!r}")
    inner = model["schema"]
    while inner.get("type") != "model-fields":  # a model validator wraps the fields
        if "schema" not in inner:
            raise SchemaShapeError(f"no model-fields schema below {inner.get('type')!r}")
        inner = inner["schema"]
    return dict(inner["fields"])


_SHADOWS: dict[type[Any], type[Any]] = {}
_REAL: dict[type[Any], type[Any]] = {}


def shadow(cls: type[Any]) -> type[Any]:
    """A subclass of `cls`, never built, that a model schema may name (assumption 4).

    What pydantic-core makes of it is switched back to `cls` (`unshadow`, `real_class`).
    """
    found = _SHADOWS.get(cls)
    if found is None:
        found = type(f"_Compact{cls.__name__}", (cls,), {"__module__": __name__})
        if found.__pydantic_complete__:
            raise SchemaShapeError(f"a subclass of {cls.__name__} is built at once")
        _SHADOWS[cls] = found
        _REAL[found] = cls
    return found


def real_class(cls: type[Any]) -> type[Any]:
    """The class a shadow stands for."""
    return _REAL[cls]


def unshadow(obj: Any) -> Any:
    """`obj` (an instance of a shadow) made an instance of the real class."""
    set_class(obj, _REAL[type(obj)])
    return obj


def reader_taken(ok: bool) -> None:
    """Record whether the compiled state reader is used (`tether.state._fastload`)."""
    _TAKEN["state reader"] = ok and not FORCE_FALLBACK


def message_reader_taken(ok: bool) -> None:
    """Record whether the compiled message check is used (`tether.state._fastload`)."""
    _TAKEN["message check"] = ok and not FORCE_FALLBACK


# Assumption 5.
def json_encoder() -> Callable[[Any], str]:
    """`json.dumps(value, ensure_ascii=False)` with its C encoder made once."""
    encoder = json.JSONEncoder(ensure_ascii=False)
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    _TAKEN["json encoder"] = make is not None and not FORCE_FALLBACK
    if make is None or FORCE_FALLBACK:
        return encoder.encode
    encode = make(
        None, encoder.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True
    )
    return lambda value: "".join(encode(value, 0))


# Assumption 6.
class _Probe(enum.StrEnum):
    MEMBER = "probe"


@functools.cache
def _str_serializer_writes_members() -> bool:
    """Whether the `str` serializer writes a member as its value (probed once)."""
    try:
        serializer = SchemaSerializer(core_schema.str_schema())
        return serializer.to_json(_Probe.MEMBER) == b'"probe"' and (
            type(serializer.to_python(_Probe.MEMBER, mode="json")) is str
        )
    except Exception:  # any failure: the enum serializer is kept
        return False


def _serialised_as_str(source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
    schema = handler(source)
    taken = _TAKEN["str enum serialisation"] = (
        _str_serializer_writes_members() and not FORCE_FALLBACK
    )
    if not taken:
        return schema
    return {**schema, "serialization": core_schema.simple_ser_schema("str")}


AS_STR = GetPydanticSchema(_serialised_as_str)
"""`Annotated[SomeStrEnum, AS_STR]`: validated as before, serialised as the string the member
is (the same JSON as the enum serializer's, a plain `str` in JSON mode). Only for fields
whose written JSON is checked when it matters or built by tether (the enum serializer warns
about a plain string of another value; this one does not)."""
