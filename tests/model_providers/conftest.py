import gc
from collections.abc import AsyncIterator

import pytest
from provider_replay import ReplayServer


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    replay = ReplayServer()
    await replay.start()
    try:
        yield replay
    finally:
        await replay.stop()
        # Finalise dropped SDK clients now, inside the test's loop: left to a later GC pass
        # they run during an unrelated `ast.parse`, which trips a CPython 3.11.7 check.
        # Then freeze what is left (the SDKs imported by the test): the next pass walks only
        # what the next test makes (a full pass over the SDKs' objects cost ~0.25 s a test).
        gc.collect()
        gc.freeze()
