"""Closing async streams: a ground-level helper for the hook chain, the loop and tracing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

__all__ = ["close_stream"]


async def close_stream(stream: AsyncIterator[Any]) -> None:
    """Close `stream` now if it can be closed (an async generator can)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
