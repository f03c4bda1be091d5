"""A streamed reply's events are what they were before events were built unvalidated.

`fixtures/stream_events.json` was written by `stream_events_sample.py` on the tree before
`tether.event._trusted` (every event validated; `2260a2e`, which already derives streamed
text and thinking block ids from their places): each event's class, fields-set and JSON,
ids numbered by first appearance and times replaced.
"""

import json
import re
from pathlib import Path

import pytest
from stream_events_sample import events_json

from tether._ids import new_id, now_iso
from tether.event import (
    ModelCallEndEvent,
    ReplyStartEvent,
    TextBlockStartEvent,
    ThinkingBlockEndEvent,
    ToolCallEndEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    _trusted,
)
from tether.event._stamps import event_id, event_time
from tether.message import ChatUsage, ToolCallBlock, ToolResultBlock

FIXTURE = Path(__file__).parent / "fixtures" / "stream_events.json"


def test_a_streamed_replys_events_are_unchanged() -> None:
    assert events_json() == json.loads(FIXTURE.read_text())


CALL = ToolCallBlock(id="c1", name="add", input='{"a": 1}')
RESULT = ToolResultBlock(id="c1", name="add", output="3")
USAGE = ChatUsage(input_tokens=1, output_tokens=2, cost=0.5)

CASES = [
    (_trusted.reply_start, ("r", "n"), ReplyStartEvent, {"name": "n"}),
    (_trusted.text_block_start, ("r", "b"), TextBlockStartEvent, {"block_id": "b"}),
    (
        _trusted.thinking_block_end,
        ("r", "b", "s", True),
        ThinkingBlockEndEvent,
        {"block_id": "b", "signature": "s", "redacted": True},
    ),
    (
        _trusted.tool_call_end,
        ("r", "c1", CALL),
        ToolCallEndEvent,
        {"block_id": "c1", "tool_call": CALL},
    ),
    (
        _trusted.tool_result_start,
        ("r", "c1", "add"),
        ToolResultStartEvent,
        {"block_id": "c1", "name": "add"},
    ),
    (
        _trusted.tool_result_end,
        ("r", "c1", RESULT),
        ToolResultEndEvent,
        {"block_id": "c1", "tool_result": RESULT},
    ),
    (
        _trusted.model_call_end,
        ("r", "m", USAGE, "stop", 0.5),
        ModelCallEndEvent,
        {"model_name": "m", "usage": USAGE, "stop_reason": "stop", "cost": 0.5},
    ),
    (
        _trusted.model_call_end,
        ("r", "m", None, None, 1),  # an int cost: validated, as the constructor does
        ModelCallEndEvent,
        {"model_name": "m", "usage": None, "stop_reason": None, "cost": 1},
    ),
]


@pytest.mark.parametrize(("make", "args", "cls", "fields"), CASES)
def test_a_trusted_event_is_the_validated_event(make, args, cls, fields) -> None:  # type: ignore[no-untyped-def]
    made = make(*args)
    expected = cls(reply_id="r", **fields)
    assert type(made) is cls
    assert made.model_fields_set == expected.model_fields_set
    assert list(made.__dict__) == list(expected.__dict__)
    mine = made.model_dump(exclude={"id", "created_at"})
    assert mine == expected.model_dump(exclude={"id", "created_at"})
    assert made.model_dump_json(exclude={"id", "created_at"}) == expected.model_dump_json(
        exclude={"id", "created_at"}
    )
    assert made.id != expected.id
    assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None


def test_a_trusted_event_gets_its_own_fields_set() -> None:
    one, two = _trusted.reply_start("r", "a"), _trusted.reply_start("r", "b")
    one.name = "c"
    assert one.model_fields_set is not two.model_fields_set


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
