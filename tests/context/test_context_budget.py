"""Edge budgets: the summary's own size, prompt plus tools, tiny windows, repeated compressions."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_helpers import is_summary_request, request_tokens

from tether.agent import Agent
from tether.context import ContextConfig, estimate_text_tokens
from tether.errors import ContextTooLargeError
from tether.event import ContextCompressedEvent
from tether.message import AssistantMsg, Msg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

WORDS = "the quick brown fox jumps over the lazy dog "


def chat(n: int, words: int = 5) -> list[Msg]:
    return [
        (UserMsg if i % 2 == 0 else AssistantMsg)(name="x", content=f"m{i} " + WORDS * words)
        for i in range(n)
    ]


def answer(text: str = "ok") -> object:
    return lambda r: AssistantMsg(name="a", content=text)


async def test_an_oversized_summary_is_compressed_not_mistaken_for_the_prompt() -> None:
    """A summary written for a 128k window; the session moves to a 4k model."""
    state = AgentState(summary="## Goal\n" + WORDS * 400)
    assert estimate_text_tokens(state.summary or "") > 3_200  # alone over the trigger
    seen: list[ChatRequest] = []

    def summarise(request: ChatRequest) -> Msg:
        seen.append(request)
        return AssistantMsg(name="s", content="## Goal\nshorter")

    model = ScriptedChatModel([summarise, answer("fine")], context_length=4_000)
    agent = Agent("a", "You help.", model, state=state)
    await agent.observe(chat(10))
    final = await agent.reply(UserMsg(name="u", content="hi"))
    assert final.get_text_content() == "fine"
    assert (agent.state.summary or "").startswith("## Goal\nshorter")
    (call,) = seen
    assert request_tokens(call) <= 4_000  # the old summary was cut to fit the call
    assert "[earlier summary cut]" in (call.messages[-1].get_text_content() or "")
    model.assert_complete()


async def test_an_oversized_summary_shrinks_even_with_nothing_older_to_compress() -> None:
    state = AgentState(summary="## Goal\n" + WORDS * 380)  # over the trigger on its own
    model = ScriptedChatModel(
        [lambda r: AssistantMsg(name="s", content="## Goal\nbrief"), answer()],
        context_length=4_000,
    )
    agent = Agent("a", "You help.", model, state=state)
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="hi"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    assert compressed.compressed_messages == 0 and compressed.summarised
    assert agent.state.summary == "## Goal\nbrief"
    assert "no new messages" in (model.calls[0].messages[-1].get_text_content() or "")
    assert "brief" in (model.calls[1].messages[0].get_text_content() or "")
    model.assert_complete()


async def test_a_failed_shrink_cuts_the_summary_to_its_budget() -> None:
    state = AgentState(summary="## Goal\n" + WORDS * 380)
    model = ScriptedChatModel([ConnectionError("down"), answer()], context_length=4_000)
    agent = Agent("a", "You help.", model, state=state)
    await agent.reply(UserMsg(name="u", content="hi"))
    summary = agent.state.summary or ""
    budget = ContextConfig().summary_budget(4_000)
    assert summary.startswith("## Goal\nthe quick") and "Notice" not in summary
    assert estimate_text_tokens(summary) <= budget
    model.assert_complete()


def big_tool(description: str) -> object:
    @tool(is_read_only=True)
    def lookup(q: str) -> str:
        """Look up."""
        return q

    lookup.description = description
    return lookup


async def test_prompt_plus_tool_schemas_over_the_threshold_raise_before_any_call() -> None:
    model = ScriptedChatModel([answer()], context_length=2_000)
    toolkit = Toolkit(tools=[big_tool(WORDS * 300)])  # ~2,700 tokens of schema
    agent = Agent("a", "You help.", model, toolkit=toolkit)
    state_before = agent.state.model_dump()
    with pytest.raises(ContextTooLargeError, match=r"tool schemas \(about \d+ tokens\)"):
        await agent.reply(UserMsg(name="u", content="hi"))
    assert isinstance(ContextTooLargeError("x"), RuntimeError)
    assert model.calls == []
    with pytest.raises(ContextTooLargeError, match="offer fewer tools"):
        await agent.compress_context()
    assert agent.state.context[0].get_text_content() == "hi"
    assert state_before["summary"] == agent.state.summary is None


async def test_prompt_and_tools_under_the_threshold_do_not_raise() -> None:
    model = ScriptedChatModel([answer("fine")], context_length=2_000)
    agent = Agent("a", "You help.", model, toolkit=Toolkit(tools=[big_tool(WORDS * 60)]))
    assert (await agent.reply(UserMsg(name="u", content="hi"))).get_text_content() == "fine"


class PerCompressionOffloader:
    """An offloader that writes each compression to a new file (e.g. object storage)."""

    def __init__(self, root: Path) -> None:
        self.root, self.count = root, 0

    async def offload_messages(self, session_id: str, messages: list[Msg]) -> str:
        self.count += 1
        path = self.root / f"{session_id}-{self.count}.jsonl"
        path.write_text("".join(m.model_dump_json() + "\n" for m in messages))
        return str(path)

    async def offload_text(self, session_id: str, name: str, text: str) -> str:
        path = self.root / f"{name}.txt"
        path.write_text(text)
        return str(path)


async def test_repeated_compressions_fold_the_summary_and_keep_every_reference(tmp_path) -> None:
    prompts: list[str] = []

    def summarise(request: ChatRequest) -> Msg:
        assert is_summary_request(request)
        prompts.append(request.messages[-1].get_text_content() or "")
        return AssistantMsg(name="s", content=f"## Goal\nsummary {len(prompts)}")

    model = ScriptedChatModel([summarise] * 3, context_length=4_000)
    offloader = PerCompressionOffloader(tmp_path)
    agent = Agent("a", "You help.", model, offloader=offloader)
    paths = []
    for _ in range(3):
        await agent.observe(chat(30))
        event = await agent.compress_context()
        assert isinstance(event, ContextCompressedEvent) and event.offload_path
        paths.append(event.offload_path)
    summary = agent.state.summary or ""
    assert summary.startswith("## Goal\nsummary 3")
    # each call folded the previous summary (without the reference lines) into the new one
    assert "<previous_summary>\n## Goal\nsummary 2\n</previous_summary>" in prompts[2]
    assert "Full text of the summarised" not in prompts[2]
    # every offloaded part is still reachable from the summary, oldest first
    positions = [summary.index(p) for p in paths]
    assert positions == sorted(positions) and len(set(paths)) == 3
    model.assert_complete()


@pytest.mark.parametrize("length", [16, 64, 256, 1_000])
async def test_tiny_windows_never_crash_or_loop(length: int) -> None:
    model = ScriptedChatModel(
        [lambda r: AssistantMsg(name="s" if is_summary_request(r) else "a", content="ok")] * 8,
        context_length=length,
    )
    agent = Agent("a", "Hi.", model)
    await agent.observe(chat(6))
    for _ in range(3):
        final = await agent.reply(UserMsg(name="u", content="next?"))
        assert final.get_text_content() == "ok"
        assert agent.state.context[0].role == "user"
    answers = [c for c in model.calls if not is_summary_request(c)]
    assert len(answers) == 3 and len(model.calls) <= 8  # one compression per step at most


async def test_all_small_messages_over_the_threshold_compress_by_count() -> None:
    model = ScriptedChatModel(
        [lambda r: AssistantMsg(name="s", content="## Goal\nmany")] * 2 + [answer()],
        context_length=4_000,
    )
    agent = Agent("a", "You help.", model)
    await agent.observe([UserMsg(name="u", content=f"ok {i}") for i in range(600)])
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="hi"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    assert compressed.summarised and compressed.compressed_messages > 450
    assert compressed.after_tokens <= 0.2 * 4_000 + 100
    model.assert_complete()
