"""Save points: the caller's checkpoint, and rolling a state back to the last one saved."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from tether._loop.current import reply_message
from tether._loop.nested import MARK
from tether.message import Msg, detached
from tether.state import AgentState

__all__ = ["Snapshot", "restore", "snapshot"]


_HEAD = tuple(name for name in AgentState.model_fields if name != "context")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A state as it was at a save point, kept to roll back to.

    During a reply only the reply's own message changes in place (older messages are
    only ever replaced), so the context is kept as a list of the same messages, plus a
    copy of the reply's message: O(reply), not O(history).
    """

    context: list[Msg]
    reply_msg: Msg | None
    original: Msg | None
    head: dict[str, Any]


_ATOMS = (str, int, float, bool, type(None))


def _copy(value: Any) -> Any:
    """A copy sharing nothing mutable.

    JSON-like dicts and lists are copied by hand (a fifth of the cost of `deepcopy`, paid
    at every save point); anything else by `deepcopy`.
    """
    kind = type(value)
    if kind is dict:
        if MARK in value:  # a sub-agent's record: its values are replaced, never changed
            return dict(value)
        return {k: _copy(v) for k, v in value.items()} if value else {}
    if kind is list:
        return [_copy(v) for v in value] if value else []
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, BaseModel):
        return detached(value)
    return copy.deepcopy(value)


def snapshot(state: AgentState) -> Snapshot:
    """Keep `state` as it is now."""
    msg = reply_message(state)
    return Snapshot(
        context=list(state.context),
        reply_msg=detached(msg) if msg is not None else None,
        original=msg,
        head={name: _copy(getattr(state, name)) for name in _HEAD},
    )


def restore(state: AgentState, kept: Snapshot) -> None:
    """Put `state` (the same object) back as it was when `kept` was taken."""
    context, original, copied = kept.context, kept.original, kept.reply_msg
    if original is not None and copied is not None:
        context = [copied if m is original else m for m in context]
    state.context = list(context)
    for name, value in kept.head.items():
        setattr(state, name, value)
