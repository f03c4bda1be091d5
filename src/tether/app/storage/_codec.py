"""`AgentState` ↔ (head, message bodies), the O(Δ) write plan, and loaded-version tracking.

A state is stored as a small *head* (every field but `context`) and one JSON body per
message. To save, the messages that can have changed since the last save of the same
state object are serialised (see `Settled`) and compared with their stored bodies; only
those that differ and new ones are written.
"""

from __future__ import annotations

import functools
import json
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, SchemaSerializer

from tether._ids import now_iso
from tether._json_depth import MAX_JSON_DEPTH, json_depth_exceeds
from tether.app.storage._record import SessionInfo, SessionKey
from tether.errors import SessionCorruptedError, SessionInputError, StateError, StateVersionError
from tether.message import Msg
from tether.state import SCHEMA_VERSION, AgentState
from tether.state._fastload import check_message_json
from tether.state._json import message_json, remember_message_json

__all__ = [
    "DeltaPlan",
    "Loaded",
    "Settled",
    "apply_plan",
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
    "save_time",
    "time_text",
]

logger = logging.getLogger("tether.storage")
_STATE = TypeAdapter(AgentState)
_NO_CONTEXT = {"context"}
_UNSAVABLE = (PydanticSerializationError, ValidationError, StateVersionError)


@functools.cache
def _head() -> SchemaSerializer:
    """`AgentState`'s compiled serialiser, built on first use.

    Not `TypeAdapter(AgentState).serializer` taken at import: that is pydantic's stand-in
    for a deferred build, which looks the real one up again at every call.
    """
    AgentState.model_rebuild()
    return AgentState.__pydantic_serializer__


def dump_head(state: AgentState) -> bytes:
    """The state without its context, as JSON (unchecked: see `encode_head`)."""
    return _head().to_json(state, exclude=_NO_CONTEXT, warnings=False)


def dump_message(msg: Msg) -> bytes:
    """One message as its stored JSON body, the state's compact form (unchecked).

    An unchanged message gives back the bytes it was last written or loaded as.
    """
    return message_json(msg)


def encode_head(key: SessionKey, state: AgentState, known: bytes | None = None) -> bytes:
    """The state without its context, as JSON, checked to load back (else `SessionInputError`).

    The head is what tether's own models serialise to, so it is not validated again when
    pydantic's serialiser finds every value of its declared type (`warnings="error"`: a
    value assigned unvalidated, such as a `str` for an `int`, makes it complain). Only
    then, or for another schema version, is the head validated as loading would.
    """
    try:
        try:
            head = _head().to_json(state, exclude=_NO_CONTEXT, warnings="error")
        except PydanticSerializationError:  # a value not of its type: does it still load?
            head = _head().to_json(state, exclude=_NO_CONTEXT, warnings=False)
        else:
            if state.schema_version == SCHEMA_VERSION:
                return head
        if head == known:
            return head
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
            check_message_json(body)
    except _UNSAVABLE as exc:
        raise _unsavable(key, exc) from exc
    return bodies


@dataclass(slots=True)  # not frozen: built at every save point (frozen costs 2x)
class DeltaPlan:
    """What changed between the stored bodies and a context."""

    changed: tuple[tuple[int, bytes], ...]
    appended: tuple[bytes, ...]
    bodies: list[bytes] | None
    """The bodies after the write (kept to plan the next one), or None: the stored ones
    with `changed` and `appended` applied and cut to `count` (see `apply_plan`)."""
    count: int
    """Messages after the write."""
    written: tuple[int, ...] = ()
    """Positions this write writes (changed or appended): checked again at the next one."""


@dataclass(slots=True)
class Settled:
    """What the last save of a tracked state wrote from: its message objects, by position.

    A message that a save found unchanged is *settled*: only the reply's own message
    changes in place (DESIGN §14), so the next save compares settled messages by identity
    alone (one list comparison, in C) and serialises only the rest: replaced, appended,
    written last time, the last one and the reply's. Planning updates `msgs` in place, so
    a caller drops the `Settled` until the write it planned succeeds.
    """

    msgs: list[Msg]
    """The context's message objects at that save (a list of its own)."""
    open: tuple[int, ...]
    """Positions that save wrote: they may still change in place (the reply's message)."""


_REPLY_SCAN = 16
"""How far from the end the reply's message is looked for (it is the last one, or close)."""
_TAIL = 16
"""Stored messages compared one by one at the end of a settled context."""


