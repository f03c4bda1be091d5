"""`field_docs`: each field's attribute docstring becomes its description (the schema text).

It does what pydantic's `use_attribute_docstrings=True` does for a deferred model, without its
cost on Python < 3.13: there pydantic finds the class source by walking the call stack and
calling `inspect.getmodule` on every frame (each rescans `sys.modules`), then tokenizes the
class: ~6 M instructions per model, most of the built-in tools' import. Here the class is
found in its module's source by name and only its own lines are parsed.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
from typing import TypeVar

from pydantic import BaseModel

__all__ = ["field_docs"]

_M = TypeVar("_M", bound=BaseModel)


def _class_lines(model: type[BaseModel]) -> list[str]:
    """The source lines of a top-level class: its `class` line to the next top-level line."""
    lines = linecache.getlines(sys.modules[model.__module__].__file__ or "")
    header = f"class {model.__name__}"
    start = next(
        i for i, line in enumerate(lines) if line.startswith(header) and line[len(header)] in "(:"
    )
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
        end += 1
    return lines[start:end]


def field_docs(model: type[_M]) -> type[_M]:
    """Class decorator: set each field's description from the string literal under it.

    The model must defer its schema (`defer_build=True`): the description is read when the
    schema is first built. A field that already has a description keeps it.
    """
    if model.__pydantic_complete__ or not model.__pydantic_fields_complete__:
        raise TypeError(f"{model.__name__}: field_docs needs defer_build=True and resolved fields")
    (node,) = ast.parse("".join(_class_lines(model))).body
    assert isinstance(node, ast.ClassDef) and node.name == model.__name__, model
    fields = model.model_fields
    for stmt, after in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            field = fields.get(stmt.target.id)
            if field is not None and field.description is None:
                field.description = inspect.cleandoc(after.value.value)
    return model
