"""Event ids and timestamps, the same texts as `tether._ids`' for less work.

Every event gets an id and a `created_at`; formatting them was about half of what making an
event cost. Both are put together here from tables instead of formatted:

- `event_id()` is one of `new_id`'s ids (the process's prefix and the next number of the
  shared counter as 8 hex digits): the text up to the last two digits changes once per 256
  ids and is kept; the last two come from a table.
- `event_time()` is `now_iso()`'s text for the same instant (UTC, microseconds): the text
  up to the millisecond is kept until the clock leaves that millisecond (the text up to
  the second, until it leaves the second), the last three digits and the zone come from a
  table.

`stamped(reply_id)` gives the first three fields of an event's `__dict__` (`reply_id`, `id`,
`created_at`), both made as above in one call.

Both keep their state in one tuple each, replaced whole, so threads never see half of one.
"""

from __future__ import annotations

import time
from typing import Any

from tether._ids import ID_PREFIX, next_id_number

__all__ = ["event_id", "event_time", "stamped"]

_next = next_id_number  # one id sequence with `new_id`
HEX2 = tuple(f"{i:02x}" for i in range(256))
"""Two hex digits per byte value."""
_high: tuple[int, str] = (-1, "")
"""The id counter above its last two hex digits, and the id's text up to them."""

_time_ns = time.time_ns
_strftime = time.strftime
_gmtime = time.gmtime
_TAIL = tuple(f"{i:03d}+00:00" for i in range(1000))
"""The last three digits of the microseconds and the zone."""
_D3 = tuple(f"{i:03d}" for i in range(1000))
"""Three decimal digits."""
_second: tuple[int, str] = (-1, "")
"""The last second (since the epoch) `_milli_text` saw, and its text up to the point."""
_milli: tuple[int, str] = (-1, "")
"""The last millisecond (since the epoch) `event_time` read, and its text up to it."""


def _milli_text(milli: int) -> tuple[int, str]:
    """`milli` (ms since the epoch) and `now_iso()`'s text up to its microseconds."""
    global _second
    second, rest = divmod(milli, 1000)
    head = _second
    if head[0] != second:
        head = _second = (second, _strftime("%Y-%m-%dT%H:%M:%S.", _gmtime(second)))
    return (milli, head[1] + _D3[rest])


def event_id() -> str:
    """`tether._ids.new_id()`: the process's prefix and the shared counter's next number."""
    global _high
    n = _next()
    high = _high
    if high[0] != n >> 8:
        high = _high = (n >> 8, f"{ID_PREFIX}{n >> 8:06x}")
    return high[1] + HEX2[n & 255]


def event_time() -> str:
    """`tether._ids.now_iso()`: the current UTC time in ISO 8601 with microseconds."""
    global _milli
    now = _time_ns() // 1000
    milli = _milli
    if milli[0] != now // 1000:  # another millisecond, or the clock went back
        milli = _milli = _milli_text(now // 1000)
    return milli[1] + _TAIL[now % 1000]


def stamped(reply_id: str) -> dict[str, Any]:
    """`{"reply_id": reply_id, "id": event_id(), "created_at": event_time()}`, in one call."""
    global _high, _milli
    n = _next()
    high = _high
    if high[0] != n >> 8:
        high = _high = (n >> 8, f"{ID_PREFIX}{n >> 8:06x}")
    now = _time_ns() // 1000
    milli = _milli
    if milli[0] != now // 1000:
        milli = _milli = _milli_text(now // 1000)
    return {
        "reply_id": reply_id,
        "id": high[1] + HEX2[n & 255],
        "created_at": milli[1] + _TAIL[now % 1000],
    }
