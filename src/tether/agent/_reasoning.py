"""The reasoning step: compress if needed, build the prompt, call the model, commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from tether.agent._actions import Reason
from tether.agent._run import STRUCTURED_TOOL, Run
from tether.context import CompressionRequest, compress_context
from tether.event import AgentEvent, ModelCallEndEvent, ModelCallStartEvent, ModelRetryEvent
from tether.message import HintBlock, Msg, SystemMsg, ToolCallBlock
from tether.middleware import (
    CompressCall,
    ModelCall,
    ReasoningCall,
    SystemPromptCall,
    chain_awaitable,
    chain_iterator,
)
from tether.model import ChatRequest, NamedToolChoice, RetryNotice, StreamAssembler, ToolChoice
from tether.model import stream_with_retries as _stream
from tether.tool import ToolkitView

__all__ = ["build_system_prompt", "compress", "reason"]

FORCED_FINAL_HINT = (
    "You have used all the reasoning steps this reply may take. Do not call any tool: "
    "answer now with what you have."
)


async def build_system_prompt(run: Run, view: ToolkitView) -> str:
    """The agent's prompt, the sources' blocks, the summary, then `on_system_prompt` hooks."""
    parts = [run.agent.system_prompt]
    if view.prompt:
        parts.append(view.prompt)
    if run.state.summary:
        parts.append(f"<context_summary>\n{run.state.summary}\n</context_summary>")
    prompt = "\n\n".join(parts)
    reply_id = run.state.reply.reply_id if run.state.reply is not None else ""
    call = SystemPromptCall(agent=run.agent, state=run.state, reply_id=reply_id)
    for mw in run.agent.middlewares:
        prompt = await mw.on_system_prompt(prompt, call)
    return prompt


async def compress(
    run: Run,
    system_prompt: str,
    *,
    force: bool,
    config: Any,
    tools: list[dict[str, Any]] | None = None,
) -> AgentEvent | None:
    """Compress the context through the `on_compress_context` hooks."""
    agent = run.agent
    reply_id = run.state.reply.reply_id if run.state.reply else None

    async def handler(call: CompressCall) -> AgentEvent | None:
        return await compress_context(
            CompressionRequest(
                state=call.state,
                model=agent.model,
                config=call.config,
                offloader=agent.offloader,
                system_prompt=system_prompt,
                reply_id=call.reply_id,
                force=force,
                tools=tools or (),
            )
        )

    call = CompressCall(agent=agent, state=run.state, reply_id=reply_id, config=config)
    result: AgentEvent | None = await chain_awaitable(
        agent.middlewares, "on_compress_context", call, handler
    )
    return result


_SYSTEM_MSGS: dict[str, SystemMsg] = {}


def _system_msg(prompt: str) -> SystemMsg:
    """The system message for `prompt`, reused while the prompt text stays the same."""
    msg = _SYSTEM_MSGS.get(prompt)
    if msg is None:
        if len(_SYSTEM_MSGS) >= 256:
            _SYSTEM_MSGS.clear()
        msg = _SYSTEM_MSGS[prompt] = SystemMsg(name="system", content=prompt)
    return msg


def _request_messages(run: Run, system_prompt: str, hint: str | None) -> list[Msg]:
    context = run.state.context
    messages: list[Msg] = [_system_msg(system_prompt), *context]  # one pointer copy
    if context:
        last = context[-1]
        # The reply in progress keeps growing: the model gets a snapshot of it.
        content = list(last.content)
        if hint is not None:
            content.append(HintBlock(hint=hint))
        messages[-1] = last.model_copy(update={"content": content})
    return messages


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
    system_prompt = await build_system_prompt(run, view)
    compressed = await compress(
        run, system_prompt, force=False, config=agent.context_config, tools=view.schemas
    )
    if compressed is not None:
        yield compressed
        system_prompt = await build_system_prompt(run, view)  # it carries the new summary
    tools = [] if action.forced_final else view.schemas
    hint = FORCED_FINAL_HINT if action.forced_final else None
    if run.cursor.structured_reminder:
        hint = STRUCTURED_HINT
    request = ChatRequest(
        messages=_request_messages(run, system_prompt, hint),
        tools=tools,
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
    _commit(run, response.content, response.usage, action)
    if run.observed:
        yield ModelCallEndEvent(reply_id=reply_id, model_name=model_name, usage=response.usage)


def _commit(run: Run, blocks: list[Any], usage: Any, action: Reason) -> None:
    """Write the step's answer into the state at once (nothing half-written on failure)."""
    state, cursor = run.state, run.cursor
    msg = state.reply_msg()
    assert msg is not None
    if action.forced_final:
        blocks = [b for b in blocks if not isinstance(b, ToolCallBlock)]
    msg.content.extend(blocks)
    state.note_blocks(blocks)
    if usage is not None:
        state.record_usage(usage)
        msg.usage = usage if msg.usage is None else msg.usage + usage
    cursor.iteration += 1
    if any(isinstance(b, ToolCallBlock) for b in blocks):
        return
    if cursor.structured_schema is not None and "structured_output" not in msg.metadata:
        if not action.forced_final and not cursor.structured_reminder:
            cursor.structured_reminder = True  # one more step, forced to call the tool
            return
    cursor.finished = True
