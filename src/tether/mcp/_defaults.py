"""SEP-1034: fields an accepted form leaves out take the defaults its schema declares."""

from __future__ import annotations

from typing import Any

__all__ = ["with_defaults"]


def with_defaults(schema: dict[str, Any] | None, content: dict[str, Any] | None) -> dict[str, Any]:
    """`content` completed with each missing property's `default` from `schema`."""
    answer = dict(content or {})
    properties = (schema or {}).get("properties")
    if not isinstance(properties, dict):
        return answer
    for name, spec in properties.items():
        if name not in answer and isinstance(spec, dict) and "default" in spec:
            answer[name] = spec["default"]
    return answer
