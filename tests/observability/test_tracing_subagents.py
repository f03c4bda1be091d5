"""A sub-agent's `invoke_agent` span nests under its parent's `execute_tool` span."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "agent" / "subagents"))
import subagent_team as team

from tether.agent import Agent
from tether.message import UserMsg
from tether.tool import Toolkit


async def test_invoke_agent_of_a_child_is_inside_the_parents_execute_tool(telemetry) -> None:
    team.LOG["path"] = ""
    kid = team.researcher()
    kid.middlewares = (telemetry.middleware(),)
    boss_model = team.RuleModel("boss", [("researcher", '{"task": "t"}')], "done")
    boss = Agent(
        "boss", "You lead.", boss_model, Toolkit(tools=[kid.as_tool()]),
        middlewares=[telemetry.middleware()],
    )  # fmt: skip
    msg = await boss.reply(UserMsg("user", "go"))
    assert msg.get_text_content() == "done [boss0:success]"
    parent_reply = telemetry.one("invoke_agent boss")
    tool = telemetry.one("execute_tool researcher")
    child_reply = telemetry.one("invoke_agent researcher")
    assert tool.parent is not None and tool.parent.span_id == parent_reply.context.span_id
    assert child_reply.parent is not None and child_reply.parent.span_id == tool.context.span_id
    assert child_reply.context.trace_id == parent_reply.context.trace_id
    inner = telemetry.named("execute_tool lookup")
    assert inner and inner[0].parent is not None
    assert inner[0].parent.span_id == child_reply.context.span_id
