"""The reasoning step: compress if needed, build the prompt, call the model, commit."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tether.agent._actions import Reason
from tether.agent._run import STRUCTURED_TOOL, Run
from tether.context._step import build_system_prompt, compress_with_hooks, request_messages
from tether.event import AgentEvent, ModelCallEndEvent, ModelCallStartEvent, ModelRetryEvent
from tether.middleware import ModelCall, ReasoningCall, chain_iterator
from tether.model import ChatRequest, NamedToolChoice, RetryNotice, StreamAssembler, ToolChoice
from tether.model import stream_with_retries as _stream
from tether.state._reply import commit_step

__all__ = ["reason"]

FORCED_FINAL_HINT = (
    "You have used all the reasoning steps this reply may take. Do not call any tool: "
    "answer now with what you have."
)
STRUCTURED_HINT = f"Give your final answer by calling `{STRUCTURED_TOOL}` with it."


def _tool_choice(run: Run, action: Reason) -> ToolChoice:
    if action.forced_final:
        return "none"
    if run.cursor.structured_reminder:
        return NamedToolChoice(STRUCTURED_TOOL)
    return "auto"


def reason(run: Run, action: Reason) -> AsyncIterator[AgentEvent]:
    """One reasoning step, wrapped in the `on_reasoning` hooks."""
    call = ReasoningCall(
        agent=run.agent, state=run.state, reply_id=run.reply_id, iteration=run.cursor.iteration + 1
    )
    return chain_iterator(
        run.agent.middlewares, "on_reasoning", call, lambda c: _reason(run, action)
    )


async def _reason(run: Run, action: Reason) -> AsyncIterator[AgentEvent]:
    agent, state, reply_id = run.agent, run.state, run.reply_id
    view = await agent.toolkit_view(state, run.structured_model)
    system_prompt = await build_system_prompt(agent, state, view.prompt)
    compressed = await compress_with_hooks(
        agent, state, system_prompt, force=False, config=agent.context_config, tools=view.schemas
    )
    if compressed is not None:
        yield compressed
        system_prompt = await build_system_prompt(agent, state, view.prompt)  # the new summary
    hint = FORCED_FINAL_HINT if action.forced_final else None
    if run.cursor.structured_reminder:
        hint = STRUCTURED_HINT
    request = ChatRequest(
        messages=request_messages(state, system_prompt, hint),
        tools=[] if action.forced_final else view.schemas,
        tool_choice=_tool_choice(run, action),
        structured_schema=run.cursor.structured_schema,
    )
    if run.observed:
        yield ModelCallStartEvent(reply_id=reply_id, model_name=agent.model.model_name)
    assembler = StreamAssembler(reply_id, emit=run.observed)
    policy = agent.model_config.policy()
    model_name = agent.model.model_name
    model_call = ModelCall(
        agent=agent, state=state, reply_id=reply_id, model=agent.model, request=request
    )
    async for item in chain_iterator(
        agent.middlewares,
        "on_model_call",
        model_call,
        lambda c: _stream(c.model, c.request, policy),
    ):
        if isinstance(item, RetryNotice):
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
        for event in assembler.feed(item):
            yield event
    for event in assembler.close():
        yield event
    response = assembler.response(model_name)
    commit_step(state, response.content, response.usage, forced_final=action.forced_final)
    if run.observed:
        yield ModelCallEndEvent(reply_id=reply_id, model_name=model_name, usage=response.usage)
