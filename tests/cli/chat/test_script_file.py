"""`ScriptedChatModel.from_file`: the YAML/JSON script format, good and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether import Agent, ScriptedChatModel, UserMsg
from tether.errors import ModelResponseError, ScriptExhaustedError, ScriptFileError
from tether.event import ToolCallEndEvent
from tether.model import from_string
from tether.tool import tool


@tool(is_read_only=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


async def test_yaml_script_plays_thinking_text_and_calls(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "- thinking: adding\n"
        "  text: Let me add.\n"
        "  tool_calls: [{name: add, input: {a: 2, b: 3}}]\n"
        "- text: It is 5.\n",
    )
    model = ScriptedChatModel.from_file(path)
    from tether import Toolkit

    agent = Agent("a", "You add.", model, Toolkit(tools=[add]))
    calls = [
        e
        async for e in agent.reply_stream(UserMsg("user", "2+3?"))
        if isinstance(e, ToolCallEndEvent)
    ]
    model.assert_complete()
    assert calls[0].tool_call.name == "add" and json.loads(calls[0].tool_call.input) == {
        "a": 2,
        "b": 3,
    }
    assert calls[0].tool_call.id.startswith("call_")
    final = agent.state.context[-1]
    assert final.get_text_content() == "Let me add.\nIt is 5."
    assert "adding" in [b.thinking for b in final.content if b.type == "thinking"]


async def test_json_script_and_error_step(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps([{"error": "ModelResponseError: no such model"}]), "s.json")
    model = from_string(f"scripted:{path}")
    agent = Agent("a", "x", model)
    with pytest.raises(ModelResponseError, match="no such model"):
        await agent.reply(UserMsg("user", "hi"))


async def test_running_past_the_end(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(_write(tmp_path, "- text: one\n"))
    agent = Agent("a", "x", model)
    await agent.reply(UserMsg("user", "1"))
    with pytest.raises(ScriptExhaustedError):
        await agent.reply(UserMsg("user", "2"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("text: not a list\n", "must be a list"),
        ("- [1, 2]\n", "must be a mapping"),
        ("- {}\n", "must be a mapping"),
        ("- colour: blue\n", "unknown keys ['colour']"),
        ("- text: 3\n", "`text` must be a string"),
        ("- tool_calls: {name: x}\n", "`tool_calls` must be a list"),
        ("- tool_calls: [{input: {}}]\n", "needs a `name`"),
        ("- tool_calls: [{name: x, input: [1]}]\n", "`input` must be a mapping"),
        ("- tool_calls: [{name: x, id: y}]\n", "takes only `name` and `input`"),
        ("- error: down\n", "'TypeName: message'"),
        ("- error: 'NoSuchError: x'\n", "'TypeName: message'"),
        ("- error: 'ConnectionError: x'\n  text: y\n", "takes no other keys"),
        ("- text: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_scripts_are_typed_errors_naming_the_step(tmp_path: Path, text, message) -> None:
    with pytest.raises(ScriptFileError) as caught:
        ScriptedChatModel.from_file(_write(tmp_path, text))
    assert message in str(caught.value)
    assert "s.yaml" in str(caught.value)


def test_missing_and_broken_json_files(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match="cannot read"):
        ScriptedChatModel.from_file(tmp_path / "absent.yaml")
    with pytest.raises(ScriptFileError, match="not valid JSON"):
        ScriptedChatModel.from_file(_write(tmp_path, "[{", "s.json"))


async def test_a_step_can_report_usage(tmp_path: Path) -> None:
    path = _write(tmp_path, "- text: Hi.\n  usage: {input_tokens: 300, output_tokens: 56}\n")
    agent = Agent("a", "Be brief.", ScriptedChatModel.from_file(path))
    await agent.reply(UserMsg("user", "hello"))
    assert (agent.state.usage.input_tokens, agent.state.usage.output_tokens) == (300, 56)


@pytest.mark.parametrize("usage", ["12", "{input_tokens: -1}", "{tokens: 3}"])
def test_a_bad_usage_names_the_step(tmp_path: Path, usage: str) -> None:
    path = _write(tmp_path, f"- text: Hi.\n  usage: {usage}\n")
    with pytest.raises(ScriptFileError, match="step 0 .*`usage` must be a mapping"):
        ScriptedChatModel.from_file(path)
