"""`detached` copies share nothing mutable with the original: changing one never reaches the other."""

from __future__ import annotations

from pydantic import BaseModel

from tether.message import AssistantMsg, TextBlock, ToolCallBlock, ToolResultBlock, detached


class Answer(BaseModel):
    value: int


def _reply() -> AssistantMsg:
    return AssistantMsg(
        "a",
        [
            ToolCallBlock(id="c1", name="add", input='{"a": 1}', metadata={"k": [1]}),
            ToolResultBlock(id="c1", name="add", output=[TextBlock(text="3")]),
            TextBlock(text="done"),
        ],
        metadata={"nested": {"list": [1, 2]}},
    )


def test_mutating_a_copy_changes_nothing_in_the_original() -> None:
    msg = _reply()
    before = msg.model_dump()
    copy = detached(msg)
    assert copy == msg
    copy.content.append(TextBlock(text="more"))
    copy.content[0].metadata["k"].append(2)

    copy.content[1].output[0].text = "changed"  # type: ignore[union-attr]
    copy.content[2].text = "changed"
    copy.metadata["nested"]["list"].append(3)
    copy.model_fields_set.add("usage")
    assert msg.model_dump() == before


def test_a_set_slot_is_shared_and_an_unset_one_stays_unset() -> None:
    msg = _reply()
    assert detached(msg).structured_output is None
    msg._structured_output = Answer(value=1)
    assert detached(msg).structured_output is msg.structured_output
