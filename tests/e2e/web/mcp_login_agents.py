"""The agent `tether serve --agents mcp_login_agents:make_agents` serves for the web UI's
MCP login test: one OAuth MCP server (`$TETHER_TEST_OAUTH_MCP`) whose redirect is the
service's own callback route (`$TETHER_TEST_SERVICE`)."""

from __future__ import annotations

import os

from tether.agent import Agent
from tether.mcp import HttpMCPConfig, MCPClient, OAuthConfig
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit


def make_agents() -> dict[str, Agent]:
    """One agent that calls the server's `whoami` once, then says it is done."""
    call = ScriptedChatModel.tool_call("mcp__locked__whoami", {}, id="c1")
    model = ScriptedChatModel([AssistantMsg("a", [call]), AssistantMsg("a", "Done.")])
    redirect = f"{os.environ['TETHER_TEST_SERVICE']}/v1/mcp/oauth/callback"
    config = HttpMCPConfig(
        url=os.environ["TETHER_TEST_OAUTH_MCP"], auth=OAuthConfig(redirect_uri=redirect)
    )
    client = MCPClient("locked", True, config)
    return {"bot": Agent("bot", "A scripted agent.", model, toolkit=Toolkit(mcps=[client]))}
