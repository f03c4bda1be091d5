"""Turn a model's JSON arguments into validated input, or a message the model can act on."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

__all__ = ["ArgumentError", "parse_arguments", "validate_arguments"]

_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by __init__; typeshed omits it
"""`json.loads` without its Python layers (`loads`, `decode`, `raw_decode`)."""
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class ArgumentError(Exception):
    """The arguments can't be used; the message is written for the model."""


def _close_brackets(text: str) -> str | None:
    """Append the closers a truncated JSON object is missing, if that is unambiguous."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
    if in_string or not stack:
        return None
    return text + "".join(reversed(stack))


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse JSON arguments, repairing only what is unambiguous.

    Repairs: empty input (`{}`), a markdown code fence, trailing commas, and missing
    closing brackets at the end. Anything else raises `ArgumentError`.
    """
    text = raw.strip()
    if not text:
        return {}
    try:  # the common case, an object and nothing after it: read by the C scanner alone
        value, end = _scan(text, 0)
    except (StopIteration, ValueError):
        pass
    else:
        if end == len(text) and type(value) is dict:
            return value
    try:  # valid JSON, no repair needed
        value = json.loads(text)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(value, dict):
            return value
        raise ArgumentError(
            f"the arguments must be a JSON object, got {type(value).__name__}: {raw[:200]!r}"
        )
    fence = _FENCE.match(text)
    if fence:
        text = fence.group(1)
    candidates = [text, _TRAILING_COMMA.sub(r"\1", text)]
    closed = _close_brackets(candidates[-1])
    if closed is not None:
        candidates.append(closed)
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
        raise ArgumentError(
            f"the arguments must be a JSON object, got {type(value).__name__}: {raw[:200]!r}"
        )
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArgumentError(
            f"the arguments are not valid JSON ({exc.msg} at position {exc.pos}): "
            f"{raw[:200]!r}; send a JSON object matching the tool's schema"
        ) from None
    raise ArgumentError(f"the arguments are not valid JSON: {raw[:200]!r}")  # pragma: no cover


def validate_arguments(model: type[BaseModel], arguments: dict[str, Any]) -> BaseModel:
    """Validate against the tool's input model; the error names every bad field."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            field = ".".join(str(p) for p in err["loc"]) or "(arguments)"
            problems.append(f"`{field}`: {err['msg']}")
        raise ArgumentError(
            "invalid arguments: " + "; ".join(problems) + ". Fix these fields and call again."
        ) from None
