"""The context side of a reasoning step: compression through hooks, the prompt, the messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from tether.context._compress import CompressionRequest, compress_context
from tether.context._config import ContextConfig
from tether.context._offloader import Offloader
from tether.message import HintBlock, Msg, SystemMsg
from tether.middleware import (
    CompressCall,
    MiddlewareBase,
    SystemPromptCall,
    chain_awaitable,
    overrides,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from tether.event import AgentEvent
    from tether.model import ChatModelBase
    from tether.state import AgentState
    from tether.tool import ToolkitView

__all__ = ["AgentLike", "build_system_prompt", "compress_with_hooks", "request_messages"]


class AgentLike(Protocol):
    """What these helpers read from the agent (which the hook records also carry)."""

    @property
    def system_prompt(self) -> str:
        """The agent's own system prompt."""

    @property
    def model(self) -> ChatModelBase:
        """The model that writes summaries."""

    @property
    def offloader(self) -> Offloader | None:
        """Where compressed messages are written out, if anywhere."""

    @property
    def middlewares(self) -> Sequence[MiddlewareBase]:
        """The hooks, outermost first."""

    async def toolkit_view(
        self,
        state: AgentState,
        structured_model: type[BaseModel] | None,
        *,
        with_prompt: bool = True,
    ) -> ToolkitView:
        """The tools of one step (their schemas are part of every request)."""


async def build_system_prompt(agent: AgentLike, state: AgentState, tools_prompt: str) -> str:
    """The agent's prompt, the sources' blocks, the summary, then `on_system_prompt` hooks."""
    parts = [agent.system_prompt]
    if tools_prompt:
        parts.append(tools_prompt)
    if state.summary:
        parts.append(f"<context_summary>\n{state.summary}\n</context_summary>")
    prompt = "\n\n".join(parts)
    reply_id = state.reply.reply_id if state.reply is not None else ""
    call = SystemPromptCall(agent=agent, state=state, reply_id=reply_id)
    for mw in agent.middlewares:
        if overrides(mw, "on_system_prompt"):  # skips the pass-through ones, and inactive ones
            prompt = await mw.on_system_prompt(prompt, call)
    return prompt


async def compress_with_hooks(
    agent: AgentLike,
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
                tools=tools,
            )
        )

    reply_id = state.reply.reply_id if state.reply else None
    call = CompressCall(agent=agent, state=state, reply_id=reply_id, config=config)
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


def request_messages(state: AgentState, system_prompt: str, hint: str | None) -> list[Msg]:
    """The system message, then the context; the reply in progress as a snapshot + `hint`."""
    context = state.context
    messages: list[Msg] = [_system_msg(system_prompt), *context]  # one pointer copy
    if context:
        last = context[-1]
        # The reply in progress keeps growing: the model gets a snapshot of it.
        content = list(last.content)
        if hint is not None:
            content.append(HintBlock(hint=hint))
        messages[-1] = last.model_copy(update={"content": content})
    return messages
