"""The reasoning step: compress if needed, build the prompt, call the model, commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from tether import middleware
from tether._loop.context_step import build_system_prompt, compress_with_hooks, request_messages
from tether._loop.next_action import Reason
from tether._loop.places import assembler_for, streamed
from tether._loop.reply import commit_step
from tether._loop.results import CallIds
from tether._loop.run import STRUCTURED_TOOL, Run
from tether.context import ContextConfig
from tether.event import AgentEvent, EventType, ModelCallStartEvent, ModelRetryEvent
from tether.middleware._chain import chain_iterator, close_stream, has_hook
from tether.model import (
    ChatRequest,
    NamedToolChoice,
    RetryNotice,
    ToolCallDelta,
    ToolChoice,
    stream_with_retries,
)
from tether.state import ReplyCursor

if TYPE_CHECKING:
    from tether.agent import Agent

__all__ = ["compress_now", "reason"]

_NO_STEPS_LEFT = "You have used all the reasoning steps this reply may take."
FORCED_FINAL_HINT = f"{_NO_STEPS_LEFT} Do not call any tool: answer now with what you have."
STRUCTURED_HINT = f"Give your final answer by calling `{STRUCTURED_TOOL}` with it."
STRUCTURED_FINAL_HINT = f"{_NO_STEPS_LEFT} {STRUCTURED_HINT}"


def _steering(cursor: ReplyCursor, action: Reason) -> tuple[ToolChoice, str | None]:
    """The step's tool choice and hint: a forced final step may only give the answer."""
    if action.forced_final:
        if cursor.structured_json_schema is not None:
            return NamedToolChoice(STRUCTURED_TOOL), STRUCTURED_FINAL_HINT
        return "none", FORCED_FINAL_HINT
    if cursor.structured_reminder:
        return NamedToolChoice(STRUCTURED_TOOL), STRUCTURED_HINT
    return "auto", None


def reason(run: Run, action: Reason) -> AsyncIterator[AgentEvent]:
    """One reasoning step, wrapped in the `on_reasoning` hooks."""
    if not run.agent.middlewares or not has_hook(run.agent.middlewares, "on_reasoning"):
        return _reason(run, action)
    call = middleware.ReasoningCall(
        agent=run.agent, state=run.state, reply_id=run.reply_id, iteration=run.cursor.iteration + 1
    )
    return chain_iterator(
        run.agent.middlewares, "on_reasoning", call, lambda c: _reason(run, action)
    )


async def _reason(run: Run, action: Reason) -> AsyncIterator[AgentEvent]:
    agent, state, reply_id = run.agent, run.state, run.reply_id
    view = await run.view(with_prompt=True)
    system_prompt = await build_system_prompt(agent, state, view.prompt)
    compressed = await compress_with_hooks(
        agent, state, system_prompt, force=False, config=agent.context_config, tools=view.schemas
    )
    if compressed is not None:
        yield compressed
        system_prompt = await build_system_prompt(agent, state, view.prompt)  # the new summary
    cursor = run.cursor
    tool_choice, hint = _steering(cursor, action)
    tools = view.schemas
    if action.forced_final:  # none, or only the structured answer's
        tools = [t for t in tools if tool_choice != "none" and t["name"] == STRUCTURED_TOOL]
    request = ChatRequest(
        messages=request_messages(state, system_prompt, hint),
        tools=tools,
        tool_choice=tool_choice,
        structured_json_schema=cursor.structured_json_schema,
        volatile_prompt=view.dynamic_prompt,
        volatile_tail=view.dynamic_tail,
        stable_tools=view.stable_schemas,
    )
    if run.announces(EventType.MODEL_CALL_START):
        yield ModelCallStartEvent(reply_id=reply_id, model_name=agent.model.model_name)
    assembler = assembler_for(run, emit=run.announces(EventType.TEXT_BLOCK_DELTA))
    policy = agent.model_config.policy()
    model_name = agent.model.model_name
    ids, hooks = CallIds(state), agent.middlewares
    if hooks and has_hook(hooks, "on_model_call"):
        model_call = middleware.ModelCall(
            agent=agent, state=state, reply_id=reply_id, model=agent.model, request=request
        )
        stream = chain_iterator(
            hooks,
            "on_model_call",
            model_call,
            lambda c: stream_with_retries(c.model, c.request, policy),
        )
    else:
        stream = stream_with_retries(agent.model, request, policy)
    try:  # a stopped reply stops the provider's stream now
        async for item in stream:
            if isinstance(item, RetryNotice):
                run.derives_ids = False  # a step tried again: fresh block ids from here on
                model_name = item.next_model_name
                yield ModelRetryEvent(
                    reply_id=reply_id,
                    model_name=item.model_name,
                    attempt=item.attempt,
                    error=f"{type(item.error).__name__}: {item.error}",
                    delay=item.delay,
                    next_model_name=item.next_model_name,
                )
                continue
            for event in assembler.feed(ids.fix(item) if type(item) is ToolCallDelta else item):
                yield event
    except BaseException:
        run.derives_ids = False  # the step failed: no later block of this run derives its id
        streamed(run, assembler)
        await close_stream(stream)
        raise
    for event in assembler.close():
        yield event
    streamed(run, assembler)
    response = assembler.response(model_name)
    commit_step(state, response.content, response.usage, forced_final=action.forced_final)
    end = assembler.end_event(model_name) if run.announces(EventType.MODEL_CALL_END) else None
    # One write with the acting step's first save point, or with the reply's end.
    if run.claims_at_once(view) or run.finishes_at_once():
        run.held = () if end is None else (end,)
        await run.save(merge=True)
        return
    await run.save()
    if end is not None:
        yield end


async def compress_now(agent: Agent, config: ContextConfig) -> AgentEvent | None:
    """Compress the agent's context now (`Agent.compress_context`)."""
    view = await agent.toolkit_view(agent.state, None)
    prompt = await build_system_prompt(agent, agent.state, view.prompt)
    return await compress_with_hooks(
        agent, agent.state, prompt, force=True, config=config, tools=view.schemas
    )
