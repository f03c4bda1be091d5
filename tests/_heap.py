"""Collect what a test made, without walking what was there before it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collected_on_exit() -> Iterator[None]:
    """Run the block, then collect the garbage it made (finalising dropped SDK clients now).

    The objects alive before the block are frozen meanwhile, so the pass walks only the
    block's own: a full pass over the imported SDKs costs ~0.25 s, this one ~0.01 s. They
    are unfrozen at the end (`gc.get_referrers` does not see frozen objects).
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.collect()
        gc.unfreeze()
