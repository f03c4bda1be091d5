"""`StorageBase`: validation, encoding and versioning shared by every session storage."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from tether._ids import new_id
from tether.app.storage._codec import (
    StateTracker,
    decode_state,
    encode_bodies,
    encode_head,
    encode_metadata,
    plan_delta,
)
from tether.app.storage._record import (
    SessionDelta,
    SessionInfo,
    SessionKey,
    SessionRecord,
    SessionUpsert,
    StoredSession,
    check_id,
)
from tether.errors import SessionConflictError, SessionInputError, SessionNotFoundError
from tether.state import AgentState

__all__ = ["StorageBase"]

_UNTRACKED_RETRIES = 10


class StorageBase(ABC):
    """Sessions keyed by (user_id, agent_id, session_id), with versioned O(Δ) writes.

    Use it as an async context manager (`async with SQLiteStorage(path) as storage:`);
    a method called before `open()` opens the storage first.

    A state is stored as a small head plus a message log: `update_session_state` writes
    the head and only the messages that changed since the version it knows, so a reply
    on a 1,000-message session costs what it costs on a 10-message one.

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
        self._is_open = False
        self._open_lock: asyncio.Lock | None = None

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
        """Connect (idempotent); raises `StorageUnavailableError` if the backend is down."""
        if self._open_lock is None:
            self._open_lock = asyncio.Lock()
        async with self._open_lock:
            if not self._is_open:
                await self._open()
                self._is_open = True

    async def close(self) -> None:
        """Release connections (idempotent)."""
        if self._is_open:
            self._is_open = False
            await self._close()

    async def _ready(self) -> None:
        if not self._is_open:
            await self.open()

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
        await self._ready()
        stored = await self._fetch(key)
        if stored is None:
            return None
        state = decode_state(key, self._where(key), stored.head, stored.bodies)
        self._tracker.remember(state, key, stored.version, stored.bodies)
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
        bodies = encode_bodies(new.context)
        write = SessionUpsert(
            write_id=new_id(),
            head=encode_head(new),
            bodies=bodies,
            replace=state is not None,
            metadata=meta,
            now=_now(),
        )
        await self._ready()
        stored = await self._upsert(key, write)
        if state is None:
            state = decode_state(key, self._where(key), stored.head, stored.bodies)
        self._tracker.remember(state, key, stored.version, stored.bodies)
        return _record(key, state, stored)

    async def update_session_state(
        self,
        user_id: str,
        agent_id: str,
        session_id: str,
        state: AgentState,
        expected_version: int | None = None,
    ) -> int:
        """Save `state` as the session's new version and return that version.

        Raises:
            SessionNotFoundError: the session does not exist (a `KeyError`); create it
                with `upsert_session`.
            SessionConflictError: another writer saved a newer version first; reload
                with `get_session`, re-apply, and save again.
            StorageUnavailableError: the backend cannot be reached; nothing was written
                (or, if the connection broke after the write, all of it was).
        """
        key = SessionKey.of(user_id, agent_id, session_id)
        _check_state(state)
        if expected_version is not None and (
            not isinstance(expected_version, int)
            or isinstance(expected_version, bool)
            or expected_version < 1
        ):
            raise SessionInputError(
                f"expected_version must be a positive int, got {expected_version!r}"
            )
        head = encode_head(state)
        await self._ready()
        loaded = self._tracker.get(state, key)
        expected = expected_version
        if expected is None and loaded is not None:
            expected = loaded.version
        for _ in range(_UNTRACKED_RETRIES):
            if loaded is not None and loaded.version == expected:
                base_version, base = loaded.version, loaded.bodies
            else:
                base_version, base = await self._base_of(key, expected)
            plan = plan_delta(base, state.context)
            delta = SessionDelta(
                write_id=new_id(),
                expected_version=base_version,
                head=head,
                base_count=len(base),
                count=len(state.context),
                changed=plan.changed,
                appended=plan.appended,
                now=_now(),
            )
            try:
                version = await self._apply(key, delta)
            except SessionConflictError:
                if expected is not None:
                    raise
                loaded = None  # last writer wins: re-read the stored version and retry
                continue
            self._tracker.remember(state, key, version, plan.bodies)
            return version
        raise SessionConflictError(
            f"session {key} kept changing while saving it ({_UNTRACKED_RETRIES} attempts); "
            "save with `expected_version` and handle the conflict"
        )

    async def list_sessions(self, user_id: str, agent_id: str | None = None) -> list[SessionInfo]:
        """The user's sessions (of one agent, if given), most recently updated first."""
        check_id("user_id", user_id)
        if agent_id is not None:
            check_id("agent_id", agent_id)
        await self._ready()
        infos = await self._scan(user_id, agent_id)
        return sorted(infos, key=lambda i: (-i.updated_at.timestamp(), i.agent_id, i.session_id))

    async def delete_session(self, user_id: str, agent_id: str, session_id: str) -> bool:
        """Delete a session; return whether it existed."""
        key = SessionKey.of(user_id, agent_id, session_id)
        await self._ready()
        return await self._remove(key)

    async def _base_of(self, key: SessionKey, expected: int | None) -> tuple[int, list[bytes]]:
        stored = await self._fetch(key)
        if stored is None:
            raise not_found(key)
        if expected is not None and stored.version != expected:
            raise conflict(key, expected, stored.version)
        return stored.version, stored.bodies

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

        Raises `not_found(key)` or `conflict(key, expected, actual)` otherwise.
        """

    @abstractmethod
    async def _remove(self, key: SessionKey) -> bool:
        """Delete a session; return whether it existed."""

    @abstractmethod
    async def _scan(self, user_id: str, agent_id: str | None) -> list[SessionInfo]:
        """The sessions of a user (and agent)."""


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


def _check_state(state: object) -> None:
    if not isinstance(state, AgentState):
        raise SessionInputError(
            f"state must be an `AgentState`, got {type(state).__name__}; load one with "
            "`AgentState.model_validate(...)`"
        )


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
