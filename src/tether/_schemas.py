"""`build_schemas`: build deferred pydantic schemas innermost first, so each is built once.

A deferred model (`defer_build=True`) builds its schema on first use, and inlines the schema
of every model its fields hold that is not built yet, without keeping it for that model:
built first, `AgentState` generates the message and block schemas, and `UserMsg` built next
generates them again (seven times over in a `tether chat -p` run). A model that is already
built is reused by reference instead.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator

from pydantic import BaseModel

__all__ = ["build_schemas"]


def _models_in(annotation: object) -> Iterator[type[BaseModel]]:
    """The models an annotation names: itself, or inside `list[...]`, unions, `Annotated`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def build_schemas(*models: type[BaseModel]) -> None:
    """Build the schemas of `models` and of the models their fields hold, innermost first."""
    seen: set[type[BaseModel]] = set()

    def visit(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for field in model.model_fields.values():
            for inner in _models_in(field.annotation):
                visit(inner)
        if not model.__pydantic_complete__:
            model.model_rebuild()

    for model in models:
        visit(model)
