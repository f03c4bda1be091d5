"""The permission prompt's answers become the library's resume events."""

from __future__ import annotations

import json

from tether.cli.chat._confirm import ask_confirmation, choices, question
from tether.event import RequireUserConfirmEvent, UserConfirmResultEvent, UserInterruptEvent
from tether.message import ToolCallBlock
from tether.permission import PermissionRule


def _pause(*calls: ToolCallBlock) -> RequireUserConfirmEvent:
    return RequireUserConfirmEvent(reply_id="r1", tool_calls=list(calls))


def _answers(*lines: str):
    asked: list[tuple[str, str]] = []
    queue = list(lines)

    async def ask(message: str, default: str) -> str:
        asked.append((message, default))
        answer = queue.pop(0)
        if answer == "^C":
            raise KeyboardInterrupt
        return answer

    return ask, asked


WRITE = ToolCallBlock(
    id="c1", name="Write", input=json.dumps({"file_path": "a.md", "content": "x"}),
    suggested_rules=[PermissionRule.parse("Write(/a.md)")],
)  # fmt: skip
BASH = ToolCallBlock(id="c2", name="Bash", input=json.dumps({"command": "make"}))


def test_question_names_the_tool_summary_and_rule() -> None:
    assert question(WRITE) == (
        "Allow Write a.md? [y]es / [a]lways (Write(./a.md)) / [n]o, tell it why / [e]dit "
    )  # the rule's path reads from the work dir; the rule itself stays Write(/a.md)
    assert "[a]lways" not in question(BASH)  # nothing to suggest: no "always"


async def test_edit_json_input_re_asks_until_it_is_an_object() -> None:
    ask, asked = _answers("e", "not json", "e", '{"file_path": "b.md", "content": "y"}')
    answers = await ask_confirmation(_pause(WRITE), ask)
    assert isinstance(answers.event, UserConfirmResultEvent)
    (result,) = answers.event.confirm_results
    assert result.confirmed and json.loads(result.tool_call.input)["file_path"] == "b.md"
    assert asked[1] == ("Input (JSON): ", WRITE.input)  # pre-filled with the call's input


async def test_always_yes_and_no_across_two_calls() -> None:
    ask, _ = _answers("maybe", "a", "n", "too slow")
    answers = await ask_confirmation(_pause(WRITE, BASH), ask)
    first, second = answers.event.confirm_results
    assert first.confirmed and [str(r) for r in first.rules] == ["Write(/a.md)"]
    assert not second.confirmed
    assert answers.reasons == ["I declined the Bash call (make): too slow"]
    ask, _ = _answers("a", "y")  # "always" without a suggestion is not an answer
    answers = await ask_confirmation(_pause(BASH), ask)
    assert answers.event.confirm_results[0].confirmed
    assert answers.event.confirm_results[0].rules == []


async def test_ctrl_c_interrupts_the_paused_reply() -> None:
    ask, _ = _answers("y", "^C")
    answers = await ask_confirmation(_pause(WRITE, BASH), ask)
    assert isinstance(answers.event, UserInterruptEvent) and answers.event.reply_id == "r1"


def test_menu_choices_offer_always_only_with_a_rule() -> None:
    assert choices(WRITE) == [
        ("y", "Yes"),
        ("a", "Yes, and always allow Write(./a.md)"),
        ("n", "No, and tell it why"),
        ("e", "Edit the call, then run it"),
    ]
    assert [key for key, _ in choices(BASH)] == ["y", "n", "e"]


async def test_a_menu_answer_and_a_typed_reason() -> None:
    ask, asked = _answers("not needed")
    shown: list[str] = []

    async def choose(text: str, options: list[tuple[str, str]]) -> str:
        shown.append(text)
        return "n"

    answers = await ask_confirmation(_pause(BASH), ask, choose=choose)
    assert shown == ["Allow Bash make? [y]es / [n]o, tell it why / [e]dit"]
    assert not answers.event.confirm_results[0].confirmed
    assert answers.reasons == ["I declined the Bash call (make): not needed"]
    assert asked == [("Tell it why (Enter to just say no): ", "")]


NESTED = WRITE.model_copy(update={"id": "t1/c1", "metadata": {"agent_path": ["Task"]}})


async def test_a_sub_agents_call_may_be_allowed_here_and_in_the_parent() -> None:
    assert question(NESTED).startswith("Task asks: Allow Write a.md?")
    assert "always here and in [p]arent" in question(NESTED)
    assert "[p]arent" not in question(WRITE)  # the outermost agent has no parent
    assert [key for key, _ in choices(NESTED)] == ["y", "a", "p", "n", "e"]
    assert [key for key, _ in choices(WRITE)] == ["y", "a", "n", "e"]
    ask, _ = _answers("p")
    (result,) = (await ask_confirmation(_pause(NESTED), ask)).event.confirm_results
    assert result.confirmed and result.rules_scope == "agent_and_parents"
    assert [str(r) for r in result.rules] == ["Write(/a.md)"]
    ask, _ = _answers("a")
    (result,) = (await ask_confirmation(_pause(NESTED), ask)).event.confirm_results
    assert result.rules_scope == "agent"
    ask, _ = _answers("p", "y")  # no parent to remember it in: asked again
    (result,) = (await ask_confirmation(_pause(WRITE), ask)).event.confirm_results
    assert result.confirmed and result.rules == []
