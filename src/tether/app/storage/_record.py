"""What a storage hands out (`SessionRecord`, `SessionInfo`) and what backends exchange."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tether._field_docs import field_docs
from tether.errors import SessionInputError
from tether.state import AgentState

__all__ = [
    "SessionDelta",
    "SessionInfo",
    "SessionKey",
    "SessionRecord",
    "SessionUpsert",
    "SessionVersion",
    "StoredSession",
]


@field_docs
class SessionRecord(BaseModel):
    """A stored session: its ids, its `AgentState`, its version and bookkeeping."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    user_id: str
    """The user the session belongs to."""
    agent_id: str
    """The agent the session runs."""
    session_id: str
    """The session's id within (user, agent)."""
    state: AgentState
    """The saved state; pass this very object back to `update_session_state`."""
    version: int
    """Bumped by every state write; `update_session_state` checks it."""
    created_at: datetime
    """When the session was created (UTC)."""
    updated_at: datetime
    """When the session was last written (UTC)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form JSON data set with `upsert_session`."""


@field_docs
class SessionInfo(BaseModel):
    """A session as `list_sessions` shows it: everything but the state itself."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    user_id: str
    """The user the session belongs to."""
    agent_id: str
    """The agent the session runs."""
    session_id: str
    """The session's id within (user, agent)."""
    version: int
    """The version of the stored state."""
    created_at: datetime
    """When the session was created (UTC)."""
    updated_at: datetime
    """When the session was last written (UTC)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form JSON data set with `upsert_session`."""
    message_count: int = 0
    """Messages in the stored context."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """The three ids that name a session; built with `SessionKey.of`, which validates them."""

    user_id: str
    agent_id: str
    session_id: str

    @classmethod
    def of(cls, user_id: object, agent_id: object, session_id: object) -> SessionKey:
        """Validate the ids (non-empty strings) and build the key."""
        for name, value in (
            ("user_id", user_id),
            ("agent_id", agent_id),
            ("session_id", session_id),
        ):
            check_id(name, value)
        return cls(str(user_id), str(agent_id), str(session_id))

    def __str__(self) -> str:
        return f"(user_id={self.user_id!r}, agent_id={self.agent_id!r}, session_id={self.session_id!r})"


def check_id(name: str, value: object) -> None:
    """Raise `SessionInputError` unless `value` is a non-empty string."""
    if not isinstance(value, str) or not value:
        raise SessionInputError(f"{name} must be a non-empty string, got {value!r}")
    if "\x00" in value:
        raise SessionInputError(f"{name} must not contain NUL characters, got {value!r}")
    try:
        value.encode()
    except UnicodeEncodeError as exc:
        raise SessionInputError(
            f"{name} must be valid Unicode text, got {value!r} with a lone surrogate at "
            f"position {exc.start}; decode ids from bytes with `errors='strict'`"
        ) from None


@dataclass(frozen=True, slots=True)
class SessionVersion:
    """Which stored version a session is at: its number and the session's creation time.

    Both are needed to tell one version from another: a session deleted and created again
    counts its versions anew.
    """

    version: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as a backend stores it: version, head, one JSON body per message."""

    version: int
    head: bytes
    """The state without its context, as JSON."""
    bodies: list[bytes]
    """Each message of the context as JSON, in order."""
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]


@dataclass(slots=True)
class SessionDelta:
    """A conditional state write: apply only if the stored version is `expected_version`.

    The backend replaces the head, truncates the log to `count` messages if it is shorter
    than `base_count`, overwrites the `changed` positions and appends `appended`; all of it
    atomically, bumping the version by one. A backend reads it and never changes it (it is
    not frozen only because a frozen dataclass costs 13 k instructions more to build, at
    every save point).
    """

    write_id: str
    """Unique per write; a backend may use it to make a retried write idempotent."""
    expected_version: int
    head: bytes
    base_count: int
    """Messages stored at `expected_version`."""
    count: int
    """Messages after the write."""
    changed: tuple[tuple[int, bytes], ...]
    """(position, body) for positions below `min(base_count, count)` whose body changed."""
    appended: tuple[bytes, ...]
    """Bodies for positions `base_count ..< count`."""
    now: datetime
    created_at: datetime
    """When the session at `expected_version` was created: the backend must also check it,
    so that a session deleted and created again, which counts its versions anew, is never
    taken for the one the delta was planned against."""
    fence: int | None = None
    """The writer's fencing token, or None (unfenced): the backend refuses the write, in
    the same atomic step as the version check, if the session was fenced with a larger
    token (raise `fenced(key, token, stored)`), and otherwise raises the session's fence
    to it."""


@dataclass(frozen=True, slots=True)
class SessionUpsert:
    """Create a session, or (with `replace`) overwrite its state; `metadata` JSON or None."""

    write_id: str
    head: bytes
    bodies: tuple[bytes, ...]
    replace: bool
    """Overwrite the state of an existing session (else keep it)."""
    metadata: str | None
    """JSON object to store; None keeps the existing metadata (`{}` for a new session)."""
    now: datetime
