"""A streamed reply's events are what they were when every event was validated.

`fixtures/stream_events.json` was written by `stream_events_sample.py` on the tree before
`tether.event._trusted` (which is gone again: every event but the deltas is validated; `2260a2e`, which already derives streamed
text and thinking block ids from their places): each event's class, fields-set and JSON,
ids numbered by first appearance and times replaced.
"""

import json
import re
from pathlib import Path

from stream_events_sample import events_json

from tether._ids import new_id, now_iso
from tether.event._stamps import event_id, event_time

FIXTURE = Path(__file__).parent / "fixtures" / "stream_events.json"


def test_a_streamed_replys_events_are_unchanged() -> None:
    assert events_json() == json.loads(FIXTURE.read_text())


def test_ids_and_times_are_new_ids_and_now_isos() -> None:
    first, middle, last = new_id(), event_id(), new_id()
    assert re.fullmatch(r"[0-9a-f]{20}", middle)
    assert first[:12] == middle[:12] == last[:12]
    assert int(first[12:], 16) < int(middle[12:], 16) < int(last[12:], 16)
    before, stamp, after = now_iso(), event_time(), now_iso()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", stamp)
    assert before <= stamp <= after


def test_ids_stay_unique_past_256_and_65536() -> None:
    ids = [event_id() for _ in range(70_000)]
    assert len(set(ids)) == len(ids)
    assert all(int(b[12:], 16) == int(a[12:], 16) + 1 for a, b in zip(ids, ids[1:], strict=False))
