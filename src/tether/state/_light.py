"""`lighten`: drop the per-instance fields-set of the models a state keeps.

A pydantic model keeps, besides its values, the set of the fields that were given
(`__pydantic_fields_set__`: 216 bytes even for one name, a quarter of a kept session). A
message, block or head model that stays in a state for the session's lifetime gets one
shared set per class instead, naming every field. The cost is one attribute write per
model when it joins the state (not per construction); what changes is only that
`model_fields_set` of a kept object names every field (as if each had been given), so an
`exclude_unset` dump of it writes every field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tether._fast import set_fields_set
from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg

__all__ = ["lighten", "shared_fields_set"]

_ALL_FIELDS: dict[type[BaseModel], _AllFields] = {}
_WITH_CONTENT = frozenset({Msg, UserMsg, AssistantMsg, SystemMsg})


class _AllFields(set[str]):
    """A class's shared fields-set: it names every field, so adding one changes nothing."""

    def add(self, name: str) -> None:
        if name not in self:  # an unknown name: not a field (extra="forbid" refuses it)
            raise AttributeError(f"{name!r} is not a field")

    def update(self, *names: Any) -> None:
        for group in names:
            for name in group:
                self.add(name)

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: Any) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (set, (list(self),))


def shared_fields_set(cls: type[BaseModel]) -> _AllFields:
    """The fields-set that `lighten` gives the models of `cls` (one per class)."""
    shared = _ALL_FIELDS.get(cls)
    if shared is None:
        shared = _ALL_FIELDS[cls] = _AllFields(cls.model_fields)
    return shared


def lighten(model: BaseModel) -> None:
    """Give `model` (and the blocks of a message) its class's shared fields-set."""
    cls = type(model)
    shared = _ALL_FIELDS.get(cls)
    if shared is None:
        shared = shared_fields_set(cls)
    set_fields_set(model, shared)
    if cls in _WITH_CONTENT:
        for block in model.__dict__["content"]:
            lighten(block)
