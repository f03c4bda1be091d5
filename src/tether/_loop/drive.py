"""The loop itself: one reply, from its inputs to its end or its pause, as a story.

`stream_reply` is what `reply_stream` returns and `reply` drains: the `on_reply` hooks
around `drive`, which asks `next_action` what to do and dispatches to one named step.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, assert_never

from pydantic import BaseModel

from tether import middleware
from tether._loop.acting import act
from tether._loop.budget import open_budget
from tether._loop.current import reply_message
from tether._loop.nested import expand
from tether._loop.next_action import Act, Finish, Pause, Reason, next_action
from tether._loop.pause import pause_events, pause_msg
from tether._loop.reasoning import reason
from tether._loop.reply import begin_reply, close_reply
from tether._loop.results import STRUCTURED_TOOL
from tether._loop.run import Run
from tether.errors import StructuredOutputError, TotalIterationsError
from tether.event import (
    AgentEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
)
from tether.event._ends import reply_end
from tether.message import Msg, detached
from tether.middleware._chain import (
    chain_iterator,
    close_stream,
    contract_error,
    has_hook,
    overrides_any,
)
from tether.state import Checkpoint

if TYPE_CHECKING:
    from tether.agent import Agent

__all__ = ["run_reply", "stream_reply"]

_STREAM_HOOKS = ("on_reply", "on_reasoning", "on_acting")
"""The hooks that see the reply's events."""


def stream_reply(
    agent: Agent,
    inputs: Any,
    structured_schema: type[BaseModel] | None,
    checkpoint: Checkpoint | None,
    *,
    every_event: bool,
) -> AsyncIterator[AgentEvent]:
    """The events of one reply, through the `on_reply` hooks.

    `every_event=False` (`reply()`): the events only a watcher reads are built only if a
    middleware watches the stream (`Run.announces` says which).
    """
    return _open(agent, inputs, structured_schema, checkpoint, every_event=every_event)[1]


def _open(
    agent: Agent,
    inputs: Any,
    structured_schema: type[BaseModel] | None,
    checkpoint: Checkpoint | None,
    *,
    every_event: bool,
) -> tuple[Run, AsyncIterator[AgentEvent]]:
    """The drive's `Run` and its event stream (inside the `on_reply` hooks, if any)."""
    hooks = agent.middlewares
    watched = every_event or (bool(hooks) and overrides_any(hooks, _STREAM_HOOKS))
    run = Run(
        agent=agent,
        state=agent.state,
        structured_model=structured_schema,
        observed=watched,
        checkpoint=checkpoint,
        budget=open_budget(agent.state, agent.react_config.max_total_iters),
    )
    if hooks and has_hook(hooks, "on_reply"):
        call = middleware.ReplyCall(agent=agent, state=run.state, inputs=inputs)
        stream = chain_iterator(hooks, "on_reply", call, lambda c: drive(run, c.inputs))
    else:
        stream = drive(run, inputs)
    return run, stream if checkpoint is None else _rolled_back_on_failure(run, stream)


async def run_reply(
    agent: Agent,
    inputs: Any,
    structured_schema: type[BaseModel] | None,
    checkpoint: Checkpoint | None,
) -> Msg:
    """Drain `stream_reply`: REPLY_END's message, or the paused reply saying what it waits for."""
    pauses: list[AgentEvent] = []
    final: Msg | None = None
    # Drain the whole stream: middleware may still act after REPLY_END.
    _, stream = _open(agent, inputs, structured_schema, checkpoint, every_event=False)
    async for event in stream:
        if isinstance(event, ReplyEndEvent):
            final = event.msg
        elif isinstance(event, RequireUserConfirmEvent | RequireExternalExecutionEvent):
            pauses.append(event)
    if final is not None:
        return final
    if not pauses:
        raise contract_error(agent.middlewares, "on_reply")
    return pause_msg(agent.state, pauses)


async def drive(run: Run, inputs: Any) -> AsyncIterator[AgentEvent]:
    """Start (or resume, or continue) the reply, then step until it ends or pauses."""
    agent = run.agent
    run.start()
    before = run.state.reply
    started = await begin_reply(run, inputs, agent.name, agent.react_config.on_rejection)
    run.reply_id = run.cursor.reply_id
    # Only the run that started the reply may derive its blocks' ids (`places`).
    run.derives_ids = before is None or before.reply_id != run.reply_id
    await run.save()
    for event in started:
        yield event
    while True:
        action = next_action(run.state, agent.react_config)
        if run.deferred and not (
            isinstance(action, Act | Pause)
            or (isinstance(action, Finish) and run.finishes_at_once())
        ):
            # Reasoning (and finishing, unless it awaits nothing outside the loop) awaits
            # outside the loop: a deferred save point first.
            await run.save()
            for event in run.released():
                yield event
        match action:
            case Pause():
                await run.save()
                for event in run.released():  # a model step saved with the pause
                    yield event
                for event in _pause_events(run, action):
                    yield event
                return
            case Finish():
                for event in await finish(run):
                    yield event
                return
            case Reason():
                action = _counted(run, action)
                steps = run.cursor.iteration
                step = reason(run, action)
            case Act():
                step = act(run)
            case _:
                assert_never(action)
        try:
            async for event in step:
                yield event
        except BaseException:  # stopped: close the step now, so nothing settles later
            await close_stream(step)
            raise
        if isinstance(action, Reason) and run.cursor.iteration == steps:
            raise contract_error(agent.middlewares, "on_reasoning")


def _counted(run: Run, action: Reason) -> Reason:
    """Count a reasoning step of the tree; past its limit, the root's must answer now."""
    budget, name = run.budget, run.agent.name
    if budget is None:
        return action
    if budget.exhausted():
        limit = budget.root.limit
        if budget.parent is not None:
            raise TotalIterationsError(
                f"sub-agent {name!r} stopped: this reply took all {limit} reasoning steps "
                "its agent tree may take (`ReActConfig(max_total_iters=...)` of the "
                "outermost agent); answer with what you have, or raise that limit"
            )
        action = Reason(forced_final=True)
    budget.take()
    return action


def _pause_events(run: Run, action: Pause) -> Iterator[AgentEvent]:
    """The events that end a paused stream; a call waiting on a sub-agent shows its calls."""
    if not action.submitted:
        return pause_events(run.reply_id, action.asking, action.submitted)
    asking, submitted = expand(run.state, action.asking, action.submitted)
    return pause_events(run.reply_id, asking, submitted)


async def finish(run: Run) -> list[AgentEvent]:
    """Close the reply; its events are announced once it is closed (and saved)."""
    state, reply_id, agent = run.state, run.reply_id, run.agent
    msg = reply_message(state)
    assert msg is not None
    events: list[AgentEvent] = []
    for source in agent.toolkit.sources:
        events += await source.on_reply_end(state, reply_id)
    structured = state.reply is not None and state.reply.structured_json_schema is not None
    await close_reply(state, run.commit)
    await run.save()  # with the final model step, if it was deferred (`finishes_at_once`)
    events[:0] = run.released()  # (drive wrote any other deferred step before finishing)
    if (
        structured
        and "structured_output" not in msg.metadata
        and agent.react_config.on_missing_structured_output == "raise"
    ):
        raise StructuredOutputError(
            f"the model ended reply {reply_id!r} without calling `{STRUCTURED_TOOL}` "
            "(also after a reminder); the reply is kept as text in the state and on "
            "`error.msg`. Use a model that follows tool choice, or set "
            '`ReActConfig(on_missing_structured_output="return_text")`',
            msg=detached(msg),
        )
    return [*events, reply_end(reply_id, detached(msg))]


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
