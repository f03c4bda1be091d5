"""An agent that pauses for confirmation, built alike in the test and in a fresh process."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from tether.agent import Agent
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool
from tether.tracing import TracingMiddleware

RAN: list[str] = []


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file."""
    RAN.append(path)
    return f"deleted {path}"


def pausing_agent(
    middleware: TracingMiddleware, state: AgentState | None, *, resumed: bool
) -> Agent:
    """First process: one step asking to delete; second process: the final answer."""
    steps = (
        [AssistantMsg("a", "deleted it")]
        if resumed
        else [
            AssistantMsg("a", [ScriptedChatModel.tool_call("delete", {"path": "a.txt"}, id="d1")])
        ]
    )
    return Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel(steps),
        toolkit=Toolkit(tools=[delete]),
        state=state,
        middlewares=[middleware],
    )


def span_dicts(spans: list[ReadableSpan]) -> list[dict[str, Any]]:
    """Spans as plain data (what a fresh process prints)."""
    return [
        {
            "name": s.name,
            "kind": s.kind.name,
            "trace_id": format(s.context.trace_id, "032x"),
            "span_id": format(s.context.span_id, "016x"),
            "parent": format(s.parent.span_id, "016x") if s.parent else None,
            "links": [
                {
                    "trace_id": format(link.context.trace_id, "032x"),
                    "span_id": format(link.context.span_id, "016x"),
                    "attributes": dict(link.attributes or {}),
                }
                for link in s.links
            ],
            "attributes": json.loads(json.dumps(dict(s.attributes or {}), default=list)),
        }
        for s in spans
    ]
