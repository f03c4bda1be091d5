"""A checkpoint that restores what it saved: the loop keeps no copy of the state at its saves."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from tether._loop import checkpoint as copies_module
from tether._loop import run as run_module
from tether.agent import Agent
from tether.app.storage import SQLiteStorage, StorageCheckpoint
from tether.errors import SessionConflictError
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState, RestoringCheckpoint
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call
KEY = ("u", "a", "s")


@tool(is_concurrency_safe=True)
async def charge(amount: int) -> str:
    """Charge."""
    return "charged"


def _agent(state: AgentState) -> Agent:
    script = [
        AssistantMsg(
            "a", [call("charge", {"amount": 1}, id="c1"), call("charge", {"amount": 2}, id="c2")]
        ),
        AssistantMsg("a", "done"),
    ]
    return Agent("a", "p", ScriptedChatModel(script), Toolkit(tools=[charge]), state=state)


def _dump(state: AgentState) -> Any:
    return json.loads(state.model_dump_json())


class _FailsAt:
    """A storage checkpoint that raises at save point `at` (the service's kind of wrapper)."""

    def __init__(self, save: StorageCheckpoint, at: int) -> None:
        self.save, self.at, self.count = save, at, 0

    async def __call__(self, state: AgentState) -> None:
        self.count += 1
        if self.count == self.at:
            raise SessionConflictError("another worker saved first")
        await self.save(state)

    def restore_last_saved(self, state: AgentState) -> bool:
        return self.save.restore_last_saved(state)


@pytest.mark.parametrize("fail_at", range(1, 6))  # five save points
async def test_a_failing_save_point_restores_the_state_last_stored(
    fail_at: int, tmp_path: Path
) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        agent = _agent((await storage.upsert_session(*KEY)).state)
        checkpoint = _FailsAt(storage.checkpoint(*KEY), fail_at)
        assert isinstance(checkpoint, RestoringCheckpoint)
        with pytest.raises(SessionConflictError):
            await agent.reply(UserMsg("user", "go"), checkpoint=checkpoint)
        # The state carries on from what is stored: its next save is O(change) again.
        agent.state.context.append(UserMsg("user", "still here"))
        await storage.update_session_state(*KEY, agent.state)
    async with SQLiteStorage(tmp_path / "s.db") as fresh:
        stored = await fresh.get_session(*KEY)
    assert stored is not None
    assert _dump(agent.state) == _dump(stored.state)
    assert stored.state.context[-1].get_text_content() == "still here"
    assert len(stored.state.context) == (1 if fail_at == 1 else 3)


async def test_before_its_first_save_the_state_goes_back_to_how_the_reply_began(
    tmp_path: Path,
) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        agent = _agent((await storage.upsert_session(*KEY)).state)
        agent.state.summary = "changed, not saved yet"  # the storage never saw this
        began = _dump(agent.state)
        with pytest.raises(SessionConflictError):
            await agent.reply(
                UserMsg("user", "go"), checkpoint=_FailsAt(storage.checkpoint(*KEY), 1)
            )
    assert _dump(agent.state) == began


async def test_a_restoring_checkpoint_is_never_copied_at_its_save_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[int] = []
    taken = copies_module.snapshot

    def counted(state: AgentState) -> Any:
        copies.append(len(state.context))
        return taken(state)

    monkeypatch.setattr(run_module, "snapshot", counted)
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        agent = _agent((await storage.upsert_session(*KEY)).state)
        await agent.reply(UserMsg("user", "go"), checkpoint=storage.checkpoint(*KEY))
        assert copies == [0]  # the state as the reply began, before its first save
        copies.clear()
        save = storage.checkpoint(*KEY)

        def plain(state: AgentState) -> Awaitable[None]:  # a plain callable: copied
            return save(state)

        agent = _agent((await storage.get_session(*KEY)).state)  # type: ignore[union-attr]
        await agent.reply(UserMsg("user", "again"), checkpoint=plain)
        assert len(copies) == 6  # the start and each of the five save points


async def test_a_state_it_never_saved_is_not_restored(tmp_path: Path) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        await storage.upsert_session(*KEY)
        state = AgentState()
        state.summary = "mine"
        assert storage.checkpoint(*KEY).restore_last_saved(state) is False
        assert state.summary == "mine"
