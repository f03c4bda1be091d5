"""Id and timestamp factories, cheap enough for every event."""

from __future__ import annotations

import itertools
import secrets
import time

__all__ = ["ID_PREFIX", "derived_block_id", "new_id", "next_id_number", "now_iso"]

ID_PREFIX = secrets.token_hex(6)
"""This process's random id prefix (12 hex digits)."""
next_id_number = itertools.count(1).__next__
"""The counter after `ID_PREFIX` (as 8 hex digits); whoever formats ids itself draws here."""
_last_second = -1
_second_text = ""


def new_id() -> str:
    """A new id, unique across processes: a random per-process prefix and a counter."""
    return f"{ID_PREFIX}{next_id_number():08x}"


def now_iso() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    global _last_second, _second_text
    second, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    if second != _last_second:
        _second_text = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        _last_second = second
    return f"{_second_text}{nanoseconds // 1000:06d}+00:00"


def derived_block_id(msg_id: str, index: int) -> str:
    """The id of the block at `index` of message `msg_id` when the state's JSON has none.

    A string given as a message's content becomes a block with this id, and the state's
    JSON leaves such ids out.
    """
    return f"{msg_id}.{index}"
