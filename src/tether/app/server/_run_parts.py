"""The parts of a reply the service runs: the session it runs on and its run's progress."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tether.agent import Agent
from tether.app.storage import Lease, LogItem, LogKey
from tether.event import AgentEvent, ResumeEvent
from tether.mcp._relay import AnswerRelay
from tether.message import Msg

__all__ = ["RunInput", "RunningReply", "SessionRef"]

RunInput = Msg | list[Msg] | ResumeEvent | None
"""What starts or resumes a reply."""


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A session the caller may use: its owner, agent and id."""

    user_id: str
    agent_id: str
    session_id: str

    @property
    def key(self) -> LogKey:
        """The session's name in the event log."""
        return LogKey(self.user_id, self.session_id)

    @property
    def ids(self) -> tuple[str, str, str]:
        """(user_id, agent_id, session_id), as the storage takes them."""
        return (self.user_id, self.agent_id, self.session_id)


@dataclass(slots=True)
class RunningReply:
    """A reply this worker runs: its session, lease, agent copy and logging progress."""

    ref: SessionRef
    lease: Lease
    agent: Agent
    inputs: RunInput
    started: asyncio.Future[None]
    tail: list[AgentEvent] = field(default_factory=list)
    logged: int = 0
    pump: asyncio.Task[None] | None = None
    interrupted: bool = False
    pending: list[LogItem] = field(default_factory=list)
    writer: asyncio.Task[None] | None = None
    lost: BaseException | None = None
    saving: bool = False
    ending: bool = False
    renewed: bool = True
    """A renewal of the lease started since the last save point (taking it counts)."""
    waking: asyncio.TimerHandle | None = None
    """The write of the queue after `_LINGER` s (`_runs`), unless a save point writes it first."""
    closing: bool = False
    """The reply's last save is done: what it logs from now goes with the release."""
    beat: asyncio.TimerHandle | None = None
    """Starts the heartbeat, for a reply still running after the first renewal period."""
    relay: tuple[str, AnswerRelay] | None = None
    """The reply id and relay its MCP questions' answers come through (other workers')."""
