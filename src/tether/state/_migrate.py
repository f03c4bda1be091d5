"""Schema versions of `AgentState`: checking, and a hook to migrate older shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.errors import StateVersionError

__all__ = ["SCHEMA_VERSION", "migrate", "register_migration"]

SCHEMA_VERSION = 1
"""The `AgentState` shape this tether writes."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]
_MIGRATIONS: dict[int, Migration] = {}


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
