"""Injectable id and timestamp factories (tests may swap them for deterministic values)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

__all__ = ["new_id", "now_iso"]


def new_id() -> str:
    """A new random id: 22 url-safe characters (128 bits)."""
    return secrets.token_urlsafe(16)


def now_iso() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat()
