"""`Agent`: configuration plus the loop that drives an `AgentState`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel

from tether.agent._acting import act
from tether.agent._actions import Finish, Pause, Reason, next_action
from tether.agent._config import ModelConfig, ReActConfig
from tether.agent._reasoning import reason
from tether.agent._run import STRUCTURED_TOOL, Run
from tether.context import ContextConfig, Offloader
from tether.context._step import build_system_prompt, compress_with_hooks
from tether.errors import NothingToResumeError, ResumeError
from tether.event import (
    AgentEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
)
from tether.message import Msg
from tether.message._inputs import validate_inputs
from tether.middleware import MiddlewareBase, ReplyCall, chain_iterator, overrides
from tether.model import ChatModelBase
from tether.state import AgentState
from tether.state._pause import (
    ResumeEvent,
    apply_resume,
    is_paused,
    pause_events,
    pause_msg,
    validate_resume,
)
from tether.state._reply import close_reply, start_reply
from tether.tool import Toolkit, ToolkitView

__all__ = ["Agent"]


@cache
def _defaults() -> tuple[ReActConfig, ModelConfig, ContextConfig, Toolkit]:
    # Built on first use (not at import): the configs are frozen, the toolkit is empty.
    return ReActConfig(), ModelConfig(), ContextConfig(), Toolkit()


class Agent:
    """A stateless reason-act loop: configuration here, progress in `state`.

    `reply`/`reply_stream` take a `Msg` or list of them (start a reply), a
    `UserConfirmResultEvent` / `ExternalExecutionResultEvent` / `UserInterruptEvent`
    (resume the paused reply), or `None` (continue from the state as it is). Nothing is
    bound at construction: assigning `agent.state = other` switches sessions fully, and
    agents may share a toolkit and a model.
    """

    def __init__(
        self,
        name: str,
        system_prompt: str,
        model: ChatModelBase,
        toolkit: Toolkit | None = None,
        state: AgentState | None = None,
        offloader: Offloader | None = None,
        middlewares: Sequence[MiddlewareBase] | None = None,
        model_config: ModelConfig | None = None,
        context_config: ContextConfig | None = None,
        react_config: ReActConfig | None = None,
    ) -> None:
        react, model_defaults, context, empty_toolkit = _defaults()
        self.name = name
        self.system_prompt = system_prompt
        self.model = model
        self.toolkit = toolkit if toolkit is not None else empty_toolkit
        self.state = state if state is not None else AgentState()
        self.offloader = offloader
        self.middlewares: tuple[MiddlewareBase, ...] = tuple(middlewares or ())
        self.model_config = model_config or model_defaults
        self.context_config = context_config or context
        self.react_config = react_config or react

    async def reply(
        self,
        inputs: Msg | list[Msg] | ResumeEvent | None = None,
        *,
        structured_schema: type[BaseModel] | None = None,
    ) -> Msg:
        """Run the loop to the end of the reply, or to a pause, and return its message.

        A paused reply returns a copy of the reply so far whose `metadata["awaiting"]`
        names what it waits for and `metadata["pause_events"]` holds the events.
        """
        pauses: list[AgentEvent] = []
        final: Msg | None = None
        # The caller wants the final message: events only observers need are built only
        # when a middleware watches the stream.
        watched = any(
            overrides(mw, hook)
            for mw in self.middlewares
            for hook in ("on_reply", "on_reasoning", "on_acting")
        )
        # Drain the whole stream: middleware may still act after REPLY_END.
        async for event in self._stream(inputs, structured_schema, observed=watched):
            if isinstance(event, ReplyEndEvent):
                final = event.msg
            elif isinstance(event, RequireUserConfirmEvent | RequireExternalExecutionEvent):
                pauses.append(event)
        if final is not None:
            return final
        return pause_msg(self.state, pauses)

    def reply_stream(
        self,
        inputs: Msg | list[Msg] | ResumeEvent | None = None,
        *,
        structured_schema: type[BaseModel] | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the loop, yielding every event (see `tether.event` for their order)."""
        return self._stream(inputs, structured_schema, observed=True)

    def _stream(
        self, inputs: Any, structured_schema: type[BaseModel] | None, *, observed: bool
    ) -> AsyncIterator[AgentEvent]:
        run = Run(
            agent=self, state=self.state, structured_model=structured_schema, observed=observed
        )
        call = ReplyCall(agent=self, state=run.state, inputs=inputs)
        return chain_iterator(
            self.middlewares, "on_reply", call, lambda c: self._drive(run, c.inputs)
        )

    async def _drive(self, run: Run, inputs: Any) -> AsyncIterator[AgentEvent]:
        async for event in self._begin(run, inputs):
            yield event
        while True:
            action = next_action(run.state, self.react_config)
            if isinstance(action, Pause):
                for event in pause_events(run.reply_id, action.asking, action.submitted):
                    yield event
                return
            if isinstance(action, Finish):
                async for event in self._finish(run):
                    yield event
                return
            step = reason(run, action) if isinstance(action, Reason) else act(run)
            async for event in step:
                yield event

    async def _begin(self, run: Run, inputs: Any) -> AsyncIterator[AgentEvent]:
        """Start a reply (messages), resume the paused one (an event), or continue (None)."""
        state = run.state
        if isinstance(inputs, ResumeEvent):
            validate_resume(state, inputs)
            on_rejection = self.react_config.on_rejection
            async for event in apply_resume(state, inputs, run.commit, on_rejection=on_rejection):
                yield event
        elif inputs is not None:
            msgs = validate_inputs(inputs)
            reply_id = await start_reply(state, msgs, self.name, run.structured_model, run.commit)
            if run.observed:
                yield ReplyStartEvent(reply_id=reply_id, name=self.name)
        elif state.reply is None:
            raise NothingToResumeError(
                "reply(None) continues a reply in progress, but there is none; "
                "pass a message to start one"
            )

    async def _finish(self, run: Run) -> AsyncIterator[AgentEvent]:
        state, reply_id = run.state, run.reply_id
        msg = state.reply_msg()
        assert msg is not None
        for source in self.toolkit.sources:
            for event in await source.on_reply_end(state, reply_id):
                yield event
        await close_reply(state, run.commit)
        yield ReplyEndEvent(reply_id=reply_id, msg=msg)

    async def observe(self, msgs: Msg | list[Msg]) -> None:
        """Add messages to the context without reasoning."""
        checked = validate_inputs(msgs)
        if is_paused(self.state):
            raise ResumeError("a reply is paused; resume or interrupt it before observing messages")
        for msg in checked:
            self.state.add_message(msg)

    async def compress_context(
        self, context_config: ContextConfig | None = None
    ) -> AgentEvent | None:
        """Compress the context now.

        Raises `ContextTooLargeError` (a `RuntimeError`) when the system prompt alone
        passes the threshold.
        """
        view = await self.toolkit_view(self.state, None)
        prompt = await build_system_prompt(self, self.state, view.prompt)
        config = context_config or self.context_config
        return await compress_with_hooks(
            self, self.state, prompt, force=True, config=config, tools=view.schemas
        )

    async def toolkit_view(
        self,
        state: AgentState,
        structured_model: type[BaseModel] | None,
        *,
        with_prompt: bool = True,
    ) -> ToolkitView:
        """The tools of one step, plus the per-reply structured-output tool if asked for."""
        view = await self.toolkit.view(state, with_prompt=with_prompt)
        schema = state.reply.structured_schema if state.reply is not None else None
        if schema is None:
            return view
        from tether.tool._structured_view import with_structured_tool  # structured replies only

        return with_structured_tool(view, STRUCTURED_TOOL, structured_model, schema)

    def __repr__(self) -> str:
        return f"<Agent {self.name!r} model={self.model.model_name!r}>"
