"""Chat sessions in SQLite: `$TETHER_HOME/sessions.db` or `~/.local/share/tether/`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tether.app.storage import SessionInfo, SQLiteStorage
from tether.errors import ChatConfigError
from tether.state import AgentState, Checkpoint

__all__ = ["SessionStore", "tether_home"]

USER = "local"
AGENT = "chat"


def tether_home() -> Path:
    """Where sessions and input history live."""
    given = os.environ.get("TETHER_HOME")
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tether"


@dataclass
class SessionStore:
    """Saves one chat's state after every reply and pause; finds past sessions."""

    storage: SQLiteStorage
    cwd: Path
    model: str
    title: str = ""
    _written: set[str] = field(default_factory=set)
    """Sessions this store created or loaded (saved with a version check from then on)."""

    @classmethod
    def open(cls, cwd: Path, model: str) -> SessionStore:
        """The store under `tether_home()` (created if missing)."""
        home = tether_home()
        home.mkdir(parents=True, exist_ok=True)
        return cls(SQLiteStorage(home / "sessions.db"), cwd, model)

    async def save(self, state: AgentState) -> None:
        """Write `state`: the first time with its metadata, then checked against its version.

        A session this store created or loaded is saved with `update_session_state`, so a
        second terminal that advanced it meanwhile is a `SessionConflictError`, not lost.
        """
        if state.session_id in self._written:
            await self.storage.update_session_state(USER, AGENT, state.session_id, state)
            return
        if not self.title:
            self.title = _first_words(state)
        metadata = {
            "cwd": str(self.cwd),
            "model": self.model,
            "title": self.title,
            "saved_at": datetime.now(UTC).isoformat(),
        }
        await self.storage.upsert_session(
            USER, AGENT, state.session_id, state=state, metadata=metadata
        )
        self._written.add(state.session_id)

    def checkpoint(self, state: AgentState) -> Checkpoint:
        """The storage's save-point callable for `state`'s session (saved once before)."""
        return self.storage.checkpoint(USER, AGENT, state.session_id)

    async def load(self, session_id: str) -> AgentState:
        """A saved session's state (`ChatConfigError` if there is none)."""
        record = await self.storage.get_session(USER, AGENT, session_id)
        if record is None:
            raise ChatConfigError(
                f"no session {session_id!r} in {self.storage.path}; list them with /resume "
                "or start a new one without -r"
            )
        self.title = str(record.metadata.get("title", ""))
        self._written.add(session_id)
        return record.state

    async def sessions(self, *, here: bool = True) -> list[SessionInfo]:
        """Saved sessions, newest first (only this folder's when `here`)."""
        infos = await self.storage.list_sessions(USER, AGENT)
        if here:
            infos = [i for i in infos if i.metadata.get("cwd") == str(self.cwd)]
        return infos

    async def latest(self) -> AgentState:
        """The newest session of this folder (`ChatConfigError` if none)."""
        infos = await self.sessions()
        if not infos:
            raise ChatConfigError(
                f"no saved session in {self.cwd} to continue; start one without -c"
            )
        return await self.load(infos[0].session_id)

    async def close(self) -> None:
        """Release the database."""
        await self.storage.close()


def _first_words(state: AgentState) -> str:
    for msg in state.context:
        if msg.role == "user":
            return " ".join((msg.get_text_content(" ") or "").split())[:60]
    return ""
