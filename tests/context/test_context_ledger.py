"""The running token count agrees with a full recount by the estimator at every stage."""

from __future__ import annotations

import json

from context_helpers import is_summary_request

from tether._loop.context_step import build_system_prompt
from tether.agent import Agent
from tether.context import ContextConfig, estimate_msg_tokens, estimate_text_tokens
from tether.event import ConfirmResult, ContextCompressedEvent, UserConfirmResultEvent
from tether.message import AssistantMsg, ChatUsage, Msg, ToolCallBlock, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.state import AgentState
from tether.testing import scripted_agent
from tether.tool import tool

WORDS = "the quick brown fox jumps over the lazy dog "


@tool(is_read_only=True)
def lookup(q: str) -> str:
    """Look a topic up in the team wiki and return the matching page."""
    return f"page about {q}: " + WORDS * 30


@tool(requires_confirmation=True)
def deploy(target: str) -> str:
    """Deploy the current build to a target environment."""
    return f"deployed to {target}"


lookup.description = "Look a topic up in the team wiki. " + WORDS * 40  # a sizeable schema


async def recount(agent: Agent) -> int:
    """What the next request carries, estimated from scratch: prompt, tools, messages."""
    view = await agent.toolkit_view(agent.state, None)
    prompt = await build_system_prompt(agent, agent.state, view.prompt)
    tools = estimate_text_tokens(json.dumps(list(view.schemas)))
    return estimate_text_tokens(prompt) + tools + sum(map(estimate_msg_tokens, agent.state.context))


def chat(n: int) -> list[Msg]:
    return [
        (UserMsg if i % 2 == 0 else AssistantMsg)(name="x", content=f"m{i} " + WORDS * 6)
        for i in range(n)
    ]


TEAM = {
    "tools": [lookup, deploy],
    "context_length": 6_000,
    "name": "a",
    "system_prompt": "You help the team.",
}
"""The agent every test here runs: `scripted_agent(*steps, **TEAM)`."""


async def test_manual_compression_counts_the_tool_schemas() -> None:
    agent = scripted_agent(AssistantMsg(name="s", content="## Goal\nhelp"), **TEAM)
    await agent.observe(chat(60))
    event = await agent.compress_context()
    assert isinstance(event, ContextCompressedEvent)
    assert agent.state.token_anchor > 0  # anchored: the count is the whole request now
    assert agent.state.estimated_tokens == event.after_tokens == await recount(agent)


async def test_automatic_compression_leaves_an_exact_count() -> None:
    seen: list[tuple[int, int]] = []

    async def step(request: ChatRequest) -> Msg:
        if is_summary_request(request):
            return AssistantMsg(name="s", content="## Goal\nhelp")
        seen.append((agent.state.estimated_tokens, await recount(agent)))
        return AssistantMsg(name="a", content="done")

    agent = scripted_agent(*[step] * 3, **TEAM)
    await agent.observe(chat(90))
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="status?"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    # the count the model call was made with equals a recount of that request
    assert seen == [(compressed.after_tokens, compressed.after_tokens)]


async def test_usage_observe_tool_results_and_a_json_round_trip_keep_the_count() -> None:
    usage = ChatUsage(input_tokens=1_234, output_tokens=56)
    calls = AssistantMsg(
        name="a",
        content=[
            ScriptedChatModel.tool_call("lookup", {"q": "ci"}, id="c1"),
            ScriptedChatModel.tool_call("deploy", {"target": "prod"}, id="c2"),
        ],
        usage=usage,
    )
    agent = scripted_agent(calls, AssistantMsg(name="a", content="shipped"), **TEAM)
    paused = await agent.reply(UserMsg(name="u", content="ship it"))
    reply = agent.state.reply_msg()
    assert reply is not None and paused.metadata["awaiting"] == ["user_confirmation"]
    # re-anchored on the provider's usage, plus the estimate of the result added since
    (result,) = reply.tool_results
    assert agent.state.token_anchor == 1_290
    assert agent.state.tokens_since_anchor == estimate_msg_tokens(
        AssistantMsg(name="a", content=[result])
    ) - estimate_msg_tokens(AssistantMsg(name="a", content=[]))
    loaded = AgentState.model_validate_json(agent.state.model_dump_json())
    assert (loaded.token_anchor, loaded.tokens_since_anchor) == (
        agent.state.token_anchor,
        agent.state.tokens_since_anchor,
    )
    other = Agent("a", agent.system_prompt, agent.model, toolkit=agent.toolkit, state=loaded)
    resume = UserConfirmResultEvent(
        reply_id=reply.id,
        confirm_results=[
            ConfirmResult(
                confirmed=True,
                tool_call=ToolCallBlock(id="c2", name="deploy", input='{"target": "prod"}'),
            )
        ],
    )
    before = loaded.estimated_tokens
    final = await other.reply(resume)
    assert final.get_text_content() == "shipped"
    deployed = next(r for r in final.tool_results if r.id == "c2")
    after_result = before + estimate_msg_tokens(AssistantMsg(name="a", content=[deployed])) - 4
    assert other.state.estimated_tokens >= after_result  # + the final text's estimate
    text_tokens = estimate_msg_tokens(AssistantMsg(name="a", content="shipped")) - 4
    assert other.state.estimated_tokens == after_result + text_tokens
    await other.observe(UserMsg(name="u", content="thanks " + WORDS))
    assert other.state.estimated_tokens == after_result + text_tokens + estimate_msg_tokens(
        UserMsg(name="u", content="thanks " + WORDS)
    )


async def test_a_compression_config_passed_by_hand_sets_only_this_call() -> None:
    agent = scripted_agent(AssistantMsg(name="s", content="## Goal\nhelp"), **TEAM)
    await agent.observe(chat(20))
    config = ContextConfig(trigger_ratio=0.5, reserve_ratio=0.05)
    event = await agent.compress_context(config)
    assert isinstance(event, ContextCompressedEvent)
    kept = sum(map(estimate_msg_tokens, agent.state.context))
    assert kept <= config.reserve(6_000) and agent.context_config == ContextConfig()
    assert agent.state.estimated_tokens == await recount(agent)


async def test_an_input_edited_at_confirmation_is_recounted() -> None:
    calls = AssistantMsg(
        name="a", content=[ScriptedChatModel.tool_call("deploy", {"target": "qa"}, id="c")]
    )

    async def confirm(target: str) -> Agent:
        agent = scripted_agent(calls, AssistantMsg(name="a", content="done"), **TEAM)
        paused = await agent.reply(UserMsg(name="u", content="ship it"))
        edited = ToolCallBlock(id="c", name="deploy", input=json.dumps({"target": target}))
        resume = UserConfirmResultEvent(
            reply_id=paused.id, confirm_results=[ConfirmResult(confirmed=True, tool_call=edited)]
        )
        await agent.reply(resume)
        return agent

    same, edited = await confirm("qa"), await confirm("production-" + "eu-west " * 20)
    results = [next(iter(a.state.context[-1].tool_results)) for a in (same, edited)]
    old_in, new_in = '{"target": "qa"}', json.dumps({"target": "production-" + "eu-west " * 20})
    expected = estimate_text_tokens(new_in) - estimate_text_tokens(old_in)
    expected += estimate_msg_tokens(AssistantMsg(name="a", content=[results[1]]))
    expected -= estimate_msg_tokens(AssistantMsg(name="a", content=[results[0]]))
    assert edited.state.estimated_tokens - same.state.estimated_tokens == expected
