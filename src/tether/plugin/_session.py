"""What the scheduler reads and writes in a session's `AgentState`.

`state.plugins` maps module name → replies left awake. Which plugins were activated in
the reply in progress (and at which reasoning step) is kept in
`state.tool_state["plugin_activation"]`, so a reply paused for confirmation and resumed in
another process still counts as one round and still hides a plugin woken in the paused step.

The plugin package sits below `state/` in the layering: `AgentState` is imported for
typing only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.message import ToolCallState

if TYPE_CHECKING:
    from tether.state import AgentState

__all__ = [
    "MARKER_KEY",
    "activated_in_reply",
    "activated_in_this_step",
    "clear_marker",
    "is_acting",
    "mark_activated",
]

MARKER_KEY = "plugin_activation"
"""The `tool_state` entry that records this reply's activations."""

_OPEN = (ToolCallState.PENDING, ToolCallState.ALLOWED, ToolCallState.RUNNING)


def is_acting(state: AgentState) -> bool:
    """Whether the view is being built to run tool calls (some call is still unanswered).

    The loop reasons only once every call of the previous step has its result, so a view
    built while a call is pending or allowed serves an acting step: its prompt is never
    sent, and a plugin woken in this step is not callable yet.
    """
    msg = state.reply_msg()
    if msg is None:
        return False
    return any(c.state in _OPEN for c in msg.tool_calls)


def _marker(state: AgentState) -> dict[str, Any] | None:
    marker = state.tool_state.get(MARKER_KEY)
    reply = state.reply
    if marker is None or reply is None or marker.get("reply_id") != reply.reply_id:
        return None
    return marker


def mark_activated(state: AgentState, module_name: str) -> None:
    """Record that `module_name` woke in the current step of the reply in progress."""
    reply = state.reply
    if reply is None:
        return
    marker = _marker(state)
    if marker is None:
        marker = {"reply_id": reply.reply_id, "activated": {}}
        state.tool_state[MARKER_KEY] = marker
    marker["activated"][module_name] = reply.iteration


def activated_in_reply(state: AgentState, reply_id: str) -> set[str]:
    """The plugins woken during reply `reply_id` (this reply does not use up their rounds)."""
    marker = state.tool_state.get(MARKER_KEY)
    if marker is None or marker.get("reply_id") != reply_id:
        return set()
    return set(marker.get("activated", {}))


def activated_in_this_step(state: AgentState, module_name: str) -> bool:
    """Whether `module_name` woke in the step whose tool calls are being run now."""
    marker, reply = _marker(state), state.reply
    if marker is None or reply is None or not is_acting(state):
        return False
    step = marker.get("activated", {}).get(module_name)
    return step is not None and step == reply.iteration


def clear_marker(state: AgentState) -> None:
    """Forget this reply's activations (at the reply's end)."""
    state.tool_state.pop(MARKER_KEY, None)
