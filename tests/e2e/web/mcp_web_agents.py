"""The agent `tether serve --agents mcp_web_agents:make_agents` serves for the web UI's MCP
questions test: a scripted model calling the features server's `ask` and `sample` tools."""

from __future__ import annotations

import sys
from pathlib import Path

from tether.agent import Agent
from tether.mcp import MCPClient, ModelSampler, StdioMCPConfig, ask_caller, confirm_with_caller
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit

FEATURES = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "features_server.py"


def make_agents() -> dict[str, Agent]:
    """One agent; its model also answers the server's sampling request (step 4)."""
    tc = ScriptedChatModel.tool_call
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("mcp__feat__ask", {}, id="c1")]),
            AssistantMsg("a", "Greeted."),
            AssistantMsg("a", [tc("mcp__feat__sample", {"question": "What is 6*7?"}, id="c2")]),
            AssistantMsg("a", "42"),
            AssistantMsg("a", "Sampled."),
        ]
    )
    config = StdioMCPConfig(command=sys.executable, args=[str(FEATURES)])
    sampler = ModelSampler(model, confirm_with_caller)
    client = MCPClient("feat", True, config, on_elicitation=ask_caller, on_sampling=sampler)
    return {"asker": Agent("asker", "A scripted agent.", model, toolkit=Toolkit(mcps=[client]))}
