"""`AgentState` ↔ (head, message bodies), the O(Δ) write plan, and loaded-version tracking.

A state is stored as a small *head* (every field but `context`) and one JSON body per
message. To save, the whole context is serialised once as a JSON array and compared,
message by message, with the bodies of the version it was loaded from (`bytes.startswith`
at an offset: a memcmp, no copies); only messages that differ and new ones are written.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tether.app.storage._record import SessionKey
from tether.errors import SessionCorruptedError, SessionInputError, StateVersionError
from tether.message import Msg
from tether.state import AgentState

__all__ = [
    "DeltaPlan",
    "Loaded",
    "StateTracker",
    "decode_metadata",
    "decode_state",
    "encode_bodies",
    "encode_head",
    "encode_metadata",
    "parse_time",
    "plan_delta",
]

_STATE = TypeAdapter(AgentState)
_CONTEXT = TypeAdapter(list[Msg])
_MSG = TypeAdapter(Msg)
_NO_CONTEXT = {"context"}


def encode_head(state: AgentState) -> bytes:
    """The state without its context, as JSON."""
    return _STATE.dump_json(state, exclude=_NO_CONTEXT)


def encode_bodies(context: list[Msg]) -> tuple[bytes, ...]:
    """One JSON body per message."""
    return tuple(_MSG.dump_json(msg) for msg in context)


@dataclass(frozen=True, slots=True)
class DeltaPlan:
    """What changed between the stored bodies and a context."""

    changed: tuple[tuple[int, bytes], ...]
    appended: tuple[bytes, ...]
    bodies: list[bytes]
    """The bodies after the write (kept to plan the next one)."""


def plan_delta(old: list[bytes], context: list[Msg]) -> DeltaPlan:
    """Compare `context` with the stored `old` bodies; serialise only from the first change."""
    array = _CONTEXT.dump_json(context)
    limit = min(len(old), len(context))
    kept, pos = 0, 1
    while kept < limit and array.startswith(old[kept], pos):
        pos += len(old[kept]) + 1
        kept += 1
    tail = [_MSG.dump_json(msg) for msg in context[kept:]]
    changed = tuple(
        (i, body) for i, body in enumerate(tail[: limit - kept], start=kept) if body != old[i]
    )
    appended = tuple(tail[max(0, len(old) - kept) :])
    return DeltaPlan(changed=changed, appended=appended, bodies=old[:kept] + tail)


def decode_state(key: SessionKey, where: str, head: bytes, bodies: list[bytes]) -> AgentState:
    """Rebuild the state; undecodable data raises `SessionCorruptedError` naming `where`."""
    try:
        obj = json.loads(head)
        if not isinstance(obj, dict):
            raise ValueError(f"the head is a JSON {type(obj).__name__}, not an object")
        obj["context"] = json.loads(b"[" + b",".join(bodies) + b"]")
    except ValueError as exc:
        raise _corrupted(key, where, exc) from exc
    try:
        return AgentState.model_validate(obj)
    except StateVersionError as exc:
        raise StateVersionError(f"session {key} at {where}: {exc}") from exc
    except ValidationError as exc:
        raise _corrupted(key, where, exc) from exc


def _corrupted(key: SessionKey, where: str, exc: Exception) -> SessionCorruptedError:
    first = str(exc).splitlines()[0][:200]
    return SessionCorruptedError(
        f"session {key} at {where} cannot be decoded ({first}); other sessions are "
        "unaffected: delete it with `delete_session` or restore it from a backup"
    )


def encode_metadata(metadata: object) -> str | None:
    """JSON text for `metadata` (None stays None); anything else raises `SessionInputError`."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise SessionInputError(
            f"metadata must be a dict with string keys, got {type(metadata).__name__}"
        )
    try:
        return json.dumps(metadata, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise SessionInputError(f"metadata must be JSON-serialisable: {exc}") from exc


def decode_metadata(key: SessionKey, where: str, raw: str | bytes) -> dict[str, Any]:
    """Parse stored metadata JSON; a bad value raises `SessionCorruptedError`."""
    try:
        value = json.loads(raw)
        if not isinstance(value, dict):
            raise ValueError("metadata is not a JSON object")
    except ValueError as exc:
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


class StateTracker:
    """Maps live `AgentState` objects (by identity) to the version they were loaded from.

    Entries vanish with their state object (a weakref callback), so holding a state is
    what keeps its version known; `AgentState` is unhashable, hence `id()` keys.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, Loaded] = {}

    def remember(
        self, state: AgentState, key: SessionKey, version: int, bodies: list[bytes]
    ) -> None:
        """Record that `state` now matches `version` of session `key`."""
        ident = id(state)
        by_id = self._by_id

        def forget(ref: weakref.ref[AgentState]) -> None:
            entry = by_id.get(ident)
            if entry is not None and entry.ref is ref:
                del by_id[ident]

        by_id[ident] = Loaded(weakref.ref(state, forget), key, version, bodies)

    def get(self, state: AgentState, key: SessionKey) -> Loaded | None:
        """The loaded version of `state` for session `key`, if known."""
        entry = self._by_id.get(id(state))
        if entry is None or entry.ref() is not state or entry.key != key:
            return None
        return entry

    def __len__(self) -> int:
        return len(self._by_id)
