"""Anthropic and Gemini reject a conversation that does not open with a user turn."""

from tether.message import AssistantMsg, SystemMsg, UserMsg
from tether.model.providers._anthropic_format import format_anthropic_messages
from tether.model.providers._gemini_format import format_gemini
from tether.model.providers._turns import OPENING_TEXT, split_turns

MSGS = [SystemMsg("s", "Be brief."), AssistantMsg("a", "Welcome back!"), UserMsg("u", "hi")]


def test_anthropic_opens_with_a_user_turn() -> None:
    _, messages = format_anthropic_messages(split_turns(MSGS))
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == [{"type": "text", "text": OPENING_TEXT}]


def test_gemini_opens_with_a_user_turn() -> None:
    _, contents = format_gemini(split_turns(MSGS))
    assert [c.role for c in contents] == ["user", "model", "user"]
    assert contents[0].parts[0].text == OPENING_TEXT


def test_nothing_is_added_when_the_user_opens() -> None:
    _, messages = format_anthropic_messages(split_turns([MSGS[0], MSGS[2]]))
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    _, contents = format_gemini(split_turns([MSGS[0], MSGS[2]]))
    assert [c.role for c in contents] == ["user"] and contents[0].parts[0].text == "hi"
