"""Acceptance: 500 scripted turns with tool results of every size on a 16k-window model."""

from __future__ import annotations

import json
import random
from pathlib import Path

from context_helpers import is_summary_request, msg_text, qwen_tokens, request_tokens, with_usage
from context_samples import SAMPLES

from tether.agent import Agent
from tether.context import ContextConfig, LocalFileOffloader
from tether.event import ContextCompressedEvent, EventType, ReplyEndEvent, ToolResultEndEvent
from tether.message import AssistantMsg, Msg, ToolCallBlock, ToolResultBlock, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ChatRequest, ScriptedChatModel
from tether.tool import Toolkit, tool

WINDOW = 16_000
TURNS = 500
SIZES = [0, 30, 200, 700, 1_500, 4_000, 25_000]  # characters of tool output, roughly
KINDS = sorted(SAMPLES)


@tool(is_read_only=True, is_concurrency_safe=True)
def fetch(kind: str, size: int) -> str:
    """Fetch `size` characters of `kind` text.

    Args:
        kind: English, Chinese, code or JSON.
        size: How many characters.
    """
    sample = SAMPLES[kind]
    return (sample * (size // len(sample) + 1))[:size]


class Plan:
    """What the scripted agent does in each turn (deterministic per turn)."""

    def __init__(self) -> None:
        self.turn = 0
        self.summaries = 0

    def step(self, request: ChatRequest) -> Msg:
        if is_summary_request(request):
            self.summaries += 1
            return AssistantMsg(
                name="s", content=f"## Goal\nanswer the user (summary {self.summaries})"
            )
        rng = random.Random(self.turn)
        reply = request.messages[-1]
        rounds = sum(
            1 for b in reply.content if isinstance(b, ToolResultBlock) and b.id.endswith("-0")
        )
        if rounds < rng.choice([0, 1, 1, 2]):
            calls = [
                ScriptedChatModel.tool_call(
                    "fetch",
                    {"kind": rng.choice(KINDS), "size": rng.choice(SIZES)},
                    id=f"t{self.turn}-r{rounds}-{k}",
                )
                for k in range(rng.choice([1, 1, 2, 3]))
            ]
            return AssistantMsg(name="a", content=[*calls])
        return AssistantMsg(name="a", content=f"turn {self.turn}: " + "fine " * rng.randint(5, 300))

    def respond(self, request: ChatRequest) -> Msg:
        return with_usage(request, self.step(request))


class CountCompressions(MiddlewareBase):
    def __init__(self) -> None:
        self.results: list[object] = []

    async def on_compress_context(self, call, call_next):  # type: ignore[no-untyped-def, override]
        result = await call_next(call)
        if result is not None:
            self.results.append(result)
        return result


def assert_pairs_complete(request: ChatRequest) -> None:
    for msg in request.messages:
        calls = {b.id for b in msg.content if isinstance(b, ToolCallBlock)}
        results = {b.id for b in msg.content if isinstance(b, ToolResultBlock)}
        assert calls == results, f"call without result (or result without call) in {msg.id}"


def stored_messages(path: Path) -> dict[str, Msg]:
    found: dict[str, Msg] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        msg = Msg.model_validate_json(line)
        found[msg.id] = msg
    return found


async def test_five_hundred_turns_stay_in_the_window_and_lose_nothing(tmp_path: Path) -> None:
    plan = Plan()
    model = ScriptedChatModel([plan.respond] * 4 * TURNS, context_length=WINDOW)
    offloader = LocalFileOffloader(tmp_path)
    counter = CountCompressions()
    agent = Agent(
        "a",
        "You are a helpful assistant.",
        model,
        toolkit=Toolkit(tools=[fetch]),
        offloader=offloader,
        middlewares=[counter],
        context_config=ContextConfig(trigger_ratio=0.7, reserve_ratio=0.2, tool_result_limit=1000),
    )
    sent_ids: list[str] = []
    full_results: dict[str, str] = {}
    events: list[ContextCompressedEvent] = []
    for turn in range(TURNS):
        plan.turn = turn
        user = UserMsg(name="u", content=f"turn {turn}: please carry on with part {turn * 7 % 13}")
        sent_ids.append(user.id)
        async for event in agent.reply_stream(user):
            if isinstance(event, ContextCompressedEvent):
                events.append(event)
            elif isinstance(event, ToolResultEndEvent):
                full_results[event.block_id] = event.tool_result.get_text()
            elif isinstance(event, ReplyEndEvent):
                sent_ids.append(event.msg.id)
        assert agent.state.reply is None

    # the session really was long: many compressions, many big results cut
    print(
        "EV",
        len(events),
        plan.summaries,
        len(model.calls),
        sum(len(t) > 4_000 for t in full_results.values()),
        list(full_results.values())[:3],
    )
    assert len(events) >= 30 and plan.summaries >= len(events)
    assert sum(len(t) > 4_000 for t in full_results.values()) >= 100
    # every compression emitted its event, and each says what it did
    assert counter.results == events
    assert all(e.summarised and e.after_tokens < e.before_tokens for e in events)
    # the context never passed the window, and no call ever went without its result
    schemas = qwen_tokens(json.dumps([fetch.json_schema()]))
    for request in model.calls:
        tools = 0 if is_summary_request(request) else schemas
        assert request_tokens(request) + tools <= WINDOW
        assert_pairs_complete(request)
    # with an offloader every original message is on disk (or still in the context)
    on_disk = stored_messages(offloader.messages_path(agent.state.session_id))
    live = {m.id: m for m in agent.state.context}
    assert set(sent_ids) <= set(on_disk) | set(live)
    assert len(on_disk) >= len(sent_ids) - len(live)
    # ...and every tool output in full, whether or not the context copy was cut
    kept = {
        b.id: b
        for m in [*on_disk.values(), *live.values()]
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert set(kept) == set(full_results)
    for call_id, full in full_results.items():
        block = kept[call_id]
        if block.metadata.get("truncated"):
            assert Path(block.metadata["offload_path"]).read_text(encoding="utf-8") == full
        else:
            assert block.get_text() == full
    assert any(e.type is EventType.CONTEXT_COMPRESSED for e in events)
    assert msg_text(agent.state.context[-1]).startswith("turn 499")
