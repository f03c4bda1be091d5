"""Between A2A and tether: the messages sent to a remote agent, and what its parts say."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tether.event import ConfirmResult, UserConfirmResultEvent

if TYPE_CHECKING:
    from a2a.types import Message, Part

__all__ = ["answer_of", "answer_parts", "data_of", "outbound", "text_of"]


def outbound(
    parts: list[Part], message_id: str, task_id: str | None, context_id: str | None
) -> Message:
    """A user message to the remote agent (on its task and context, when continuing one)."""
    from a2a.types import Message, Role

    return Message(
        message_id=message_id,
        role=Role.ROLE_USER,
        parts=parts,
        task_id=task_id or "",
        context_id=context_id or "",
    )


def text_part(text: str) -> Part:
    """A text part."""
    from a2a.types import Part

    return Part(text=text)


def answer_of(resume: dict[str, Any]) -> dict[str, Any]:
    """What the user answered to a remote question: `{"approved", "reason"?, "answer"?}`.

    `resume` is the stored `UserConfirmResultEvent` routed to the remote call; an edited
    call input with an `"answer"` string carries a free-text answer.
    """
    event = UserConfirmResultEvent.model_validate(resume)
    result: ConfirmResult = event.confirm_results[0]
    answer: dict[str, Any] = {"approved": result.confirmed}
    if result.reason:
        answer["reason"] = result.reason
    try:
        edited = json.loads(result.tool_call.input)
    except ValueError:
        edited = None
    if result.confirmed and isinstance(edited, dict) and isinstance(edited.get("answer"), str):
        answer["answer"] = edited["answer"]
    return answer


def answer_parts(answer: dict[str, Any]) -> list[Part]:
    """The answer as a text part ("yes"/"no", or the free text) and a data part (both).

    Any A2A agent reads the text (exactly "yes" or "no", so a strict reader matches it); a
    tether service (or any agent that looks for it) reads the data part
    `{"approved": bool, "reason"?: str, "answer"?: str}`, which alone carries the reason.
    """
    from a2a.helpers.proto_helpers import new_data_part

    text = answer.get("answer") or ("yes" if answer["approved"] else "no")
    return [text_part(text), new_data_part(answer, media_type="application/json")]


def text_of(parts: Iterable[Part]) -> str:
    """The text parts, joined by newlines."""
    return "\n".join(p.text for p in parts if p.HasField("text"))


def data_of(parts: Iterable[Part]) -> list[Any]:
    """The data parts, as JSON values (whole numbers stay ints)."""
    from a2a.helpers.proto_helpers import get_data_parts

    return [_ints(value) for value in get_data_parts(list(parts))]


def _ints(value: Any) -> Any:
    """Protobuf keeps every number as a double: give whole ones back as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value
