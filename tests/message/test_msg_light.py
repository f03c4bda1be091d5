"""Messages and blocks stay light: no per-instance private dict, discriminators kept."""

from __future__ import annotations

import json

from pydantic import BaseModel

from tether.message import (
    AssistantMsg,
    DataBlock,
    Msg,
    TextBlock,
    ToolCallBlock,
    URLSource,
    UserMsg,
    detached,
)


class Answer(BaseModel):
    value: int


def test_a_message_has_no_private_dict_until_a_structured_answer_is_set() -> None:
    msg = AssistantMsg("a", "x")
    assert msg.__pydantic_private__ is None and msg.structured_output is None
    msg._structured_output = Answer(value=1)
    assert msg.structured_output == Answer(value=1)
    copy = detached(msg)
    assert copy.structured_output is msg.structured_output  # loop-made values are shared
    assert copy == msg and copy.content[0] is not msg.content[0]


def test_a_loaded_message_has_no_structured_answer() -> None:
    msg = AssistantMsg("a", "x")
    msg._structured_output = Answer(value=1)
    loaded = Msg.model_validate_json(msg.model_dump_json())
    assert type(loaded) is AssistantMsg and loaded.structured_output is None
    assert loaded == msg


def test_exclude_defaults_keeps_every_discriminator() -> None:
    blocks = [
        TextBlock(text="t"),
        DataBlock(source=URLSource(url="u")),
        ToolCallBlock(id="c", name="n"),
    ]
    dumped = [json.loads(b.model_dump_json(exclude_defaults=True)) for b in blocks]
    assert [d["type"] for d in dumped] == ["text", "data", "tool_call"]
    assert dumped[1]["source"] == {"type": "url", "url": "u"}
    assert "input" not in dumped[2] and "metadata" not in dumped[2]


def test_default_ids_and_times_are_fresh_per_instance() -> None:
    a, b = TextBlock(text="x"), TextBlock(text="x")
    assert a.id != b.id
    m1, m2 = UserMsg("u", []), UserMsg("u", [])
    assert m1.id != m2.id and m1.created_at <= m2.created_at


def test_the_full_json_of_a_message_is_unchanged() -> None:
    msg = UserMsg("u", [TextBlock(text="x", id="b")], id="m", created_at="t")
    assert json.loads(msg.model_dump_json()) == {
        "name": "u",
        "role": "user",
        "content": [{"type": "text", "text": "x", "id": "b"}],
        "id": "m",
        "metadata": {},
        "usage": None,
        "created_at": "t",
    }
