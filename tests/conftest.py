"""Shared fixtures: the whole suite runs offline against local servers only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tether.event import AgentEvent


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    """Drain an event stream into a list."""
    return [event async for event in stream]


def types(events: list[Any]) -> list[str]:
    """The `type` values of a list of events, as plain strings."""
    return [str(e.type) for e in events]


@pytest.fixture
def collect_events():  # type: ignore[no-untyped-def]
    return collect
