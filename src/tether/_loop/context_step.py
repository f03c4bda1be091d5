"""The context side of a reasoning step: compression through hooks, the prompt, the messages."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from tether import middleware
from tether.context import CompressionRequest, ContextConfig, compress_context
from tether.context._compress import may_need_compressing
from tether.context._truncate import fits_whole
from tether.message import ContentBlock, HintBlock, Msg, SystemMsg, TextBlock
from tether.middleware import chain_awaitable, overrides

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.event import AgentEvent
    from tether.state import AgentState

__all__ = ["build_system_prompt", "compress_with_hooks", "fits_whole", "request_messages"]


async def build_system_prompt(agent: Agent, state: AgentState, tools_prompt: str) -> str:
    """The agent's prompt, the sources' blocks, the summary, then `on_system_prompt` hooks."""
    parts = [agent.system_prompt]
    if tools_prompt:
        parts.append(tools_prompt)
    if state.summary:
        parts.append(f"<context_summary>\n{state.summary}\n</context_summary>")
    prompt = "\n\n".join(parts) if len(parts) > 1 else parts[0]
    call: middleware.SystemPromptCall | None = None
    for mw in agent.middlewares:
        if overrides(mw, "on_system_prompt"):  # skips the pass-through ones, and inactive ones
            if call is None:
                reply_id = state.reply.reply_id if state.reply is not None else ""
                call = middleware.SystemPromptCall(agent=agent, state=state, reply_id=reply_id)
            prompt = await mw.on_system_prompt(prompt, call)
    return prompt


async def compress_with_hooks(
    agent: Agent,
    state: AgentState,
    system_prompt: str,
    *,
    force: bool,
    config: ContextConfig,
    tools: Sequence[dict[str, Any]] | None = None,
) -> AgentEvent | None:
    """Compress the context through the `on_compress_context` hooks.

    `tools` are the schemas the coming step sends; when not given (a manual
    `compress_context()`), the agent's current tools are used, so the threshold check
    and the token count after compressing include them.
    """
    if tools is None:
        tools = (await agent.toolkit_view(state, None, with_prompt=False)).schemas
    hooks = agent.middlewares
    if not hooks or not any(overrides(mw, "on_compress_context") for mw in hooks):
        if not force and not may_need_compressing(state, agent.model, config, system_prompt, tools):
            return None  # the common step: under the threshold, nothing to build
        reply_id = state.reply.reply_id if state.reply else None
        return await compress_context(
            CompressionRequest(
                state=state,
                model=agent.model,
                config=config,
                offloader=agent.offloader,
                system_prompt=system_prompt,
                reply_id=reply_id,
                force=force,
                tools=tools,
            )
        )

    reply_id = state.reply.reply_id if state.reply else None

    async def handler(call: middleware.CompressCall) -> AgentEvent | None:
        return await compress_context(
            CompressionRequest(
                state=call.state,
                model=agent.model,
                config=call.config,
                offloader=agent.offloader,
                system_prompt=system_prompt,
                reply_id=call.reply_id,
                force=force,
                tools=tools,
            )
        )

    call = middleware.CompressCall(agent=agent, state=state, reply_id=reply_id, config=config)
    result: AgentEvent | None = await chain_awaitable(
        agent.middlewares, "on_compress_context", call, handler
    )
    return result


def request_messages(state: AgentState, system_prompt: str, hint: str | None) -> list[Msg]:
    """The system message, then the context; the reply in progress as a snapshot + `hint`.

    The reply in progress is left out while it has no block yet (the model would see an
    empty assistant turn after the user's message).
    """
    context = state.context
    system = _fresh_system_msg(system_prompt)  # each request gets its own copy
    messages: list[Msg] = [system, *context]  # one pointer copy
    if context:
        last = context[-1]
        in_progress = state.reply is not None and last.id == state.reply.reply_id
        # The reply in progress keeps growing: the model gets a snapshot of it.
        content = list(last.content)
        if hint is not None:
            content.append(HintBlock(hint=hint))
        if in_progress and not content:
            messages.pop()
        else:
            messages[-1] = _with_content(last, content)
    return messages


_new, _set = object.__new__, object.__setattr__
# pydantic's own slots, written through their descriptors (no attribute lookup by name)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
M = TypeVar("M", bound=BaseModel)


def _copied(model: M, values: dict[str, Any], fields_set: set[str]) -> M:
    """A model of `model`'s class holding `values` (its extra and private dicts copied)."""
    new = _new(type(model))
    _set(new, "__dict__", values)
    _set_fields_set(new, fields_set)
    extra, private = model.__pydantic_extra__, model.__pydantic_private__
    _set_extra(new, None if extra is None else dict(extra))
    _set_private(new, None if private is None else dict(private))
    return new


def _with_content(msg: Msg, content: list[ContentBlock]) -> Msg:
    """`msg.model_copy(update={"content": content})` by hand, in two thirds of its time."""
    values = msg.__dict__.copy()
    values["content"] = content
    return _copied(msg, values, msg.__pydantic_fields_set__ | {"content"})


def _fresh_system_msg(system_prompt: str) -> SystemMsg:
    """A copy of the prompt's prototype system message that shares nothing mutable with it.

    `detached` for the one shape the prototype has (text blocks, whose fields are all
    immutable, and empty metadata), in two thirds of its time.
    """
    proto = _system_msg(system_prompt)
    values = proto.__dict__.copy()
    values["content"] = [
        _copied(b, b.__dict__.copy(), set(b.__pydantic_fields_set__)) for b in proto.content
    ]
    values["metadata"] = {}
    return _copied(proto, values, set(proto.__pydantic_fields_set__))


@lru_cache(maxsize=64)
def _system_msg(system_prompt: str) -> SystemMsg:
    # The model of the system message for a prompt text, never handed out: a copy of it
    # costs a third of building one. Text blocks and no metadata (`_fresh_system_msg`).
    msg: SystemMsg = SystemMsg(name="system", content=prompt_blocks(system_prompt))
    return msg


def prompt_blocks(system_prompt: str) -> list[TextBlock]:
    """The system prompt as the content of a system message."""
    return [TextBlock(text=system_prompt)]
