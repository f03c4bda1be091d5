"""The write plan: the bodies it writes are exactly each message's own JSON."""

from __future__ import annotations

from tether.app.storage._codec import dump_message, plan_delta
from tether.app.storage._record import SessionKey
from tether.message import AssistantMsg, UserMsg

KEY = SessionKey.of("u", "a", "s")


def test_a_changed_or_new_last_message_is_written_as_its_own_json() -> None:
    context = [UserMsg("user", "hi"), AssistantMsg("bot", "hello"), UserMsg("user", "más ✓")]
    bodies = [dump_message(m) for m in context]
    changed = plan_delta(KEY, [*bodies[:2], b'{"old": 1}'], context, trusted=True)
    assert changed.changed == ((2, bodies[2]),) and changed.appended == ()
    appended = plan_delta(KEY, bodies[:2], context, trusted=True)
    assert appended.changed == () and appended.appended == (bodies[2],)
    assert changed.bodies == appended.bodies == bodies
    two = plan_delta(KEY, bodies[:1], context, trusted=True)  # more than one in the tail
    assert two.appended == tuple(bodies[1:]) and two.bodies == bodies
