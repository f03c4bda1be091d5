from collections.abc import AsyncIterator

import pytest
from provider_replay import ReplayServer

from _heap import collected_on_exit


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    # Dropped SDK clients are finalised at the end, inside the test's loop: left to a later
    # GC pass they run during an unrelated `ast.parse`, which trips a CPython 3.11.7 check.
    with collected_on_exit():
        replay = ReplayServer()
        await replay.start()
        try:
            yield replay
        finally:
            await replay.stop()
