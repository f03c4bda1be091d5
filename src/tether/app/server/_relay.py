"""`NotesRelay`: the answers to a reply's MCP questions, through the service's notes.

The worker that runs the reply announces each question as a note of the session; the
worker that receives the user's answer (`POST …/mcp-requests/{id}`) checks the note,
stores the answer as a note (the first answer wins) and the waiting worker finds it.
Settling a question fills its answer slot for good, so no answer can land after it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from tether.app.storage import LogKey
from tether.app.storage._notes import NotesBase
from tether.mcp._relay import AnswerRelay, add_relay

__all__ = ["ASK_TTL", "NotesRelay", "Question", "relay_reply", "scope_of"]

ASK_TTL = 3600.0
"""Seconds a question's notes live at most (they are removed when it is settled)."""


def scope_of(key: LogKey) -> str:
    """The notes scope of a session's MCP questions."""
    return json.dumps(["mcp-requests", key.user_id, key.session_id])


class Question:
    """A question some worker announced: its kind and reply."""

    def __init__(self, kind: Literal["elicitation", "sampling"], reply_id: str) -> None:
        self.kind: Literal["elicitation", "sampling"] = kind
        self.reply_id = reply_id

    @staticmethod
    async def find(notes: NotesBase, key: LogKey, request_id: str) -> Question | None:
        """The question announced under `request_id` in the session, if it still waits."""
        raw = await notes.get(scope_of(key), f"ask:{request_id}")
        if raw is None:
            return None
        data = json.loads(raw)
        sampling = data.get("kind") == "sampling"
        return Question("sampling" if sampling else "elicitation", str(data.get("reply_id", "")))

    @staticmethod
    async def answer(notes: NotesBase, key: LogKey, request_id: str, data: dict[str, Any]) -> bool:
        """Store the answer for the waiting worker; False if one was given already."""
        return await notes.put(
            scope_of(key), f"answer:{request_id}", json.dumps(data), ttl=ASK_TTL, only_new=True
        )


class NotesRelay(AnswerRelay):
    """The `AnswerRelay` of one session's reply over the service's notes."""

    def __init__(self, notes: NotesBase, key: LogKey) -> None:
        self.notes = notes
        self.scope = scope_of(key)

    async def announce(
        self, request_id: str, kind: Literal["elicitation", "sampling"], reply_id: str
    ) -> None:
        """Write the question's note (every worker can find it)."""
        data = json.dumps({"kind": kind, "reply_id": reply_id})
        await self.notes.put(self.scope, f"ask:{request_id}", data, ttl=ASK_TTL)

    async def answer(self, request_id: str) -> dict[str, Any] | None:
        """The answer's note, if a worker stored one."""
        raw = await self.notes.get(self.scope, f"answer:{request_id}")
        found = None if raw is None else json.loads(raw)
        return found if isinstance(found, dict) else None

    async def forget(self, request_id: str) -> None:
        """Close the question: a later answer gets 409.

        The answer's slot is filled (with `null`, if nobody answered) before the question's
        note goes: an answer that found the question a moment earlier then fails to store
        instead of landing with nobody waiting. The filled slot expires with `ASK_TTL`.
        """
        await self.notes.put(self.scope, f"answer:{request_id}", "null", ttl=ASK_TTL, only_new=True)
        await self.notes.pop(self.scope, f"ask:{request_id}")


def relay_reply(notes: NotesBase, key: LogKey, reply_id: str) -> tuple[str, AnswerRelay]:
    """Relay the answers of `reply_id` (of the session `key`) through `notes`."""
    relay = NotesRelay(notes, key)
    add_relay(reply_id, relay)
    return reply_id, relay
