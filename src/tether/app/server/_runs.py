"""Replies run in the server, not in the request: lease, log every event, save, release.

A run takes the session's lease, loads the session, and drives `Agent.reply_stream`
in a task of its own (a client that disconnects does not stop it). Every event is
appended to the session's event log under the lease before anyone can read it: in one
write per save point (before its save), or after `_LINGER` seconds without one. The
events that end the run (the final message, the pause events, an error) and those after
the save that ends the reply are held back until the state is saved, then logged
together with the end marker as the lease is released, so a client that sees the end
(or a pause) can start the next reply (or answer it) at once.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections import OrderedDict
from collections.abc import Awaitable
from contextlib import suppress

from tether.agent import Agent
from tether.app.server._mcp_users import UserClients
from tether.app.server._relay import relay_reply
from tether.app.server._run_parts import RunInput, RunningReply, SessionRef
from tether.app.storage import (
    EventLogBase,
    Lease,
    LogItem,
    LogKey,
    StorageBase,
    StorageCheckpoint,
)
from tether.app.storage._notes import NotesBase, SQLiteNotes
from tether.errors import (
    InvalidInputError,
    LeaseLostError,
    ReplyInProgressError,
    ResumeError,
    ServiceClosingError,
    SessionConflictError,
    SessionInputError,
    SessionNotFoundError,
    StorageError,
    TetherError,
    UnknownAgentError,
)
from tether.event import (
    AgentEvent,
    ErrorEvent,
    EventType,
    ResumeEvent,
    UserInterruptEvent,
)
from tether.mcp._relay import drop_relay
from tether.state import AgentState, Checkpoint
from tether.tool import ToolSourceBase

__all__ = ["RunInput", "Runs", "SessionRef"]

log = logging.getLogger("tether.server")

_TERMINAL = {
    EventType.REPLY_END,
    EventType.REQUIRE_USER_CONFIRM,
    EventType.REQUIRE_EXTERNAL_EXECUTION,
}
_CALLER_ERRORS = (ResumeError, InvalidInputError, SessionInputError)
_LINGER = 0.1
"""Seconds a logged event may wait for the next save point before it is written alone."""


class Runs:
    """The replies this worker runs, and the rules every worker follows to run one.

    Args:
        agents: The served agents by id (each run uses a shallow copy with its own state).
        storage: Where sessions live.
        events: The event log and leases (same backend as `storage`).
        lease_ttl: Seconds a lease lives without renewal (a dead worker's lease expires
            after this; renewed every `lease_ttl / 3` or 2 s, whichever is shorter; an
            interrupt asked on another worker lands at the next renewal).
        keep_sessions: States of recent sessions kept in memory between their replies
            (a kept state is used only while it is still the stored version; 0: none).
        notes: Values every worker shares; with them, an MCP server's question asked
            during a reply may be answered on any worker (`NotesRelay`).
    """

    def __init__(
        self,
        agents: dict[str, Agent],
        storage: StorageBase,
        events: EventLogBase,
        *,
        lease_ttl: float = 15.0,
        keep_sessions: int = 256,
        notes: NotesBase | None = None,
    ) -> None:
        self.agents = agents
        self.notes = notes if notes is not None else SQLiteNotes(":memory:")
        self.users = UserClients(self.notes)  # each user's copies of the OAuth MCP clients
        self.storage = storage
        self.events = events
        self.lease_ttl = lease_ttl
        self.keep_sessions = keep_sessions
        self._runs: dict[LogKey, RunningReply] = {}
        self._kept: OrderedDict[LogKey, tuple[tuple[str, str, str], AgentState]] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()
        self.accepting = True

    def agent(self, agent_id: str) -> Agent:
        """The served agent, or `UnknownAgentError`."""
        agent = self.agents.get(agent_id)
        if agent is None:
            known = ", ".join(sorted(self.agents)) or "none"
            raise UnknownAgentError(
                f"there is no agent {agent_id!r} on this service (agents: {known}); "
                "list them with `GET /v1/agents`"
            )
        return agent

    async def start(
        self,
        ref: SessionRef,
        inputs: RunInput,
        *,
        if_busy: bool = False,
        tools: ToolSourceBase | None = None,
    ) -> Lease:
        """Start a reply on the session; return once it has logged its first event.

        `tools` adds a source of tools for this run only (an AG-UI client's own tools).

        Raises:
            ReplyInProgressError: another reply runs (and `if_busy` was not asked).
            SessionNotFoundError, ResumeError, InvalidInputError: nothing ran or changed.
            ServiceClosingError: this worker is shutting down.
        """
        self._check_open()
        lease = await self._acquire(ref.key, interrupt=if_busy)
        try:
            self._check_open()
            agent = self.users.agent_for(ref.user_id, copy.copy(self.agent(ref.agent_id)))
            if tools is not None:
                agent.toolkit = agent.toolkit.with_sources(tools)
            agent.state = await self._load(ref, lease)
        except BaseException:
            await self.events.release(lease, mark_end=False)
            raise
        run = RunningReply(ref, lease, agent, inputs, asyncio.get_running_loop().create_future())
        self._runs[ref.key] = run
        task = asyncio.create_task(self._run(run), name=f"tether-reply-{ref.session_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await asyncio.shield(run.started)
        return lease

    async def _load(self, ref: SessionRef, lease: Lease) -> AgentState:
        """Fence the session with the lease, then its state: kept here if still current.

        Fenced first: from then on a worker whose lease expired cannot write the state.
        A state this worker kept from its last run on the session is used only if the
        stored version is the one it saved, and the object did not change since.
        """
        stamp = await self.storage.fence_session(*ref.ids, lease.token)
        kept = self._kept.pop(ref.key, None)
        if stamp is not None and kept is not None:
            ids, state = kept
            if ids == ref.ids and self.storage.saved_as(state, *ids) == stamp:
                return state
        record = None if stamp is None else await self.storage.get_session(*ref.ids)
        if record is None:
            raise SessionNotFoundError(
                f"session {ref.session_id!r} does not exist; create it with `POST /v1/sessions`"
            )
        return record.state

    def _keep(self, run: RunningReply) -> None:
        """Keep the state of a run that ended cleanly, for the session's next run here."""
        state = run.agent.state
        if self.storage.saved_as(state, *run.ref.ids) is None:
            return
        self._kept[run.ref.key] = (run.ref.ids, state)
        self._kept.move_to_end(run.ref.key)
        while len(self._kept) > self.keep_sessions:
            self._kept.popitem(last=False)

    def _check_open(self) -> None:
        if not self.accepting:
            raise ServiceClosingError(
                "this worker is shutting down and takes no new replies; retry on another "
                "worker (a reply it stopped continues from its last save point with "
                '`{"input": null}`)'
            )

    async def _acquire(self, key: LogKey, *, interrupt: bool) -> Lease:
        """Take the lease; with `interrupt`, stop the running reply first and wait for it."""
        deadline = asyncio.get_running_loop().time() + 2 * self.lease_ttl
        while True:
            try:
                return await self.events.acquire(key, self.lease_ttl)
            except ReplyInProgressError:
                if not interrupt or asyncio.get_running_loop().time() > deadline:
                    raise
            await self.interrupt(key)
            await self.events.wait(key, 1 << 62, 0.1)

    async def interrupt(self, key: LogKey) -> str | None:
        """Ask the running reply to stop (here at once, elsewhere at its next renewal)."""
        local = self._runs.get(key)
        if local is not None:
            self._stop(local)
        active = await self.events.request_interrupt(key)
        return active.reply_id if active is not None else None

    def _stop(self, run: RunningReply) -> None:
        """Stop the reply: now, or right after the save in progress (never inside one)."""
        if not run.interrupted and run.pump is not None:
            run.interrupted = True
            if not run.saving:
                run.pump.cancel()

    async def _run(self, run: RunningReply) -> None:
        hearts: list[asyncio.Task[None]] = []  # started only for a reply that runs long
        run.beat = asyncio.get_running_loop().call_later(
            self._every, lambda: hearts.append(asyncio.create_task(self._heartbeat(run)))
        )
        refused: Exception | None = None  # the caller's error, answered once released
        try:
            await self._drive(run)
            self._keep(run)
        except LeaseLostError:
            log.warning("session %s: lease taken over; this run stopped", run.ref.session_id)
        except Exception as exc:  # a provider error, a storage error: end with an error event
            if not run.started.done() and isinstance(exc, _CALLER_ERRORS):
                refused = exc
            else:
                reply_id = _reply_id(run)
                run.tail.append(
                    ErrorEvent(reply_id=reply_id, error_type=type(exc).__name__, message=str(exc))
                )
                log.info("session %s: reply ended with %s", run.ref.session_id, type(exc).__name__)
                if not isinstance(exc, SessionConflictError | ServiceClosingError):
                    with suppress(TetherError):  # keep the state as the failure left it
                        await self._save(run)
        finally:
            # Never wait long for the heartbeat: a renewal cut off mid-command can take the
            # client's socket timeout to unwind, and the lease is released below anyway.
            run.beat.cancel()
            for heart in hearts:
                heart.cancel()
                await asyncio.wait({heart}, timeout=1.0)
            await self._finish(run, refused)

    async def _drive(self, run: RunningReply) -> None:
        """Pump the reply; on an interrupt, stop it and end it as interrupted."""
        try:
            run.pump = asyncio.create_task(self._pump(run, run.inputs))
            await run.pump
        except _Interrupted:
            pass
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            if run.lost is not None:
                raise run.lost from None
            if not run.interrupted:
                raise
        if run.interrupted and not run.tail:
            await self._end_interrupted(run)
        # Saved at every save point by the checkpoint, the end or the pause included.

    async def _end_interrupted(self, run: RunningReply) -> None:
        """End the stopped reply as interrupted (its pending calls get interrupted results)."""
        cursor = run.agent.state.reply
        if cursor is None:
            return
        run.tail.clear()
        run.ending = True
        await self._pump(run, UserInterruptEvent(reply_id=cursor.reply_id))

    async def _pump(self, run: RunningReply, inputs: RunInput) -> None:
        stream = run.agent.reply_stream(inputs, checkpoint=self._checkpoint(run))
        try:
            async for event in stream:
                if run.lost is not None:
                    raise run.lost
                if run.tail or event.type in _TERMINAL:
                    run.tail.append(event)  # logged with the release, after the save
                else:
                    self._log(run, event)
                if run.relay is None and event.reply_id:
                    run.relay = relay_reply(self.notes, run.ref.key, event.reply_id)
                if not run.started.done():
                    run.started.set_result(None)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()  # stops its tools and settles the state

    def _log(self, run: RunningReply, event: AgentEvent) -> None:
        """Queue the event, to be appended with the others queued before the next save point.

        The save point's flush writes them in one step with a renewal of the lease, with no
        task and no wait; if none comes within `_LINGER` s (a long model stream, a slow
        tool), a writer task appends what queued up so far. Nobody reads an event before
        its append committed.
        """
        run.pending.append(_item(event))
        run.logged += 1
        if run.waking is None and not run.closing:
            run.waking = asyncio.get_running_loop().call_later(_LINGER, self._wake_writer, run)

    def _wake_writer(self, run: RunningReply) -> None:
        run.waking = None
        if run.pending and run.lost is None and (run.writer is None or run.writer.done()):
            run.writer = asyncio.create_task(self._write(run))

    async def _write(self, run: RunningReply, *, renew: bool = False) -> None:
        """Append the queued events, renewing the lease in the same step (one round trip)."""
        if run.waking is not None:
            run.waking.cancel()
            run.waking = None
        while (run.pending or renew) and run.lost is None:
            batch, run.pending, renew = run.pending, [], False
            run.renewed = True
            try:
                if await self.events.renew(run.lease, self.lease_ttl, batch):
                    self._stop(run)  # an interrupt asked on another worker
            except TetherError as exc:  # lease lost or log down: this run cannot go on
                run.lost = exc
                if run.pump is not None:
                    run.pump.cancel()

    async def _flush(self, run: RunningReply, *, renew: bool = False) -> None:
        """Wait until every queued event is appended (or raise why it cannot be).

        With `renew`, the lease is also renewed (and checked) unless a renewal started
        since the last save point: with the last queued events if there are any, else on
        its own. The write runs here, not in a task: the caller waits for it anyway.
        """
        while run.writer is not None and not run.writer.done():
            await asyncio.shield(run.writer)
        renew = renew and not run.renewed
        if (run.pending or renew) and run.lost is None:
            await self._write(run, renew=renew)
        if run.lost is not None:
            raise run.lost

    def _checkpoint(self, run: RunningReply) -> Checkpoint:
        """The storage's save-point callable, fenced by the lease.

        Before each save: every queued event is appended, and the lease is renewed with
        them, or on its own if no renewal started since the last save point (a worker
        whose lease was taken over stops there, before its next side effect; an interrupt
        asked on another worker is seen there); not at the save point that ends or pauses
        the reply. The save itself is fenced with the lease's token, so it is refused too
        if a newer holder fenced the session. A reply asked to stop stops here, with the state
        of its last save point. On a worker that is shutting down, the reply stops right
        after this save.
        """
        save = self.storage.checkpoint(*run.ref.ids, fence=run.lease.token)

        async def checkpoint(state: AgentState) -> None:
            if run.interrupted and not run.ending:
                raise _Interrupted  # stop here: the state rolls back to the last save
            run.saving = True  # an interrupt waits for the save, so the version stays known
            try:
                if state.reply is None:
                    # The save that ends the reply: what is queued, and what comes after,
                    # is logged with the release (which checks the lease as it logs it).
                    run.closing = True
                else:
                    # The save point that pauses the reply needs no renewal: its last
                    # events wait for the release too.
                    await self._flush(run, renew=not run.tail)
                    run.renewed = False  # the next save point renews again if nothing did
                await save(state)
            finally:
                run.saving = False
            if run.interrupted and not run.ending and run.pump is not None:
                run.pump.cancel()  # asked during the save: stop at the next await
            # Shutting down: stop once saved. (The loop then puts the state back as last
            # saved, which is this save: the run ends here and never saves again.)
            self._check_open()

        return _LeasedCheckpoint(checkpoint, save)

    async def _save(self, run: RunningReply) -> None:
        """Save the state under the lease (the versioned write refuses a stale state)."""
        if not run.started.done():
            return  # nothing ran
        await self._flush(run, renew=True)
        await self.storage.update_session_state(
            *run.ref.ids, run.agent.state, fence=run.lease.token
        )

    @property
    def _every(self) -> float:
        """Seconds between two renewals of a running reply's lease."""
        return min(self.lease_ttl / 3, 2.0)

    async def _heartbeat(self, run: RunningReply) -> None:
        while True:
            try:
                if await self.events.renew(run.lease, self.lease_ttl):
                    self._stop(run)
            except LeaseLostError:
                if run.pump is not None:
                    run.pump.cancel()
                return
            except StorageError:
                pass  # a blip: the next renewal retries well before the lease expires
            await asyncio.sleep(self._every)

    async def _finish(self, run: RunningReply, refused: Exception | None = None) -> None:
        """Log the held-back events with the end marker and release the lease.

        `refused` (the caller's error that stopped the run before it started) is answered
        only now: a request sent right after that answer finds the lease free.
        """
        self._runs.pop(run.ref.key, None)
        if run.relay is not None:
            drop_relay(*run.relay)
        try:
            while run.writer is not None and not run.writer.done():
                await asyncio.shield(run.writer)  # its events come before the ones below
            if run.waking is not None:
                run.waking.cancel()
            if isinstance(run.lost, LeaseLostError):
                raise run.lost
            if run.lost is not None:  # the queued events cannot be logged: release anyway,
                run.pending = []  # or this worker keeps the lease (and `holds`) forever
            tail = [*run.pending, *(_item(event) for event in run.tail)]
            run.pending = []
            await self.events.release(run.lease, tail, mark_end=bool(run.logged or run.tail))
        except LeaseLostError:
            pass
        except StorageError as exc:
            log.warning("session %s: could not release its lease (%s)", run.ref.session_id, exc)
        if not run.started.done():
            if refused is not None:
                run.started.set_exception(refused)
            else:
                run.started.set_result(None)

    async def close(self, grace: float = 10.0) -> None:
        """Take no new replies; let running ones end (up to `grace` s), then stop them."""
        self.accepting = False
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
            for run in list(self._runs.values()):
                self._stop(run)
            if pending:
                await asyncio.wait(pending, timeout=grace)


class _Interrupted(Exception):
    """Raised by the checkpoint of a reply asked to stop: it stops right after a save."""


def _item(event: AgentEvent) -> LogItem:
    return LogItem(event.reply_id, str(event.type), event.model_dump_json())


def _reply_id(run: RunningReply) -> str:
    cursor = run.agent.state.reply
    if cursor is not None:
        return cursor.reply_id
    inputs = run.inputs
    return inputs.reply_id if isinstance(inputs, ResumeEvent) else ""


class _LeasedCheckpoint:
    """A run's save-point callable, which restores a state as its storage checkpoint does.

    A `RestoringCheckpoint`, so the loop keeps no copy of the state at each save point.
    """

    __slots__ = ("_save", "_step")

    def __init__(self, step: Checkpoint, save: StorageCheckpoint) -> None:
        self._step, self._save = step, save

    def __call__(self, state: AgentState) -> Awaitable[None]:
        """The save point: the log, the lease, then the storage's save."""
        return self._step(state)

    def restore_last_saved(self, state: AgentState) -> bool:
        """Put `state` back as the storage last saved it."""
        return self._save.restore_last_saved(state)
