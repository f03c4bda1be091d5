"""Tool results over `tool_result_limit`: head and tail in the context, the whole on disk."""

from __future__ import annotations

import pytest

from tether.agent import Agent
from tether.context import ContextConfig, LocalFileOffloader, estimate_block_tokens, fit_tool_result
from tether.event import EventType, ToolResultEndEvent
from tether.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    TextBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

LINES = "\n".join(f"line {i:05d}: status ok, {i * 37 % 1000} items processed" for i in range(3_000))


def result(output: object = LINES) -> ToolResultBlock:
    return ToolResultBlock(id="c1", name="dump", output=output)  # type: ignore[arg-type]


async def test_a_short_result_is_kept_as_is() -> None:
    small = result("just a little output")
    assert await fit_tool_result(small, ContextConfig(), None, AgentState()) is small


async def test_a_long_result_keeps_head_and_tail_and_points_to_the_full_text(tmp_path) -> None:
    state = AgentState()
    original = result()
    config = ContextConfig(tool_result_limit=1_000)
    kept = await fit_tool_result(original, config, LocalFileOffloader(tmp_path), state)
    assert original.output == LINES  # the block given is never changed
    text = kept.get_text()
    assert estimate_block_tokens(kept) <= 1_000
    assert text.startswith("line 00000:") and text.rstrip().endswith(
        "line 02999: status ok, 963 items processed"
    )
    path = kept.metadata["offload_path"]
    assert path.startswith(str(tmp_path)) and f"saved at {path}; read it with the Read tool" in text
    assert open(path).read() == LINES
    assert kept.metadata["truncated"] is True and kept.metadata["original_tokens"] > 20_000
    omitted = text.split("[... ")[1].split(" tokens")[0]
    assert int(omitted.replace(",", "")) > 20_000
    # the context copy is cut at line breaks: no half lines around the marker
    head, tail = text.split("\n\n[... ")[0], text.split("...]\n\n")[1]
    assert head.splitlines()[-1].startswith("line ") and tail.splitlines()[0].startswith("line ")
    # cutting again does nothing
    assert await fit_tool_result(kept, config, None, state) is kept


async def test_without_an_offloader_the_marker_says_the_middle_is_gone() -> None:
    kept = await fit_tool_result(result(), ContextConfig(tool_result_limit=300), None, AgentState())
    assert "was not saved; rerun the tool with narrower output" in kept.get_text()
    assert kept.metadata["offload_path"] is None
    assert estimate_block_tokens(kept) <= 300


async def test_data_blocks_are_kept_and_only_the_text_is_cut(tmp_path) -> None:
    image = DataBlock(source=Base64Source(media_type="image/png", data="iVBORw0KGgo="))
    kept = await fit_tool_result(
        result([TextBlock(text=LINES), image]),
        ContextConfig(tool_result_limit=2_000),
        LocalFileOffloader(tmp_path),
        AgentState(),
    )
    assert isinstance(kept.output, list) and kept.output[-1] == image
    assert estimate_block_tokens(kept) <= 2_000


async def test_a_tiny_limit_keeps_only_the_marker() -> None:
    kept = await fit_tool_result(result(), ContextConfig(tool_result_limit=1), None, AgentState())
    assert kept.get_text().strip().startswith("[... ") and "line 00000" not in kept.get_text()


@pytest.mark.parametrize("limit", [50, 400, 5_000])
async def test_the_context_copy_is_cut_but_the_event_carries_everything(
    tmp_path, limit: int
) -> None:
    @tool(is_read_only=True)
    def dump() -> str:
        """Dump the log."""
        return LINES

    model = ScriptedChatModel(
        [
            AssistantMsg(name="a", content=[ScriptedChatModel.tool_call("dump", id="c1")]),
            AssistantMsg(name="a", content="read it"),
        ]
    )
    agent = Agent(
        "a",
        "You help.",
        model,
        toolkit=Toolkit(tools=[dump]),
        offloader=LocalFileOffloader(tmp_path),
        context_config=ContextConfig(tool_result_limit=limit),
    )
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="dump it"))]
    (end,) = [e for e in events if isinstance(e, ToolResultEndEvent)]
    assert end.tool_result.get_text() == LINES
    (in_context,) = agent.state.context[-1].tool_results
    assert in_context.metadata["truncated"]
    if limit >= 400:
        assert estimate_block_tokens(in_context) <= limit
    else:  # the marker naming the offload path is itself over the limit: only it is kept
        assert "line 0" not in in_context.get_text()
        assert in_context.metadata["offload_path"] in in_context.get_text()
    assert open(in_context.metadata["offload_path"]).read() == LINES
    # the model's next request saw the cut copy
    sent = model.calls[1].messages[-1].tool_results[0]
    assert sent.get_text() == in_context.get_text() != LINES
    assert events[-1].type is EventType.REPLY_END
    model.assert_complete()
