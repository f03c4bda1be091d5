"""Checks on `@tool`, `FunctionTool` and `Toolkit` arguments, naming the tool and the fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, PydanticUserError, TypeAdapter

from tether.errors import ArgumentError, ToolError

__all__ = ["check_flags", "check_function", "check_input_model", "check_iterable"]


def check_function(func: Any) -> None:
    """`FunctionTool`/`@tool` got something other than a function: say how to call it."""
    if callable(func):
        return
    if isinstance(func, str):
        raise ToolError(
            f"`@tool({func!r})` passes the name positionally; write `@tool(name={func!r})` "
            f"(or `FunctionTool(func, name={func!r})`)"
        )
    raise ToolError(f"FunctionTool needs a callable, got {func!r}")


def check_flags(tool_name: str, flags: Mapping[str, Any]) -> None:
    """Every `is_*`/`requires_*` flag is a real bool (a string such as "no" would be true)."""
    for flag, value in flags.items():
        if not isinstance(value, bool):
            raise ArgumentError(
                f"tool {tool_name!r}: `{flag}` must be True or False, got {value!r}"
            )


def check_input_model(tool_name: str, model: type[BaseModel]) -> None:
    """Build the tool's input schema now, so a parameter pydantic cannot handle fails here."""
    try:
        model.model_json_schema()
    except PydanticUserError as error:
        parameter, annotation = _bad_parameter(model)
        raise ToolError(
            f"tool {tool_name!r}: parameter {parameter!r} is typed {annotation}, which has no "
            "JSON schema the model could fill in; type it with a pydantic `BaseModel`, a "
            "dataclass, a `TypedDict` or plain types (str, int, list[str], ...)"
        ) from error


def _bad_parameter(model: type[BaseModel]) -> tuple[str, str]:
    for name, field in model.model_fields.items():
        try:
            TypeAdapter(Any if field.annotation is None else field.annotation).json_schema()
        except PydanticUserError:
            annotation = field.annotation
            return name, getattr(annotation, "__name__", repr(annotation))
    return "?", "an unsupported type"  # pragma: no cover  # some field failed above


def check_iterable(arg: str, value: Any, example: str) -> None:
    """`Toolkit(arg=...)` takes a list: a lone tool, client or string is named with the fix."""
    if value is None:
        return
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        raise ArgumentError(
            f"Toolkit({arg}=...) takes a list, got {type(value).__name__}; write "
            f"`Toolkit({arg}=[{example}])`"
        )
