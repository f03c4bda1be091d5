"""`Agent`: configuration plus the loop that drives an `AgentState`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel

from tether._ids import new_id
from tether.agent._acting import act, interrupt_unfinished
from tether.agent._actions import Finish, Pause, Reason, next_action
from tether.agent._config import ModelConfig, ReActConfig
from tether.agent._inputs import pause_msg, validate_inputs
from tether.agent._reasoning import build_system_prompt, compress, reason
from tether.agent._resume import ResumeEvent, apply_resume, validate_resume
from tether.agent._run import STRUCTURED_TOOL, Run
from tether.context import ContextConfig, Offloader
from tether.errors import NothingToResumeError, ResumeError
from tether.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import AssistantMsg, Msg, ToolCallState
from tether.middleware import MiddlewareBase, ReplyCall, chain_iterator, overrides
from tether.model import ChatModelBase
from tether.state import AgentState, ReplyCursor
from tether.tool import Toolkit, ToolkitView

__all__ = ["Agent"]


@cache
def _defaults() -> tuple[ReActConfig, ModelConfig, ContextConfig, Toolkit]:
    # Built on first use (not at import): the configs are frozen, the toolkit is empty.
    return ReActConfig(), ModelConfig(), ContextConfig(), Toolkit()


def _is_paused(state: AgentState) -> bool:
    """Whether the reply in progress waits for a confirmation or an external result."""
    msg = state.reply_msg()
    waiting = (ToolCallState.ASKING, ToolCallState.SUBMITTED)
    return msg is not None and any(c.state in waiting for c in msg.tool_calls)


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
            agent=self,
            state=self.state,
            structured_model=structured_schema,
            observed=observed,
        )
        call = ReplyCall(agent=self, state=run.state, inputs=inputs)
        return chain_iterator(
            self.middlewares, "on_reply", call, lambda c: self._drive(run, c.inputs)
        )

    async def _drive(self, run: Run, inputs: Any) -> AsyncIterator[AgentEvent]:
        state = run.state
        if isinstance(
            inputs, UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent
        ):
            validate_resume(state, inputs)
            async for event in apply_resume(run, inputs):
                yield event
        elif inputs is None:
            if state.reply is None:
                raise NothingToResumeError(
                    "reply(None) continues a reply in progress, but there is none; "
                    "pass a message to start one"
                )
        else:
            async for event in self._start(run, validate_inputs(inputs)):
                yield event
        while True:
            action = next_action(state, self.react_config)
            if isinstance(action, Pause):
                if action.asking:
                    yield RequireUserConfirmEvent(
                        reply_id=run.reply_id, tool_calls=[c.model_copy() for c in action.asking]
                    )
                if action.submitted:
                    yield RequireExternalExecutionEvent(
                        reply_id=run.reply_id, tool_calls=[c.model_copy() for c in action.submitted]
                    )
                return
            if isinstance(action, Finish):
                async for event in self._finish(run):
                    yield event
                return
            step = reason(run, action) if isinstance(action, Reason) else act(run)
            async for event in step:
                yield event

    async def _start(self, run: Run, msgs: list[Msg]) -> AsyncIterator[AgentEvent]:
        state = run.state
        if state.reply is not None:
            if _is_paused(state):
                raise ResumeError(
                    f"reply {state.reply.reply_id!r} is paused waiting for tool calls; resume it "
                    "with UserConfirmResultEvent / ExternalExecutionResultEvent, or abort it "
                    "with UserInterruptEvent, before sending a new message"
                )
            await self._close_unfinished(run)  # an abandoned reply (e.g. a failed model call)
        for msg in msgs:
            state.add_message(msg)
        reply_id = new_id()
        state.add_message(AssistantMsg(name=self.name, content=[], id=reply_id))
        schema = run.structured_model
        state.reply = ReplyCursor(
            reply_id=reply_id,
            structured_schema=schema.model_json_schema() if schema is not None else None,
        )
        if run.observed:
            yield ReplyStartEvent(reply_id=reply_id, name=self.name)

    async def _close_unfinished(self, run: Run) -> None:
        msg = run.state.reply_msg()
        calls = msg.tool_calls if msg is not None else []
        await interrupt_unfinished(run, calls, "The reply ended before this call ran.")
        run.state.reply = None

    async def _finish(self, run: Run) -> AsyncIterator[AgentEvent]:
        state, reply_id = run.state, run.reply_id
        msg = state.reply_msg()
        assert msg is not None
        for source in self.toolkit.sources:
            for event in await source.on_reply_end(state, reply_id):
                yield event
        await self._close_unfinished(run)
        yield ReplyEndEvent(reply_id=reply_id, msg=msg)

    async def observe(self, msgs: Msg | list[Msg]) -> None:
        """Add messages to the context without reasoning."""
        checked = validate_inputs(msgs)
        if _is_paused(self.state):
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
        run = Run(agent=self, state=self.state)
        view = await self.toolkit_view(self.state, None)
        prompt = await build_system_prompt(run, view)
        return await compress(run, prompt, force=True, config=context_config or self.context_config)

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
        from tether.tool._structured import StructuredOutputTool  # only for structured replies

        extra = StructuredOutputTool(
            STRUCTURED_TOOL, structured_model, None if structured_model else schema
        )
        return ToolkitView(
            tools={**view.tools, STRUCTURED_TOOL: extra},
            schemas=[*view.schemas, extra.json_schema()],
            prompt=view.prompt,
            sources=view.sources,
        )

    def __repr__(self) -> str:
        return f"<Agent {self.name!r} model={self.model.model_name!r}>"
