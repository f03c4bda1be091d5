"""`StorageBase`: validation, encoding and versioning shared by every session storage."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from tether._ids import new_id
from tether.app.storage._codec import (
    Settled,
    StateTracker,
    apply_plan,
    decode_state,
    dump_head,
    dump_message,
    encode_bodies,
    encode_head,
    encode_metadata,
    plan_delta,
    save_time,
)
from tether.app.storage._record import (
    SessionDelta,
    SessionInfo,
    SessionKey,
    SessionRecord,
    SessionUpsert,
    SessionVersion,
    StoredSession,
    check_id,
)
from tether.app.storage._url import storage_from_url
from tether.errors import (
    LeaseLostError,
    SessionConflictError,
    SessionCorruptedError,
    SessionInputError,
    SessionNotFoundError,
    StateVersionError,
    StorageUnavailableError,
)
from tether.state import AgentState

__all__ = ["StorageBase", "StorageCheckpoint"]

_UNTRACKED_RETRIES = 10


class StorageBase(ABC):
    """Sessions keyed by (user_id, agent_id, session_id), with versioned O(Δ) writes.

    Use it as an async context manager (`async with SQLiteStorage(path) as storage:`);
    a method called before `open()` opens the storage first, and one called after
    `close()` raises `StorageUnavailableError` (it never reconnects by itself).

    A state is stored as a small head plus a message log: `update_session_state` writes
    the head and only the messages that changed since the version it knows, so a reply
    on a 1,000-message session costs what it costs on a 10-message one, in CPU as in
    bytes: after a save, a message found unchanged is *settled* and compared by identity
    only. Change a settled message by replacing it (`state.context[i] = new`); an
    in-place edit of it is not seen (the first save after a load checks every message).

    Versions: every state write bumps `version`. `update_session_state` writes only if
    the stored version is the one expected; the expected version is `expected_version`
    when given, else the version this storage last loaded or saved *this state object*
    as (it remembers them while the object is alive). A state it has never seen is
    written whatever the stored version (last writer wins).

    Backends implement `_fetch`, `_upsert`, `_apply`, `_remove` and `_scan` (and may
    override `_open`/`_close`); see `tether.testing.storage_conformance` for the tests
    a backend must pass.
    """

    def __init__(self) -> None:
        self._tracker = StateTracker()
        self._last_key: SessionKey | None = None
        self._is_open = False
        self._is_closed = False
        self._open_lock: asyncio.Lock | None = None
        self._active = 0
        self._idle: asyncio.Event | None = None

    @staticmethod
    def from_url(url: str, *, prefix: str = "tether") -> StorageBase:
        """The storage a URL names: `sqlite:///x.db`, `redis://…`, `postgresql://…`.

        See `tether.app.storage.storage_from_url`; `ConfigError` for another scheme.
        """
        return storage_from_url(url, prefix=prefix)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Connect (idempotent; reopens a closed storage); `StorageUnavailableError` if down."""
        self._is_closed = False
        await self._connect()

    async def _connect(self) -> None:
        if self._open_lock is None:
            self._open_lock = asyncio.Lock()
        async with self._open_lock:
            if not self._is_open:
                await self._open()
                self._is_open = True

    async def close(self) -> None:
        """Wait for the calls in flight, then release connections (idempotent).

        Calls made after `close()` raise `StorageUnavailableError` until `open()` is
        called again: a storage never reconnects behind its owner's back.
        """
        self._is_closed = True
        while self._active:
            if self._idle is None or self._idle.is_set():
                self._idle = asyncio.Event()
            await self._idle.wait()
        if self._is_open:
            self._is_open = False
            await self._close()

    @asynccontextmanager
    async def _using(self) -> AsyncIterator[None]:
        """Open on first use; refuse once closed; count the call so `close()` can wait."""
        if self._is_closed:
            raise StorageUnavailableError(
                f"{self!r} is closed; open it again with `async with storage:` or "
                "`await storage.open()` before using it"
            )
        self._active += 1
        try:
            await self._connect()
            yield
        finally:
            self._active -= 1
            if not self._active and self._idle is not None:
                self._idle.set()

    async def get_session(
        self, user_id: str, agent_id: str, session_id: str
    ) -> SessionRecord | None:
        """Load a session, or return None if it does not exist.

        Raises:
            SessionCorruptedError: the stored record cannot be decoded (names the key).
            StateVersionError: the stored state has a schema version with no migration.
            StorageUnavailableError: the backend cannot be reached.
        """
        key = SessionKey.of(user_id, agent_id, session_id)
        async with self._using():
            stored = await self._fetch(key)
        if stored is None:
            return None
        state = decode_state(key, self._where(key), stored.head, stored.bodies)
        self._remember(state, key, stored)
        return _record(key, state, stored)

    async def upsert_session(
        self,
        user_id: str,
        agent_id: str,
        session_id: str,
        state: AgentState | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SessionRecord:
        """Create a session, or update an existing one.

        With `state`, the stored state becomes `state` (a new version; no version check);
        without it, a new session starts from a fresh `AgentState` and an existing one
        keeps its state. `metadata`, when given, replaces the stored metadata.
        """
        key = SessionKey.of(user_id, agent_id, session_id)
        if state is not None:
            _check_state(state)
        meta = encode_metadata(metadata)
        new = state if state is not None else AgentState()
        write = SessionUpsert(
            write_id=new_id(),
            head=encode_head(key, new),
            bodies=encode_bodies(key, new.context),
            replace=state is not None,
            metadata=meta,
            now=_now(),
        )
        async with self._using():
            stored = await self._upsert(key, write)
        if state is None:
            state = decode_state(key, self._where(key), stored.head, stored.bodies)
        self._remember(state, key, stored)
        return _record(key, state, stored)

    async def set_session_metadata(
        self, user_id: str, agent_id: str, session_id: str, metadata: dict[str, Any]
    ) -> None:
        """Replace a session's metadata (its state untouched); create it if there is none.

        Unlike `upsert_session`, the session is not decoded and returned: the cost of a
        write does not grow with its messages (for metadata written often, like A2A tasks).
        """
        key = SessionKey.of(user_id, agent_id, session_id)
        new = AgentState()
        write = SessionUpsert(
            write_id=new_id(),
            head=encode_head(key, new),
            bodies=encode_bodies(key, new.context),
            replace=False,
            metadata=encode_metadata(metadata),
            now=_now(),
        )
        async with self._using():
            await self._upsert(key, write)

    async def update_session_state(
        self,
        user_id: str,
        agent_id: str,
        session_id: str,
        state: AgentState,
        expected_version: int | None = None,
        *,
        fence: int | None = None,
    ) -> int:
        """Save `state` as the session's new version and return that version.

        With `fence` (the writer's fencing token, e.g. its lease's), the write is refused
        if the session was fenced with a larger token since (`fence_session`, or a fenced
        write), checked in the same atomic step as the version; a fenced write raises the
        session's fence to its token.

        Raises:
            SessionNotFoundError: the session does not exist (a `KeyError`); create it
                with `upsert_session`.
            SessionConflictError: another writer saved a newer version first (or the
                session was deleted and created again); reload with `get_session`,
                re-apply, and save again.
            SessionInputError: a bad id, or a state that would not load back (a field
                assigned a value of the wrong type); nothing was written.
            LeaseLostError: `fence` is older than the session's fence: a newer holder of
                the session's lease fenced it; nothing was written.
            StorageUnavailableError: the backend cannot be reached; nothing was written
                (or, if the connection broke after the write, all of it was).
        """
        last = self._last_key  # the ids of the last save, checked then: not checked again
        if (
            last is not None
            and last.session_id is session_id
            and last.user_id is user_id
            and last.agent_id is agent_id
        ):
            key = last
        else:
            key = self._last_key = SessionKey.of(user_id, agent_id, session_id)
        _check_state(state)
        _check_fence(fence)
        if expected_version is not None and (
            not isinstance(expected_version, int)
            or isinstance(expected_version, bool)
            or expected_version < 1
        ):
            raise SessionInputError(
                f"expected_version must be a positive int, got {expected_version!r}"
            )
        return await self._saving(key, state, expected_version, fence)

    async def _saving(
        self, key: SessionKey, state: AgentState, expected: int | None, fence: int | None
    ) -> int:
        """`_save` under `_using`'s rules, written out: it runs at every save point."""
        if self._is_closed or not self._is_open:
            async with self._using():
                return await self._save(key, state, expected, fence)
        self._active += 1
        try:
            return await self._save(key, state, expected, fence)
        finally:
            self._active -= 1
            if not self._active and self._idle is not None:
                self._idle.set()

    async def fence_session(
        self, user_id: str, agent_id: str, session_id: str, token: int
    ) -> SessionVersion | None:
        """Fence the session at `token` and return its stored version (None if missing).

        From then on a write fenced with a smaller token is refused: a worker that takes
        over a session's lease calls this before it loads the state, so the worker whose
        lease expired can no longer write it. The returned version lets a caller tell
        whether a state it holds is still the stored one (`saved_as`), without loading it.

        Raises:
            LeaseLostError: the session was already fenced with a larger token.
        """
        key = SessionKey.of(user_id, agent_id, session_id)
        _check_fence(token)
        async with self._using():
            return await self._fence(key, token)

    def saved_as(
        self, state: AgentState, user_id: str, agent_id: str, session_id: str
    ) -> SessionVersion | None:
        """The version this storage last loaded or saved this very `state` object as.

        None if it never did, or if the object visibly changed since (its head, its
        message count or its last message differ from what was stored): a caller that
        keeps states in memory between requests serves one only while this, and the
        stored version (`fence_session`), say it is the stored state.
        """
        key = SessionKey.of(user_id, agent_id, session_id)
        loaded = self._tracker.get(state, key)
        if loaded is None or loaded.head is None or len(loaded.bodies) != len(state.context):
            return None
        if dump_head(state) != loaded.head:
            return None
        if state.context and dump_message(state.context[-1]) != loaded.bodies[-1]:
            return None
        return SessionVersion(loaded.version, loaded.created_at)

    async def _save(
        self, key: SessionKey, state: AgentState, expected: int | None, fence: int | None
    ) -> int:
        loaded = self._tracker.get(state, key)
        if expected is None and loaded is not None:
            expected = loaded.version
        for _ in range(_UNTRACKED_RETRIES):
            settled = None
            if loaded is not None and loaded.version == expected:
                version, bodies, created_at = loaded.version, loaded.bodies, loaded.created_at
                trusted, settled = True, loaded.settled
                loaded.settled = None  # planning updates it: kept only once the write is done
            else:
                version, bodies, created_at = await self._base_of(key, expected)
                trusted = False
            # Head and messages are encoded together, with no await between them: one moment
            # of the state, even if another task changes it while this save waits.
            head = encode_head(key, state, loaded.head if trusted and loaded else None)
            context = state.context
            cursor = state.reply
            plan = plan_delta(
                key,
                bodies,
                context,
                trusted=trusted,
                settled=settled,
                reply_id=None if cursor is None else cursor.reply_id,
            )
            msgs = settled.msgs if settled is not None else context[:]  # as planned
            delta = SessionDelta(
                write_id=new_id(),
                expected_version=version,
                head=head,
                base_count=len(bodies),
                count=plan.count,
                changed=plan.changed,
                appended=plan.appended,
                now=save_time(),
                created_at=created_at,
                fence=fence,
            )
            try:
                new_version = await self._apply(key, delta)
            except SessionConflictError:
                if expected is not None:
                    raise
                loaded = None  # last writer wins: re-read the stored version and retry
                continue
            now_settled = Settled(msgs, plan.written)
            if trusted and loaded is not None and self._tracker.holds(state, loaded):
                loaded.version, loaded.head, loaded.settled = new_version, head, now_settled
                loaded.bodies = apply_plan(bodies, plan)
            else:
                self._tracker.remember(
                    state, key, new_version, apply_plan(list(bodies), plan), created_at, head,
                    now_settled,
                )  # fmt: skip
            return new_version
        raise SessionConflictError(
            f"session {key} kept changing while saving it ({_UNTRACKED_RETRIES} attempts); "
            "save with `expected_version` and handle the conflict"
        )

    def checkpoint(
        self, user_id: str, agent_id: str, session_id: str, *, fence: int | None = None
    ) -> StorageCheckpoint:
        """A save-point callable for `Agent.reply(..., checkpoint=...)` on this session.

        Each call saves the state through `update_session_state` (an O(Δ) write checked
        against the version this storage loaded or last saved the state as), so a second
        worker advancing the same session gets `SessionConflictError` at its next save
        point, before its next tool runs. Load the state with `get_session` (or create it
        with `upsert_session`) from this storage first: that is the version it claims.
        With `fence`, every save is fenced with that token (see `update_session_state`).
        When a save point fails, the loop puts the state back as this storage last saved it
        (`restore_last_saved`), so it keeps no copy of the state at each save point.
        """
        key = SessionKey.of(user_id, agent_id, session_id)  # bad ids fail now, not mid-reply
        _check_fence(fence)
        return StorageCheckpoint(self, key, fence)

    def _restore_saved(self, key: SessionKey, state: AgentState) -> bool:
        """Put `state` back as this storage last saved (or loaded) it as session `key`.

        Its fields are set from the stored head and bodies this storage keeps for the
        object (the messages are new objects, read from those bodies): O(history), paid
        only when a save point failed. False if the storage keeps none for it.
        """
        loaded = self._tracker.get(state, key)
        if loaded is None or loaded.head is None:
            return False
        try:
            stored = decode_state(key, self._where(key), loaded.head, loaded.bodies)
        except (SessionCorruptedError, StateVersionError):  # (it wrote these bytes itself)
            return False
        for name in AgentState.model_fields:
            setattr(state, name, getattr(stored, name))
        self._tracker.remember(
            state, key, loaded.version, loaded.bodies, loaded.created_at, loaded.head
        )
        return True

    async def list_sessions(self, user_id: str, agent_id: str | None = None) -> list[SessionInfo]:
        """The user's sessions (of one agent, if given), most recently updated first."""
        check_id("user_id", user_id)
        if agent_id is not None:
            check_id("agent_id", agent_id)
        async with self._using():
            infos = await self._scan(user_id, agent_id)
        return sorted(infos, key=lambda i: (-i.updated_at.timestamp(), i.agent_id, i.session_id))

    async def delete_session(self, user_id: str, agent_id: str, session_id: str) -> bool:
        """Delete a session; return whether it existed."""
        key = SessionKey.of(user_id, agent_id, session_id)
        async with self._using():
            return await self._remove(key)

    async def _base_of(
        self, key: SessionKey, expected: int | None
    ) -> tuple[int, list[bytes], datetime]:
        stored = await self._fetch(key)
        if stored is None:
            raise not_found(key)
        if expected is not None and stored.version != expected:
            raise conflict(key, expected, stored.version)
        return stored.version, stored.bodies, stored.created_at

    def _remember(self, state: AgentState, key: SessionKey, stored: StoredSession) -> None:
        self._tracker.remember(
            state, key, stored.version, stored.bodies, stored.created_at, stored.head
        )

    def _where(self, key: SessionKey) -> str:
        """Where the session lives, for error messages (a backend names its key or row)."""
        return f"{type(self).__name__}"

    async def _open(self) -> None:  # noqa: B027  # optional hook
        """Connect to the backend."""

    async def _close(self) -> None:  # noqa: B027  # optional hook
        """Disconnect from the backend."""

    @abstractmethod
    async def _fetch(self, key: SessionKey) -> StoredSession | None:
        """Read a session consistently (head and messages of one version)."""

    @abstractmethod
    async def _upsert(self, key: SessionKey, write: SessionUpsert) -> StoredSession:
        """Create or update atomically; return the session as now stored."""

    @abstractmethod
    async def _apply(self, key: SessionKey, delta: SessionDelta) -> int:
        """Apply `delta` atomically if the version matches; return the new version.

        The session must be at `delta.expected_version` and have been created at
        `delta.created_at`; raise `not_found(key)`, `conflict(key, expected, actual)` or
        `recreated(key)` otherwise, having written nothing.
        """

    async def _fence(self, key: SessionKey, token: int) -> SessionVersion | None:
        """Raise the session's fence to `token` atomically; return its version (None: missing).

        Raise `fenced(key, token, stored)` if its fence is larger. A backend that keeps no
        fence cannot be used by a service with leases: it says so.
        """
        raise NotImplementedError(
            f"{type(self).__name__} keeps no fencing token; implement `_fence` (and honour "
            "`SessionDelta.fence` in `_apply`) to serve it with `tether serve`"
        )

    @abstractmethod
    async def _remove(self, key: SessionKey) -> bool:
        """Delete a session; return whether it existed."""

    @abstractmethod
    async def _scan(self, user_id: str, agent_id: str | None) -> list[SessionInfo]:
        """The sessions of a user (and agent)."""


class StorageCheckpoint:
    """`StorageBase.checkpoint(...)`: saves one session's state at every save point.

    A `RestoringCheckpoint`: when a save point fails, the loop asks it to put the state
    back as last saved (rebuilt from the stored bytes) instead of copying the state at
    every successful save.
    """

    __slots__ = ("_fence", "_key", "_storage")

    def __init__(self, storage: StorageBase, key: SessionKey, fence: int | None) -> None:
        self._storage, self._key, self._fence = storage, key, fence

    async def __call__(self, state: AgentState) -> None:
        """Save `state` (`update_session_state`, against the version it was saved as)."""
        _check_state(state)
        await self._storage._saving(self._key, state, None, self._fence)

    def restore_last_saved(self, state: AgentState) -> bool:
        """Put `state` back as this session's storage last saved or loaded it."""
        return self._storage._restore_saved(self._key, state)


def not_found(key: SessionKey) -> SessionNotFoundError:
    """The error for a missing session."""
    return SessionNotFoundError(
        f"session {key} does not exist; create it with `upsert_session` first"
    )


def conflict(key: SessionKey, expected: int, actual: int) -> SessionConflictError:
    """The error for a stale version."""
    return SessionConflictError(
        f"session {key} is at version {actual}, but this write expected version {expected}: "
        "another writer saved it first; reload it with `get_session`, re-apply your "
        "change and save again"
    )


def fenced(key: SessionKey, token: int, stored: int) -> LeaseLostError:
    """The error for a write fenced with a token older than the session's fence."""
    return LeaseLostError(
        f"session {key} was fenced with token {stored} by a newer holder of its lease; this "
        f"write (token {token}) comes from a worker whose lease was taken over and was "
        "refused: stop this run, nothing was written"
    )


def recreated(key: SessionKey) -> SessionConflictError:
    """The error for a delta planned against a session that was deleted and created again."""
    return SessionConflictError(
        f"session {key} was deleted and created again since this state was loaded (its "
        "version number started over); reload it with `get_session`, re-apply your change "
        "and save again"
    )


def _check_state(state: object) -> None:
    if not isinstance(state, AgentState):
        raise SessionInputError(
            f"state must be an `AgentState`, got {type(state).__name__}; load one with "
            "`AgentState.model_validate(...)`"
        )


def _check_fence(token: object) -> None:
    if token is not None and (not isinstance(token, int) or isinstance(token, bool) or token < 1):
        raise SessionInputError(f"a fencing token must be a positive int, got {token!r}")


def _now() -> datetime:
    return datetime.now(UTC)


def _record(key: SessionKey, state: AgentState, stored: StoredSession) -> SessionRecord:
    return SessionRecord(
        user_id=key.user_id,
        agent_id=key.agent_id,
        session_id=key.session_id,
        state=state,
        version=stored.version,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
        metadata=stored.metadata,
    )
