"""An MCP tool's input schema in the shape model providers accept.

MCP allows any JSON Schema with an object root; providers do not: Anthropic rejects
`anyOf`/`oneOf`/`allOf` at the top level with a 400 for the whole request, OpenAI wants
`type: object` there and no combinators. One such server tool would fail every reply.
So the top level is made a plain object schema (a top-level `$ref` is inlined, nested
`$ref`s and `$defs` stay), and the combinators taken away are stated in the tool's
description. The server still validates the arguments against its own schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["offered_schema"]

_COMBINATORS = ("anyOf", "oneOf", "allOf", "not")
_REF_PREFIXES = ("#/$defs/", "#/definitions/")


def offered_schema(schema: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The schema to offer the model, and text to append to the tool's description."""
    result = dict(schema or {})
    result = _inline_root_ref(result)
    moved = {key: result.pop(key) for key in _COMBINATORS if key in result}
    result["type"] = "object"
    if not isinstance(result.get("properties"), dict):
        result["properties"] = {}
    if not moved:
        return result, ""
    rules = json.dumps(moved, ensure_ascii=False, sort_keys=True)
    return result, f"\n\nThe arguments must also satisfy these JSON Schema rules: {rules}"


def _inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    for prefix, defs_key in zip(_REF_PREFIXES, ("$defs", "definitions"), strict=True):
        defs = schema.get(defs_key)
        if ref.startswith(prefix) and isinstance(defs, dict):
            target = defs.get(ref[len(prefix) :])
            if isinstance(target, dict):
                merged = {k: v for k, v in schema.items() if k != "$ref"}
                return {**target, **merged}
    return schema
