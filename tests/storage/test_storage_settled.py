"""Save points cost the change: settled messages are compared by identity, not serialised."""

from __future__ import annotations

from typing import Any

import pytest
from storage_helpers import Backend

from tether.app.storage import _codec
from tether.errors import SessionConflictError
from tether.message import AssistantMsg, Msg, TextBlock, UserMsg
from tether.state import AgentState, ReplyCursor

U, A, S = "u", "a", "s"


def _history(n: int) -> AgentState:
    state = AgentState()
    for i in range(n):
        state.add_message(UserMsg("user", f"message {i}"))
    return state


@pytest.fixture
def serialised(monkeypatch: pytest.MonkeyPatch) -> list[Msg]:
    """The messages the planner serialises (`message_json` itself still runs)."""
    seen: list[Msg] = []
    real = _codec.message_json

    def counting(msg: Msg) -> bytes:
        seen.append(msg)
        return real(msg)

    monkeypatch.setattr(_codec, "message_json", counting)
    return seen


async def _reloaded(backend: Backend, state: AgentState) -> None:
    async with backend.make() as other:
        record = await other.get_session(U, A, S)
        assert record is not None and record.state == state


async def test_a_save_serialises_only_what_can_have_changed(
    backend: Backend, serialised: list[Msg]
) -> None:
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S, state=_history(300))).state
        state.add_message(UserMsg("user", "first save after the load: all are checked"))
        serialised.clear()
        await storage.update_session_state(U, A, S, state)
        assert len(serialised) == 301
        for i in range(3):
            serialised.clear()
            state.add_message(UserMsg("user", f"new {i}"))
            await storage.update_session_state(U, A, S, state)
            assert len(serialised) <= 3  # the new one, the last saved one, the one written last
        await _reloaded(backend, state)


async def test_a_replaced_message_anywhere_is_written(backend: Backend) -> None:
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S, state=_history(50))).state
        await storage.update_session_state(U, A, S, state)
        await storage.update_session_state(U, A, S, state)  # every message settled now
        state.context[7] = UserMsg("user", "replaced")
        await storage.update_session_state(U, A, S, state)
        await _reloaded(backend, state)
        del state.context[3]  # everything after it moves up by one
        state.add_message(UserMsg("user", "same length as before"))
        await storage.update_session_state(U, A, S, state)
        await _reloaded(backend, state)
        state.context[:] = state.context[:10]
        await storage.update_session_state(U, A, S, state)
        await _reloaded(backend, state)


async def test_the_replys_message_is_checked_when_it_is_not_the_last(backend: Backend) -> None:
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S, state=_history(20))).state
        reply = AssistantMsg("agent", "working")
        state.add_message(reply)
        state.reply = ReplyCursor(reply_id=reply.id)
        state.add_message(UserMsg("user", "a note after it"))
        for _ in range(3):  # the reply's message is settled by the rule of written ones
            await storage.update_session_state(U, A, S, state)
        reply.content.append(TextBlock(text="done"))
        await storage.update_session_state(U, A, S, state)
        await _reloaded(backend, state)


async def test_a_failed_write_leaves_the_next_save_whole(backend: Backend) -> None:
    async with backend.make() as storage, backend.make() as other:
        state = (await storage.upsert_session(U, A, S, state=_history(10))).state
        await storage.update_session_state(U, A, S, state)
        theirs = await other.get_session(U, A, S)
        assert theirs is not None
        await other.update_session_state(U, A, S, theirs.state)
        state.context[2] = UserMsg("user", "planned, then refused")
        state.add_message(UserMsg("user", "also refused"))
        with pytest.raises(SessionConflictError):
            await storage.update_session_state(U, A, S, state, expected_version=2)
        await storage.update_session_state(U, A, S, state, expected_version=3)
        await _reloaded(backend, state)


def test_the_plan_of_a_settled_state_is_the_plan_of_a_full_comparison() -> None:
    key = _codec.SessionKey.of(U, A, S)
    context: list[Any] = [UserMsg("user", f"m{i}") for i in range(8)]
    old = [_codec.dump_message(m) for m in context]
    settled = _codec.Settled(context[:], ())
    context[5] = UserMsg("user", "new five")
    context.append(UserMsg("user", "appended"))
    full = _codec.plan_delta(key, old, context, trusted=True)
    fast = _codec.plan_delta(key, old, context, trusted=True, settled=settled)
    assert fast.changed == full.changed and fast.appended == full.appended
    assert _codec.apply_plan(list(old), fast) == full.bodies
    assert settled.msgs == context and fast.written == full.written == (5, 8)