def plan_delta(
    key: SessionKey,
    old: list[bytes],
    context: list[Msg],
    *,
    trusted: bool,
    settled: Settled | None = None,
    reply_id: str | None = None,
) -> DeltaPlan:
    """Compare `context` with the stored `old` bodies; the written bodies are checked to load.

    `trusted` bodies are ones this storage wrote or decoded. With `settled` (what the last
    save of this very state wrote from, with `old` its bodies), only the messages that can
    have changed are serialised: O(change), not O(context). Without it every message is
    serialised (an unchanged one gives back its remembered bytes) and compared; bodies
    read back for a state the storage never saw (`trusted=False`) may be damaged, so they
    are compared whole.
    """
    try:
        if settled is not None and trusted and len(settled.msgs) == len(old):
            plan = _plan_settled(old, context, settled, reply_id)
        else:
            plan = _plan_all(old, context)
        for _, body in plan.changed:
            check_message_json(body)
        for body in plan.appended:
            check_message_json(body)
    except _UNSAVABLE as exc:
        raise _unsavable(key, exc) from exc
    return plan


def apply_plan(old: list[bytes], plan: DeltaPlan) -> list[bytes]:
    """The bodies after `plan` was written (`old` is updated in place when the plan says so)."""
    if plan.bodies is not None:
        return plan.bodies
    del old[plan.count :]
    for i, body in plan.changed:
        old[i] = body
    old += plan.appended
    return old


def _plan_all(old: list[bytes], context: list[Msg]) -> DeltaPlan:
    bodies = [message_json(msg) for msg in context]  # unchanged ones: their stored bytes
    limit = min(len(old), len(bodies))
    changed = tuple(
        (i, bodies[i]) for i in range(limit) if bodies[i] is not old[i] and bodies[i] != old[i]
    )
    written = (*(i for i, _ in changed), *range(limit, len(bodies)))
    return DeltaPlan(changed, tuple(bodies[len(old) :]), bodies, len(bodies), written)


def _plan_settled(
    old: list[bytes], context: list[Msg], settled: Settled, reply_id: str | None
) -> DeltaPlan:
    msgs = settled.msgs
    count = len(context)
    limit = min(len(old), count)
    check = {i for i in settled.open if i < limit}
    # The tail (where replies replace and append) is compared one by one; the rest, by
    # far the most, in one list comparison in C (identity first) once the tails agree.
    tail = max(0, limit - _TAIL)
    before = msgs[tail:limit]
    msgs[tail:] = context[tail:]
    check.update(i for i, msg in enumerate(before, tail) if msg is not context[i])
    if msgs != context:  # a message before the tail was replaced
        for i in range(tail):
            if context[i] is not msgs[i]:
                check.add(i)
                msgs[i] = context[i]
    if limit:
        check.add(limit - 1)
    if reply_id is not None:
        for i in range(count - 1, max(-1, count - 1 - _REPLY_SCAN), -1):
            if context[i].id == reply_id:
                if i < limit:
                    check.add(i)
                break
    changed = []
    for i in sorted(check):
        body = message_json(context[i])
        if body is not old[i] and body != old[i]:
            changed.append((i, body))
    appended = tuple([message_json(msg) for msg in context[limit:]])
    written = (*(i for i, _ in changed), *range(limit, count))
    return DeltaPlan(tuple(changed), appended, None, count, written)


_last_time: tuple[object, str] = (None, "")


def save_time() -> datetime:
    """Now (UTC), for a save; `time_text` gives back the text it was made from.

    Formatting a datetime costs more than making one from its text.
    """
    global _last_time
    text = now_iso()
    moment = datetime.fromisoformat(text)
    _last_time = (moment, text)
    return moment


def time_text(moment: datetime) -> str:
    """`moment` in ISO 8601: the text `save_time` made it from, else `isoformat()`."""
    last = _last_time  # one tuple, replaced whole: safe on a storage's thread too
    if last[0] is moment:
        return last[1]
    return moment.isoformat()


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
    settled: Settled | None = None
    """What the save that wrote `version` wrote from (None after a load: check them all)."""


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
        settled: Settled | None = None,
    ) -> None:
        """Record that `state` now matches `version` of session `key` (created at `created_at`)."""
        ident = id(state)
        by_id = self._by_id

        def forget(ref: weakref.ref[AgentState]) -> None:
            entry = by_id.get(ident)
            if entry is not None and entry.ref is ref:
                del by_id[ident]

        ref = weakref.ref(state, forget)
        by_id[ident] = Loaded(ref, key, version, bodies, created_at, head, settled)

    def get(self, state: AgentState, key: SessionKey) -> Loaded | None:
        """The loaded version of `state` for session `key`, if known."""
        entry = self._by_id.get(id(state))
        if entry is None or entry.ref() is not state or (entry.key is not key and entry.key != key):
            return None
        return entry

    def holds(self, state: AgentState, entry: Loaded) -> bool:
        """Whether `entry`, got from `get(state, ...)` while `state` lived, is still its entry."""
        return self._by_id.get(id(state)) is entry

    def __len__(self) -> int:
        return len(self._by_id)
