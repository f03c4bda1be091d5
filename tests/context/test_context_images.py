"""Images and other data blocks: counted, bounded in tool results, never sent to the summariser."""

from __future__ import annotations

from context_helpers import is_summary_request

from tether.agent import Agent
from tether.context import (
    ContextConfig,
    LocalFileOffloader,
    estimate_block_tokens,
    estimate_msg_tokens,
    fit_tool_result,
)
from tether.event import ContextCompressedEvent, ToolResultEndEvent
from tether.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    Msg,
    TextBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ChatRequest, ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool


def image(i: int) -> DataBlock:
    return DataBlock(source=Base64Source(media_type="image/png", data=f"iVBORw0KGgo{i:04d}="))


async def test_a_result_of_many_images_is_bounded_by_the_limit(tmp_path) -> None:
    pages = ToolResultBlock(
        id="c1",
        name="render",
        output=[TextBlock(text="Rendered 12 pages."), *(image(i) for i in range(12))],
    )
    config = ContextConfig(tool_result_limit=5_000)
    assert estimate_block_tokens(pages) > 12_000
    kept = await fit_tool_result(pages, config, LocalFileOffloader(tmp_path), AgentState())
    assert estimate_block_tokens(kept) <= 5_000
    assert isinstance(kept.output, list)
    shown = [b for b in kept.output if isinstance(b, DataBlock)]
    assert [b.source.data for b in shown] == [image(i).source.data for i in range(len(shown))]
    assert 1 <= len(shown) < 12
    assert kept.metadata["data_left_out"] == 12 - len(shown)
    assert kept.get_text().startswith("Rendered 12 pages.")
    assert f"{12 - len(shown)} image(s) or file(s) of this result were left out" in kept.get_text()
    assert len(pages.output) == 13  # the block given is never changed


@tool(is_read_only=True)
def render() -> list[TextBlock | DataBlock]:
    """Render the document's pages."""
    return [TextBlock(text="pages:"), *(image(i) for i in range(9))]


async def test_the_loop_keeps_the_bounded_copy_and_the_event_all_images() -> None:
    model = ScriptedChatModel(
        [
            AssistantMsg(name="a", content=[ScriptedChatModel.tool_call("render", id="c1")]),
            AssistantMsg(name="a", content="seen"),
        ]
    )
    agent = Agent(
        "a",
        "You help.",
        model,
        toolkit=Toolkit(tools=[render]),
        context_config=ContextConfig(tool_result_limit=3_000),
    )
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="render"))]
    (end,) = [e for e in events if isinstance(e, ToolResultEndEvent)]
    assert isinstance(end.tool_result.output, list) and len(end.tool_result.output) == 10
    (kept,) = agent.state.context[-1].tool_results
    assert estimate_block_tokens(kept) <= 3_000 and kept.metadata["data_left_out"] > 0
    sent = model.calls[1].messages[-1].tool_results[0]
    assert estimate_block_tokens(sent) <= 3_000
    model.assert_complete()


async def test_an_image_heavy_context_compresses_without_sending_images_to_the_summariser() -> None:
    seen: list[ChatRequest] = []

    def step(request: ChatRequest) -> Msg:
        seen.append(request)
        if is_summary_request(request):
            return AssistantMsg(name="s", content="## Goal\nlook at screenshots")
        return AssistantMsg(name="a", content="ok")

    model = ScriptedChatModel([step] * 2, context_length=8_000)
    agent = Agent("a", "You help.", model)
    shots: list[Msg] = [
        UserMsg(name="u", content=[TextBlock(text=f"screenshot {i}"), image(i)]) for i in range(8)
    ]
    await agent.observe(shots)
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="what changed?"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    summary_call, answer_call = seen
    assert is_summary_request(summary_call)
    assert not any(isinstance(b, DataBlock) for m in summary_call.messages for b in m.content)
    assert "[image or file]" in (summary_call.messages[-1].get_text_content() or "")
    assert compressed.compressed_messages == 7 and compressed.after_tokens < 0.8 * 8_000
    kept = agent.state.context
    assert [m.get_text_content() for m in kept[:2]] == ["screenshot 7", "what changed?"]
    assert sum(map(estimate_msg_tokens, kept)) <= 0.2 * 8_000
    model.assert_complete()
