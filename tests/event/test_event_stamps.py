"""`tether.event._stamps`: table-made ids and times are `new_id`'s and `now_iso`'s texts."""

from datetime import UTC, datetime

import pytest

from tether._ids import new_id
from tether.event import _stamps


def _iso(ns: int) -> str:
    """`now_iso()`'s text for the instant `ns` (nanoseconds since the epoch)."""
    return datetime.fromtimestamp(ns // 1000 / 1e6, UTC).isoformat(timespec="microseconds")


# instants across a millisecond, a second, a minute and a day, and back in time
INSTANTS = [
    1_780_000_000_123_456_789,
    1_780_000_000_123_999_999,
    1_780_000_000_124_000_000,
    1_780_000_000_999_999_001,
    1_780_000_001_000_000_000,
    1_780_000_059_999_999_999,
    1_780_000_060_000_000_000,
    1_780_012_799_999_999_000,
    1_780_012_800_000_000_000,
    1_780_000_000_123_456_000,
    1_780_000_000_123_457_000,
]


def test_event_time_is_the_iso_text_of_the_instant(monkeypatch: pytest.MonkeyPatch) -> None:
    for ns in INSTANTS:
        monkeypatch.setattr(_stamps, "_time_ns", lambda ns=ns: ns)
        assert _stamps.event_time() == _iso(ns), ns


def test_stamped_gives_the_first_three_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    for ns in INSTANTS:
        monkeypatch.setattr(_stamps, "_time_ns", lambda ns=ns: ns)
        before = new_id()
        fields = _stamps.stamped("r1")
        after = new_id()
        assert list(fields) == ["reply_id", "id", "created_at"]
        assert fields["reply_id"] == "r1" and fields["created_at"] == _iso(ns)
        assert fields["id"][:12] == before[:12] == after[:12]  # the process's prefix
        assert int(fields["id"][12:], 16) == int(before[12:], 16) + 1 == int(after[12:], 16) - 1


def test_stamped_ids_stay_one_sequence_past_256() -> None:
    ids = [_stamps.stamped("r")["id"] if i % 3 else _stamps.event_id() for i in range(1000)]
    numbers = [int(i[12:], 16) for i in ids]
    assert numbers == list(range(numbers[0], numbers[0] + 1000))
