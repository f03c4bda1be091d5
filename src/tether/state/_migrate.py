"""Schema versions of `AgentState`: checking, and a hook to migrate older shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.errors import StateVersionError

__all__ = ["SCHEMA_VERSION", "migrate", "register_migration"]

SCHEMA_VERSION = 3
"""The `AgentState` shape this tether writes (2: the compact JSON form; 3: more compact:
results folded into their calls, object inputs, a name equal to the role left out)."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]


def _v1_to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    """Version 1 wrote every field; version 2 reads the same values, with two changes.

    The reply cursor's `structured_schema` is now `structured_json_schema`, and a tool call
    without a `state` is `pending` in version 1 (version 2 would read it as `finished` when
    its result is in the message), so it is written out.
    """
    reply = obj.get("reply")
    if isinstance(reply, dict) and "structured_schema" in reply:
        reply = dict(reply)
        reply["structured_json_schema"] = reply.pop("structured_schema")
        obj["reply"] = reply
    context = obj.get("context")
    if isinstance(context, list):
        obj["context"] = [_v1_msg(msg) for msg in context]
    return obj


def _v1_msg(msg: Any) -> Any:
    if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
        return msg
    content = [
        {**b, "state": "pending"}
        if isinstance(b, dict) and b.get("type") == "tool_call" and "state" not in b
        else b
        for b in msg["content"]
    ]
    return {**msg, "content": content}


def _v2_to_v3(obj: dict[str, Any]) -> dict[str, Any]:
    """Version 3 reads every version-2 form as version 2 did (it only leaves out more)."""
    return obj


_MIGRATIONS: dict[int, Migration] = {1: _v1_to_v2, 2: _v2_to_v3}


def register_migration(from_version: int, migration: Migration) -> None:
    """Register a function that turns a `from_version` state dict into the next version's."""
    _MIGRATIONS[from_version] = migration


def migrate(obj: Any) -> Any:
    """Bring a raw state dict to the current schema version, or explain why it can't be."""
    if not isinstance(obj, dict):
        return obj
    version = obj.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int):
        raise StateVersionError(f"state schema_version must be an integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise StateVersionError(
            f"this state has schema_version {version}, but this tether writes version "
            f"{SCHEMA_VERSION}; upgrade tether to load it"
        )
    while version < SCHEMA_VERSION:
        step = _MIGRATIONS.get(version)
        if step is None:
            raise StateVersionError(
                f"no migration from state schema_version {version} to {version + 1}; "
                "register one with `tether.state.register_migration`"
            )
        obj = step(dict(obj))
        version += 1
        obj["schema_version"] = version
    return obj
