"""Test helpers that ship with tether, for users testing their own agents and backends.

`ScriptedChatModel` plays a script instead of calling a provider, and `scripted_agent`
builds an `Agent` around one; `reply_events` runs one reply to its list of events,
`collect` drains any event stream, `event_types` and `tool_results` pick out what tests
assert on; `RecordingMiddleware` records the hooks and events of each reply.
`tether.testing.storage_conformance` holds the tests every session storage must pass,
`tether.testing.event_log_conformance` those every event log must pass (both need
`pytest` and `pytest-asyncio`; import them only from tests).
"""

from tether.model import ScriptedChatModel, ScriptedResponse
from tether.testing._agent import reply_events, scripted_agent, tool_results
from tether.testing._record import RecordingMiddleware, collect, event_types

__all__ = [
    "RecordingMiddleware",
    "ScriptedChatModel",
    "ScriptedResponse",
    "collect",
    "event_types",
    "reply_events",
    "scripted_agent",
    "tool_results",
]
