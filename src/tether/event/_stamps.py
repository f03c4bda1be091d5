"""Event ids and timestamps, the same texts as `tether._ids`' for less work.

Every event gets an id and a `created_at`; formatting them was about half of what making an
event cost. Both are put together here from tables instead of formatted:

- `event_id()` is one of `new_id`'s ids (the process's prefix and the next number of the
  shared counter as 8 hex digits): the text up to the last two digits changes once per 256
  ids and is kept; the last two come from a table.
- `event_time()` is `now_iso()`'s text for the same instant (UTC, microseconds): the text
  up to the second is kept until the clock leaves that second, the six digits after it
  and the zone come from two tables.

Both keep their state in one tuple each, replaced whole, so threads never see half of one.
"""

from __future__ import annotations

import time

from tether._ids import ID_PREFIX, next_id_number

__all__ = ["event_id", "event_time"]

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
_second: tuple[int, str] = (-(10**18), "")
"""The start of the last second `event_time` read (µs since the epoch), and its text."""


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
    global _second
    now = _time_ns() // 1000
    head = _second
    micro = now - head[0]
    if not 0 <= micro < 1_000_000:  # another second, or the clock went back
        second = now // 1_000_000
        head = _second = (second * 1_000_000, _strftime("%Y-%m-%dT%H:%M:%S.", _gmtime(second)))
        micro = now - head[0]
    return f"{head[1]}{_D3[micro // 1000]}{_TAIL[micro % 1000]}"
