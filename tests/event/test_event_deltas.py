"""`delta_maker`: delta events built without validation are the validated events."""

import re
from datetime import datetime

import pytest

from tether import _fast
from tether._ids import new_id
from tether.event import (
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolResultTextDeltaEvent,
    _deltas,
    delta_maker,
    event_adapter,
)

DELTA_CLASSES = [
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolResultTextDeltaEvent,
]


@pytest.mark.parametrize("cls", DELTA_CLASSES)
def test_a_made_event_is_the_validated_event(cls: type) -> None:
    made = delta_maker(cls, "r1", "b1")("Hel")
    validated = cls(reply_id="r1", block_id="b1", delta="Hel")
    assert type(made) is cls
    assert list(made.__dict__) == list(validated.__dict__)  # the JSON's key order
    same = {"id": validated.id, "created_at": validated.created_at}
    assert made.model_copy(update=same) == validated
    assert made.model_fields_set == validated.model_fields_set == {"reply_id", "block_id", "delta"}
    assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None
    again = event_adapter.validate_json(made.model_dump_json())
    assert type(again) is cls and again == made
    assert made.model_dump_json() == validated.model_copy(update=made.__dict__).model_dump_json()


def test_ids_are_unique_and_in_the_form_of_other_ids() -> None:
    make = delta_maker(TextBlockDeltaEvent, "r1", "b1")
    other = delta_maker(TextBlockDeltaEvent, "r1", "b2")
    ids = [make("x").id for _ in range(700)] + [other("y").id for _ in range(300)]
    assert len(set(ids)) == 1000  # past several 256-id rounds of the counter's high part
    assert all(re.fullmatch(r"[0-9a-f]{20}", i) for i in ids)
    assert ids[0][:12] == ids[-1][:12]  # one per-process prefix, then the counter
    counters = [int(i[12:], 16) for i in ids]
    assert counters == sorted(counters) and counters[-1] - counters[0] == 999


def test_delta_ids_and_other_ids_are_one_sequence() -> None:
    make = delta_maker(TextBlockDeltaEvent, "r1", "b1")
    ids = [id_ for _ in range(300) for id_ in (make("x").id, new_id())]
    assert len(set(ids)) == 600
    assert {i[:12] for i in ids} == {ids[0][:12]}  # the process's one prefix
    assert [int(i[12:], 16) for i in ids] == list(
        range(int(ids[0][12:], 16), 600 + int(ids[0][12:], 16))
    )


def test_timestamps_are_utc_iso_with_microseconds() -> None:
    event = delta_maker(TextBlockDeltaEvent, "r1", "b1")("x")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", event.created_at)
    made = datetime.fromisoformat(event.created_at)
    now = datetime.fromisoformat(
        TextBlockDeltaEvent(reply_id="r", block_id="b", delta="").created_at
    )
    assert 0 <= (now - made).total_seconds() < 5


def test_one_blocks_deltas_share_a_timestamp_only_within_a_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [10**18]
    stamps = iter(f"2026-01-01T00:00:00.{i:06d}+00:00" for i in range(100))
    monkeypatch.setattr(_deltas, "_time_ns", lambda: clock[0])
    monkeypatch.setattr(_deltas, "now_iso", lambda: next(stamps))
    make = delta_maker(TextBlockDeltaEvent, "r1", "b1")
    first = make("a").created_at
    clock[0] += 999_999
    assert make("b").created_at == first  # the same millisecond
    clock[0] += 1
    second = make("c").created_at
    assert second != first
    clock[0] -= 5  # the clock went back: no stale time is reused
    assert make("d").created_at not in (first, second)
    other = delta_maker(TextBlockDeltaEvent, "r1", "b2")
    assert other("e").created_at not in (first, second)  # a new block reads the clock


def test_events_share_nothing_mutable() -> None:
    make = delta_maker(TextBlockDeltaEvent, "r1", "b1")
    one, two = make("a"), make("b")
    one.delta = "changed"
    one.id = "mine"
    assert (two.delta, two.model_fields_set) == ("b", {"reply_id", "block_id", "delta"})
    assert one.model_fields_set == {"reply_id", "block_id", "delta", "id"}
    assert make("c").reply_id == "r1"


def test_when_pydantic_builds_differently_the_events_are_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(_deltas._builders, ThinkingBlockDeltaEvent, None)
    event = delta_maker(ThinkingBlockDeltaEvent, "r1", "b1")("hm")
    assert type(event) is ThinkingBlockDeltaEvent
    assert (event.reply_id, event.block_id, event.delta) == ("r1", "b1", "hm")


@pytest.mark.parametrize("cls", DELTA_CLASSES)
def test_the_fast_build_is_used_even_after_the_class_was_built(cls: type) -> None:
    cls(reply_id="r", block_id="b", delta="built")  # pydantic then reuses the class's validator
    monkey = dict(_deltas._builders)
    _deltas._builders.pop(cls, None)
    try:
        found = _deltas._builder(cls)
        assert found is not None and found[0] is _fast._BUILDS[cls]
    finally:
        _deltas._builders.clear()
        _deltas._builders.update(monkey)
