"""Offloading under stress: a failing disk, colliding names, hostile names, exact copies."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tether.agent import Agent
from tether.context import ContextConfig, LocalFileOffloader, fit_tool_result
from tether.event import ToolResultEndEvent
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

runs: list[int] = []


@tool(is_read_only=True)
def dump() -> str:
    """Dump the log."""
    runs.append(len(runs) + 1)
    return "\n".join(f"run {len(runs)} line {i}: ok ✓ 完成" for i in range(3_000))


def dumping_agent(offloader: LocalFileOffloader, *call_ids: str) -> tuple[Agent, ScriptedChatModel]:
    steps: list[object] = []
    for call_id in call_ids:
        steps.append(
            AssistantMsg(name="a", content=[ScriptedChatModel.tool_call("dump", id=call_id)])
        )
        steps.append(AssistantMsg(name="a", content="read it"))
    model = ScriptedChatModel(steps)
    agent = Agent(
        "a",
        "You help.",
        model,
        toolkit=Toolkit(tools=[dump]),
        offloader=offloader,
        context_config=ContextConfig(tool_result_limit=500),
    )
    return agent, model


async def test_an_unwritable_offload_dir_keeps_the_reply_and_says_why(tmp_path) -> None:
    runs.clear()
    root = tmp_path / "off"
    agent, model = dumping_agent(LocalFileOffloader(root), "c1")
    root.mkdir()
    (root / agent.state.session_id).write_text("a file where the session folder should be")
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="dump"))]
    assert events[-1].msg.get_text_content() == "read it"  # the reply went on
    assert runs == [1]  # the tool ran once and its output was not thrown away
    (end,) = [e for e in events if isinstance(e, ToolResultEndEvent)]
    assert end.tool_result.get_text().startswith("run 1 line 0:")  # the event has it all
    (kept,) = agent.state.context[-1].tool_results
    text = kept.get_text()
    assert text.startswith("run 1 line 0:") and kept.metadata["offload_path"] is None
    assert "could not be saved (NotADirectoryError" in text
    assert "NotADirectoryError" in kept.metadata["offload_error"]
    model.assert_complete()


async def test_results_with_the_same_call_id_in_two_replies_do_not_overwrite(tmp_path) -> None:
    """Some providers number calls per response (`call_0`); scripts reuse ids too."""
    runs.clear()
    agent, model = dumping_agent(LocalFileOffloader(tmp_path), "call_0", "call_0")
    await agent.reply(UserMsg(name="u", content="dump"))
    await agent.reply(UserMsg(name="u", content="again"))
    results = [r for m in agent.state.context for r in m.tool_results]
    paths = [r.metadata["offload_path"] for r in results]
    assert len(set(paths)) == 2
    assert [Path(p).read_text().split(" line", 1)[0] for p in paths] == ["run 1", "run 2"]
    model.assert_complete()


async def test_concurrent_offloads_of_one_name_each_get_their_own_file(tmp_path) -> None:
    offloader = LocalFileOffloader(tmp_path)
    texts = [f"text {i} " * 50 for i in range(20)]
    paths = await asyncio.gather(*(offloader.offload_text("s", "Bash-c1", t) for t in texts))
    assert len(set(paths)) == 20
    assert sorted(Path(p).read_text() for p in paths) == sorted(texts)


async def test_names_that_differ_only_in_unsafe_characters_do_not_collide(tmp_path) -> None:
    offloader = LocalFileOffloader(tmp_path)
    first = await offloader.offload_text("s", "get/x", "first")
    second = await offloader.offload_text("s", "get:x", "second")
    assert first != second
    assert (Path(first).read_text(), Path(second).read_text()) == ("first", "second")


@pytest.mark.parametrize(
    "name, call_id",
    [("../../escape", "../../x"), ("..", ".."), ("a/../../b", "/etc/passwd"), ("ok", "..\\..\\x")],
)
async def test_tool_names_and_ids_cannot_steer_the_path(tmp_path, name: str, call_id: str) -> None:
    root = tmp_path / "root"
    result = ToolResultBlock(id=call_id, name=name, output="x " * 4_000)
    state = AgentState()
    kept = await fit_tool_result(
        result, ContextConfig(tool_result_limit=100), LocalFileOffloader(root), state
    )
    path = Path(kept.metadata["offload_path"])
    assert path.parent == (root / state.session_id / "tool_results").resolve()
    assert path.read_text() == "x " * 4_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]


async def test_the_offloaded_file_is_byte_identical_to_the_output(tmp_path) -> None:
    output = "\r\n".join(f"行 {i}\tvalue\u00a0{i} 😀 \x1b[1mbold\x1b[0m" for i in range(2_000))
    result = ToolResultBlock(id="c", name="t", output=output)
    kept = await fit_tool_result(
        result, ContextConfig(tool_result_limit=200), LocalFileOffloader(tmp_path), AgentState()
    )
    assert Path(kept.metadata["offload_path"]).read_bytes() == output.encode()


async def test_a_compression_that_cannot_offload_changes_nothing_and_says_what_to_do(
    tmp_path,
) -> None:
    root = tmp_path / "off"
    model = ScriptedChatModel([], context_length=4_000)
    agent = Agent("a", "You help.", model, offloader=LocalFileOffloader(root))
    await agent.observe([UserMsg(name="u", content=f"m{i} " + "word " * 60) for i in range(60)])
    root.mkdir()
    (root / agent.state.session_id).write_text("a file where the session folder should be")
    before = agent.state.model_dump_json()
    with pytest.raises(OSError) as info:
        await agent.compress_context()
    assert any("make that folder writable" in note for note in info.value.__notes__)
    assert agent.state.model_dump_json() == before  # nothing dropped unsaved
    assert model.calls == []
