"""Save points: the caller's checkpoint, and rolling a state back to the last one saved."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from tether.message import ContentBlock, Msg, detached
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
    sources: dict[str, Any]
    """The state's own value of each `head` entry (what its copy was taken from)."""
    blocks: list[tuple[ContentBlock, ContentBlock]]
    """The reply's blocks as (the state's block, its copy in `reply_msg`)."""


_ATOMS = (str, int, float, bool, type(None))


def _copy(value: Any) -> Any:
    """A copy sharing nothing mutable.

    JSON-like dicts and lists are copied by hand (a fifth of the cost of `deepcopy`, paid
    at every save point); anything else by `deepcopy`.
    """
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()} if value else {}
    if kind is list:
        return [_copy(v) for v in value] if value else []
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, BaseModel):
        return detached(value)
    return copy.deepcopy(value)


def snapshot(state: AgentState, previous: Snapshot | None = None) -> Snapshot:
    """Keep `state` as it is now.

    A value still the same object as at the `previous` save point and equal to its copy
    there is not copied again: that copy is shared (copies are only ever handed back by
    `restore`, which ends the run). Comparing costs about half of copying.
    """
    head, sources = {}, {}
    for name in _HEAD:
        value = sources[name] = getattr(state, name)
        if previous is not None and previous.sources[name] is value:
            kept = previous.head[name]
            head[name] = kept if _unchanged(kept, value) else _copy(value)
        else:
            head[name] = _copy(value)
    msg = state.reply_msg()
    blocks: list[tuple[ContentBlock, ContentBlock]] = []
    copied = None
    if msg is not None:
        before = previous.blocks if previous is not None and previous.original is msg else []
        for i, block in enumerate(msg.content):
            if i < len(before) and before[i][0] is block and _unchanged(before[i][1], block):
                blocks.append(before[i])
            else:
                blocks.append((block, detached(block)))
        copied = _with_blocks(msg, [c for _, c in blocks])
    return Snapshot(
        context=list(state.context),
        reply_msg=copied,
        original=msg,
        head=head,
        sources=sources,
        blocks=blocks,
    )


def _unchanged(kept: Any, value: Any) -> bool:
    """Whether the copy `kept` still equals `value` (a model's set fields included)."""
    if isinstance(value, BaseModel):
        return bool(kept == value) and kept.model_fields_set == value.model_fields_set
    return bool(kept == value)


def _with_blocks(msg: Msg, content: list[ContentBlock]) -> Msg:
    """`detached(msg)` with `content` (copies already made) as its content."""
    copied = detached(msg.model_copy(update={"content": []}))
    object.__setattr__(copied, "__pydantic_fields_set__", set(msg.model_fields_set))
    copied.__dict__["content"] = content
    return copied


def restore(state: AgentState, kept: Snapshot) -> None:
    """Put `state` (the same object) back as it was when `kept` was taken."""
    context, original, copied = kept.context, kept.original, kept.reply_msg
    if original is not None and copied is not None:
        context = [copied if m is original else m for m in context]
    state.context = list(context)
    for name, value in kept.head.items():
        setattr(state, name, value)
