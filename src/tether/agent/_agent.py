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
from tether.event import (
    AgentEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
)
from tether.message import Msg
from tether.message._copy import detached
from tether.message._inputs import validate_inputs
from tether.middleware import MiddlewareBase, ReplyCall, chain_iterator
from tether.middleware._chain import close_stream, contract_error, overrides_any
from tether.model import ChatModelBase
from tether.state import AgentState, Checkpoint
from tether.state._pause import ResumeEvent, pause_events, pause_msg
from tether.state._reply import begin_reply, close_reply, close_unfinished
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
        checkpoint: Checkpoint | None = None,
    ) -> Msg:
        """Run the loop to the end of the reply, or to a pause, and return its message.

        A paused reply returns a copy of the reply so far whose `metadata["awaiting"]`
        names what it waits for and `metadata["pause_events"]` holds the events.

        `checkpoint(state)` is awaited at every save point: once the reply started (or
        resumed), after each model step, before a batch of tools starts (its calls marked
        running), after each tool result, at a pause and at the end. If it raises, the
        reply stops before its next side effect, the exception propagates, and the state
        is left as it was at the last checkpoint that succeeded.
        """
        pauses: list[AgentEvent] = []
        final: Msg | None = None
        # Events only observers need are built only when a middleware watches the stream.
        watched = overrides_any(self.middlewares, ("on_reply", "on_reasoning", "on_acting"))
        # Drain the whole stream: middleware may still act after REPLY_END.
        stream = self._stream(inputs, structured_schema, checkpoint, observed=watched)
        async for event in stream:
            if isinstance(event, ReplyEndEvent):
                final = event.msg
            elif isinstance(event, RequireUserConfirmEvent | RequireExternalExecutionEvent):
                pauses.append(event)
        if final is not None:
            return final
        if not pauses:
            raise contract_error(self.middlewares, "on_reply")
        return pause_msg(self.state, pauses)

    def reply_stream(
        self,
        inputs: Msg | list[Msg] | ResumeEvent | None = None,
        *,
        structured_schema: type[BaseModel] | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the loop, yielding every event (see `tether.event` for their order).

        Stop early by closing it (`contextlib.aclosing`): tools stop, the state settles.
        `checkpoint` is awaited at every save point, as in `reply`.
        """
        return self._stream(inputs, structured_schema, checkpoint, observed=True)

    def _stream(
        self,
        inputs: Any,
        structured_schema: type[BaseModel] | None,
        checkpoint: Checkpoint | None = None,
        *,
        observed: bool,
    ) -> AsyncIterator[AgentEvent]:
        run = Run(
            agent=self,
            state=self.state,
            structured_model=structured_schema,
            observed=observed,
            checkpoint=checkpoint,
        )
        call = ReplyCall(agent=self, state=run.state, inputs=inputs)
        stream = chain_iterator(
            self.middlewares, "on_reply", call, lambda c: self._drive(run, c.inputs)
        )
        return stream if checkpoint is None else _rolled_back_on_failure(run, stream)

    async def _drive(self, run: Run, inputs: Any) -> AsyncIterator[AgentEvent]:
        run.start()
        started = await begin_reply(run, inputs, self.name, self.react_config.on_rejection)
        await run.save()
        for event in started:
            yield event
        while True:
            action = next_action(run.state, self.react_config)
            if isinstance(action, Pause):
                await run.save()
                for event in pause_events(run.reply_id, action.asking, action.submitted):
                    yield event
                return
            if isinstance(action, Finish):
                for event in await self._finish(run):
                    yield event
                return
            steps = run.cursor.iteration
            step = reason(run, action) if isinstance(action, Reason) else act(run)
            try:
                async for event in step:
                    yield event
            except BaseException:  # stopped: close the step now, so nothing settles later
                await close_stream(step)
                raise
            if isinstance(action, Reason) and run.cursor.iteration == steps:
                raise contract_error(self.middlewares, "on_reasoning")

    async def _finish(self, run: Run) -> list[AgentEvent]:
        """Close the reply; its events are announced once it is closed."""
        state, reply_id = run.state, run.reply_id
        msg = state.reply_msg()
        assert msg is not None
        events: list[AgentEvent] = []
        for source in self.toolkit.sources:
            events += await source.on_reply_end(state, reply_id)
        await close_reply(state, run.commit)
        await run.save()
        return [*events, ReplyEndEvent(reply_id=reply_id, msg=detached(msg))]

    async def observe(self, msgs: Msg | list[Msg]) -> None:
        """Add messages to the context without reasoning (closing a reply left unfinished)."""
        checked, run = validate_inputs(msgs), Run(agent=self, state=self.state)
        await close_unfinished(run.state, run.commit, doing="observing messages")
        for msg in checked:
            run.state.add_message(msg)

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


async def _rolled_back_on_failure(
    run: Run, stream: AsyncIterator[AgentEvent]
) -> AsyncIterator[AgentEvent]:
    """Pass `stream` on; once it ends because a checkpoint failed, roll the state back.

    Outside the middleware chain, so whatever settled the state on the way out (results
    marked interrupted, hooks) is undone too: the state is the last one saved.
    """
    try:
        async for event in stream:
            yield event
    except BaseException:
        await close_stream(stream)
        run.roll_back()
        raise
