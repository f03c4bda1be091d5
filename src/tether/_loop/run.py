"""`Run`: what one `reply_stream` call works with (the agent's config and the state)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tether._loop.budget import Budget
from tether._loop.checkpoint import Snapshot, restore, snapshot
from tether._loop.context_step import fits_whole
from tether._loop.current import reply_message
from tether._loop.results import STRUCTURED_TOOL, store_result
from tether._loop.structured import reply_view
from tether.context import fit_tool_result
from tether.event import AgentEvent, EventType
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock
from tether.middleware import overrides
from tether.middleware._chain import has_hook
from tether.state import AgentState, Checkpoint, ReplyCursor, RestoringCheckpoint
from tether.tool import ToolBase, ToolkitView

if TYPE_CHECKING:
    from tether.agent._agent import Agent

__all__ = ["STRUCTURED_TOOL", "Run"]

_FOR_WATCHERS = frozenset(
    {
        EventType.REPLY_START,
        EventType.MODEL_CALL_START,
        EventType.MODEL_CALL_END,
        EventType.TEXT_BLOCK_START,
        EventType.TEXT_BLOCK_DELTA,
        EventType.TEXT_BLOCK_END,
        EventType.THINKING_BLOCK_START,
        EventType.THINKING_BLOCK_DELTA,
        EventType.THINKING_BLOCK_END,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_END,
        EventType.TOOL_RESULT_START,
    }
)
"""The events only a watcher of the stream reads: the loop itself needs none of them.
`reply()` builds them only if a middleware declares it watches every event
(`MiddlewareBase.watches_all_events`); every other event is always built, whoever listens."""
_EVERY: frozenset[EventType] = frozenset()
_PENDING = ToolCallState.PENDING
_FINISHED = ToolCallState.FINISHED


@dataclass(slots=True)
class Run:
    """One drive of the loop: the agent (configuration) and the session state."""

    agent: Agent
    state: AgentState
    structured_model: type[BaseModel] | None = None
    observed: bool = True
    """Someone watches the event stream: every event is built. False (`reply()` with no
    middleware declaring it watches every event): the events in `_FOR_WATCHERS` are not
    (see `announces`)."""
    checkpoint: Checkpoint | None = None
    """Awaited at every save point (see `save`)."""
    reply_id: str = ""
    """The reply's id, once it started (or resumed): set by the loop (`drive`)."""
    saved: Snapshot | None = None
    """The state as of the last successful checkpoint (kept only with a checkpoint), or
    None once a `RestoringCheckpoint` saved it: that checkpoint restores it instead."""
    failed: bool = False
    """A checkpoint raised: the reply stops and the state goes back to `saved`."""
    failure: BaseException | None = None
    """What the failed checkpoint raised: raised again by any later save (a sub-agent's
    tool turns its own failure into a result; the save after it must still stop)."""
    lock: asyncio.Lock | None = None
    """Serialises save points while sub-agents of a batch save concurrently (else None)."""
    derives_ids: bool = False
    """This run started the reply and no step of it failed or was retried: its text and
    thinking blocks may take ids derived from their places (`tether._loop.places`)."""
    next_place: int = 0
    """Every place of the reply's message below this one had a block streamed in this run."""
    deferred: bool = False
    """The last save point was deferred (`save(merge=True)`): the next save writes it too."""
    held: tuple[AgentEvent, ...] = ()
    """The events of a deferred save point: announced once the save that writes it is done
    (`released`), so nothing reaches the caller between the two save points."""
    budget: Budget | None = None
    """The steps of this agent's tree, if a limit counts them (`tether._loop.budget`)."""
    skipped: frozenset[EventType] = field(init=False, default=_EVERY)
    """The events this drive does not build (see `announces`)."""
    restoring: bool = field(init=False, default=False)
    """The checkpoint is a `RestoringCheckpoint`: no copy is kept after a save (asked once:
    a protocol's `isinstance` is slow)."""

    def __post_init__(self) -> None:
        if not self.observed:
            self.skipped = _FOR_WATCHERS
        if self.checkpoint is not None:
            self.restoring = isinstance(self.checkpoint, RestoringCheckpoint)

    @property
    def cursor(self) -> ReplyCursor:
        """The reply in progress."""
        cursor = self.state.reply
        assert cursor is not None, "no reply in progress"
        return cursor

    def announces(self, kind: EventType) -> bool:
        """Whether this drive builds events of `kind`: the one place the loop skips events.

        `reply_stream()` builds every event; `reply()` skips the ones only a watcher of
        the stream reads (block events, REPLY_START, model-call start and end,
        TOOL_RESULT_START) unless a middleware declares `watches_all_events`. REPLY_END,
        tool results, pauses, retries, compression and plugin events are always built.
        """
        return kind not in self.skipped

    def start(self) -> None:
        """Keep the state as loaded: a checkpoint failing before any succeeded rolls back here."""
        if self.checkpoint is not None:
            self.saved = snapshot(self.state)

    async def save(self, *, merge: bool = False) -> None:
        """A save point: await the checkpoint; if it raises, the reply stops here.

        `merge=True` defers it to the next save point, which writes both in one write
        (only where nothing outside the loop is awaited in between: `claims_at_once`). A
        crash before that write loses both; a failing one rolls back to `saved`, the
        state before the deferred one.
        """
        if self.failed:
            if self.failure is not None:
                raise self.failure
            return
        if self.checkpoint is None:
            return
        if merge:
            self.deferred = True
            return
        lock = self.lock
        if lock is None:
            await self._write(self.checkpoint)
            return
        async with lock:
            await self._write(self.checkpoint)

    async def _write(self, checkpoint: Checkpoint) -> None:
        self.deferred = False
        try:
            await checkpoint(self.state)
        except Exception as exc:
            self.failed = True
            self.failure = exc
            raise
        # A checkpoint that restores what it saved needs no copy of the state: none is made.
        self.saved = None if self.restoring else snapshot(self.state)

    def released(self) -> tuple[AgentEvent, ...]:
        """The events held back for a deferred save point, once it is written (else none)."""
        if self.deferred or not self.held:
            return ()
        held, self.held = self.held, ()
        return held

    def _may_defer(self) -> bool:
        """Whether a model step's save point may be deferred at all.

        Both merges ask it first: a checkpoint that has not failed, and no `on_reasoning`
        hook (it runs after the model step, and may await anything).
        """
        if self.checkpoint is None or self.failed:
            return False
        hooks = self.agent.middlewares
        return not (hooks and has_hook(hooks, "on_reasoning"))

    def claims_at_once(self, view: ToolkitView) -> bool:
        """Whether the model step just committed may share its save point with the claim.

        True when its calls are pending and the acting step that follows reaches its
        first save point (the batch's claim, a refused call's result, or the pause)
        awaiting nothing outside the loop: no tool source (the acting step's view would
        ask them), no `on_check_permission` hook (it may await anything), no `on_reasoning`
        hook (it runs between the two steps), and only our own permission checks for the
        called tools. Nothing reaches the caller in between either: the step's own event
        is held (`held`) until the merged save is written.
        """
        if not self._may_defer():
            return False
        msg = reply_message(self.state)
        if msg is None or view.sources:
            return False
        pending = [b for b in msg.content if type(b) is ToolCallBlock and b.state is _PENDING]
        if not pending:
            return False
        if any(overrides(mw, "on_check_permission") for mw in self.agent.middlewares):
            return False
        tools = view.tools
        return all(
            (tool := tools.get(call.name)) is None or tool.is_permission_check_local
            for call in pending
        )

    def finishes_at_once(self) -> bool:
        """Whether the model step just committed may share its save point with the reply's end.

        True when the step ended the reply (its final answer) and finishing awaits nothing
        outside the loop: no tool source (`on_reply_end`), no `on_reasoning` hook (it runs
        after the step), every call of the reply finished (closing it interrupts none, so
        the offloader writes nothing), and no structured answer to check. Nothing reaches
        the caller in between: the step's own event is held (`held`) until the merged save
        is written. A crash before that write loses the step (the model is asked again).
        """
        cursor = self.state.reply
        if (
            cursor is None
            or not cursor.finished
            or cursor.interrupted
            or cursor.structured_json_schema is not None
            or self.agent.toolkit.sources
            or not self._may_defer()
        ):
            return False
        msg = reply_message(self.state)
        return msg is None or all(c.state is _FINISHED for c in msg.tool_calls)

    def roll_back(self) -> None:
        """After a failed checkpoint: the state as it was at the last successful one.

        That is the copy kept then, or, if a `RestoringCheckpoint` saved it (it kept no
        copy), what that checkpoint stored; before any save, the state as the reply began.
        """
        if not self.failed:
            return
        if self.saved is not None:
            restore(self.state, self.saved)
        elif self.restoring:
            assert isinstance(self.checkpoint, RestoringCheckpoint)
            self.checkpoint.restore_last_saved(self.state)

    async def fit(self, result: ToolResultBlock) -> ToolResultBlock:
        """The copy of a result the context keeps (cut if too long)."""
        agent = self.agent
        return await fit_tool_result(result, agent.context_config, agent.offloader, self.state)

    async def commit(self, call: ToolCallBlock, result: ToolResultBlock) -> None:
        """Put a call's result into the reply."""
        agent, state = self.agent, self.state
        config = agent.context_config
        if fits_whole(result, config):
            kept = result
        else:
            kept = await fit_tool_result(result, config, agent.offloader, state)
        # Unobserved, the result's event never leaves the loop: no copy is needed.
        store_result(state, call, kept, result, self.structured_model, shared=self.observed)

    def view(self, *, with_prompt: bool) -> Awaitable[ToolkitView]:
        """The tools of this step (and the sources' prompt text if `with_prompt`)."""
        toolkit, model = self.agent.toolkit, self.structured_model
        return reply_view(toolkit, self.state, model, with_prompt=with_prompt)

    async def tools(self) -> Mapping[str, ToolBase]:
        """The reply's tools by name."""
        return (await self.view(with_prompt=False)).tools

    async def commit_and_save(self, call: ToolCallBlock, result: ToolResultBlock) -> None:
        """Put a call's result into the reply, then reach the save point that follows."""
        if self.deferred and self.agent.offloader is not None:
            await self.save()  # the offloader may write outside the loop: the step first
        await self.commit(call, result)
        await self.save()
