"""`AgentState` ↔ (head, message bodies), the O(Δ) write plan, and loaded-version tracking.

A state is stored as a small *head* (every field but `context`) and one JSON body per
message. To save, the whole context is serialised once as a JSON array and compared,
message by message, with the bodies of the version it was loaded from (`bytes.startswith`
at an offset: a memcmp, no copies); only messages that differ and new ones are written.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from tether._json_depth import MAX_JSON_DEPTH, json_depth_exceeds
from tether.app.storage._record import SessionInfo, SessionKey
from tether.errors import SessionCorruptedError, SessionInputError, StateError, StateVersionError
from tether.message import Msg
from tether.state import SCHEMA_VERSION, AgentState, message_json, remember_message_json

__all__ = [
    "DeltaPlan",
    "Loaded",
    "StateTracker",
    "decode_metadata",
    "decode_state",
    "dump_head",
    "dump_message",
    "encode_bodies",
    "encode_head",
    "encode_metadata",
    "listed",
    "parse_time",
    "plan_delta",
]

logger = logging.getLogger("tether.storage")
_STATE = TypeAdapter(AgentState)
_MSG = TypeAdapter(Msg)
_NO_CONTEXT = {"context"}
_UNSAVABLE = (PydanticSerializationError, ValidationError, StateVersionError)


def dump_head(state: AgentState) -> bytes:
    """The state without its context, as JSON (unchecked: see `encode_head`)."""
    return _STATE.dump_json(state, exclude=_NO_CONTEXT, warnings=False)


def dump_message(msg: Msg) -> bytes:
    """One message as its stored JSON body, the state's compact form (unchecked).

    An unchanged message gives back the bytes it was last written or loaded as.
    """
    return message_json(msg)


def encode_head(key: SessionKey, state: AgentState) -> bytes:
    """The state without its context, as JSON, checked to load back (else `SessionInputError`)."""
    try:
        head = _STATE.dump_json(state, exclude=_NO_CONTEXT, warnings=False)
        if state.schema_version == SCHEMA_VERSION:
            _STATE.validate_json(head)  # what loading does, minus the migration step
        else:
            AgentState.model_validate_json(head)  # migrates, or raises StateVersionError
    except _UNSAVABLE as exc:
        raise _unsavable(key, exc) from exc
    return head


def encode_bodies(key: SessionKey, context: list[Msg]) -> tuple[bytes, ...]:
    """One JSON body per message, each checked to load back (else `SessionInputError`)."""
    try:
        bodies = tuple(message_json(msg) for msg in context)
        for body in bodies:
            _MSG.validate_json(body)
    except _UNSAVABLE as exc:
        raise _unsavable(key, exc) from exc
    return bodies


@dataclass(frozen=True, slots=True)
class DeltaPlan:
    """What changed between the stored bodies and a context."""

    changed: tuple[tuple[int, bytes], ...]
    appended: tuple[bytes, ...]
    bodies: list[bytes]
    """The bodies after the write (kept to plan the next one)."""


def plan_delta(
    key: SessionKey, old: list[bytes], context: list[Msg], *, trusted: bool
) -> DeltaPlan:
    """Compare `context` with the stored `old` bodies; the written bodies are checked to load.

    `trusted` bodies are ones this storage wrote or decoded: each is one whole JSON object,
    so a prefix match at an offset of the serialised array (a memcmp) proves equality and
    only the messages from the first difference on are serialised one by one. Bodies read
    back for a state the storage never saw may be damaged (a truncated `{` is a prefix of
    anything), so they are compared whole, message by message.
    """
    try:
        plan = _plan_trusted(old, context) if trusted else _plan_exact(old, context)
        for _, body in plan.changed:
            _MSG.validate_json(body)
        for body in plan.appended:
            _MSG.validate_json(body)
    except _UNSAVABLE as exc:
        raise _unsavable(key, exc) from exc
    return plan


def _plan_trusted(old: list[bytes], context: list[Msg]) -> DeltaPlan:
    bodies = [message_json(msg) for msg in context]  # unchanged ones: their stored bytes
    limit = min(len(old), len(bodies))
    changed = tuple(
        (i, bodies[i]) for i in range(limit) if bodies[i] is not old[i] and bodies[i] != old[i]
    )
    return DeltaPlan(changed=changed, appended=tuple(bodies[len(old) :]), bodies=bodies)


def _plan_exact(old: list[bytes], context: list[Msg]) -> DeltaPlan:
    bodies = [message_json(msg) for msg in context]
    limit = min(len(old), len(bodies))
    changed = tuple((i, bodies[i]) for i in range(limit) if bodies[i] != old[i])
    return DeltaPlan(changed=changed, appended=tuple(bodies[len(old) :]), bodies=bodies)


def _unsavable(key: SessionKey, exc: Exception) -> SessionInputError:
    detail = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return SessionInputError(
        f"the state of session {key} cannot be saved because it would not load back "
        f"({detail[:300]}); a field holds a value its type does not allow (pydantic does "
        "not check assignments): fix that value, or reload the last saved state with "
        "`get_session`; nothing was written"
    )


def decode_state(key: SessionKey, where: str, head: bytes, bodies: list[bytes]) -> AgentState:
    """Rebuild the state; undecodable data raises `SessionCorruptedError` naming `where`.

    Nesting deeper than `MAX_JSON_DEPTH` is refused before anything is parsed (parsing it
    would recurse until `RecursionError`).
    """
    try:
        _check_depth("the head", head)
        for position, body in enumerate(bodies):  # one by one: most take the fast path
            _check_depth(f"message {position}", body)
        obj = json.loads(head)
        if not isinstance(obj, dict):
            raise ValueError(f"the head is a JSON {type(obj).__name__}, not an object")
        if "context" in obj:
            raise ValueError("the head holds a context (the messages are stored apart)")
        inner = head.strip()[1:-1].strip()  # the head's members, then the stored bodies
        text = b"{" + inner + (b"," if inner else b"") + b'"context":['
        text += b",".join(bodies) + b"]}"
    except (ValueError, RecursionError) as exc:
        raise _corrupted(key, where, exc) from exc
    try:
        state = AgentState.model_validate_json(text)  # one compiled pass; else the checked one
        if obj.get("schema_version") == SCHEMA_VERSION:
            # Bodies of the current form are what the messages dump to until they change;
            # older ones were migrated on the way in, so they are not remembered.
            for msg, body in zip(state.context, bodies, strict=True):
                remember_message_json(msg, body)
        return state
    except StateVersionError as exc:
        raise StateVersionError(f"session {key} at {where}: {exc}") from exc
    except (ValueError, TypeError, RecursionError, StateError) as exc:  # ValidationError too
        raise _corrupted(key, where, exc) from exc


def _check_depth(what: str, raw: bytes | str) -> None:
    if json_depth_exceeds(raw):
        raise ValueError(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")


def _corrupted(key: SessionKey, where: str, exc: Exception) -> SessionCorruptedError:
    first = str(exc).splitlines()[0][:200]
    return SessionCorruptedError(
        f"session {key} at {where} cannot be decoded ({first}); other sessions are "
        "unaffected: delete it with `delete_session` or restore it from a backup"
    )


def listed(key: SessionKey, build: Callable[[], SessionInfo]) -> SessionInfo | None:
    """`build()`, or None (logged as a warning) if the session's row is damaged.

    One damaged session must not hide the user's others from `list_sessions`; it is
    left out, and `get_session` of it raises `SessionCorruptedError`.
    """
    try:
        return build()
    except SessionCorruptedError as exc:
        logger.warning("list_sessions leaves out session %s: %s", key, exc)
        return None


def encode_metadata(metadata: object) -> str | None:
    """JSON text for `metadata` (None stays None); anything else raises `SessionInputError`."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise SessionInputError(
            f"metadata must be a dict with string keys, got {type(metadata).__name__}"
        )
    try:
        text = json.dumps(metadata, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise SessionInputError(f"metadata must be JSON-serialisable: {exc}") from exc
    if json_depth_exceeds(text):
        raise SessionInputError(
            f"metadata nests deeper than {MAX_JSON_DEPTH} levels, which would not load back; "
            "store it flatter"
        )
    return text


def decode_metadata(key: SessionKey, where: str, raw: str | bytes) -> dict[str, Any]:
    """Parse stored metadata JSON; a bad value raises `SessionCorruptedError`."""
    try:
        _check_depth("the metadata", raw)
        value = json.loads(raw)
        if not isinstance(value, dict):
            raise ValueError("metadata is not a JSON object")
    except (ValueError, RecursionError) as exc:
        raise _corrupted(key, where, exc) from exc
    return value


def parse_time(key: SessionKey, where: str, raw: str | bytes) -> datetime:
    """Parse a stored ISO 8601 timestamp; a bad value raises `SessionCorruptedError`."""
    try:
        text = raw.decode() if isinstance(raw, bytes) else raw
        return datetime.fromisoformat(text)
    except ValueError as exc:
        raise _corrupted(key, where, exc) from exc


@dataclass(slots=True)
class Loaded:
    """The stored version a state object was loaded from (or last saved as)."""

    ref: weakref.ref[AgentState]
    key: SessionKey
    version: int
    bodies: list[bytes]
    created_at: datetime
    """When the session was created: tells a recreated session from this one."""
    head: bytes | None = None
    """The head as stored at `version`, when known (to tell whether the object changed)."""


class StateTracker:
    """Maps live `AgentState` objects (by identity) to the version they were loaded from.

    Entries vanish with their state object (a weakref callback), so holding a state is
    what keeps its version known; `AgentState` is unhashable, hence `id()` keys.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, Loaded] = {}

    def remember(
        self,
        state: AgentState,
        key: SessionKey,
        version: int,
        bodies: list[bytes],
        created_at: datetime,
        head: bytes | None = None,
    ) -> None:
        """Record that `state` now matches `version` of session `key` (created at `created_at`)."""
        ident = id(state)
        by_id = self._by_id

        def forget(ref: weakref.ref[AgentState]) -> None:
            entry = by_id.get(ident)
            if entry is not None and entry.ref is ref:
                del by_id[ident]

        by_id[ident] = Loaded(weakref.ref(state, forget), key, version, bodies, created_at, head)

    def get(self, state: AgentState, key: SessionKey) -> Loaded | None:
        """The loaded version of `state` for session `key`, if known."""
        entry = self._by_id.get(id(state))
        if entry is None or entry.ref() is not state or entry.key != key:
            return None
        return entry

    def __len__(self) -> int:
        return len(self._by_id)
