"""An agent with an OAuth MCP server, for the multi-worker login test
(`tether serve --agents mcp_oauth_svc:agents`): the server is `$TETHER_TEST_OAUTH_MCP`,
its redirect the callback route of `$TETHER_TEST_CALLBACK_BASE` (one of the workers)."""

from __future__ import annotations

import os

from svc_agents import PlanModel

from tether.agent import Agent
from tether.mcp import HttpMCPConfig, MCPClient, OAuthConfig
from tether.tool import Toolkit

_redirect = f"{os.environ['TETHER_TEST_CALLBACK_BASE']}/v1/mcp/oauth/callback"
_config = HttpMCPConfig(
    url=os.environ["TETHER_TEST_OAUTH_MCP"], auth=OAuthConfig(redirect_uri=_redirect)
)
agents = {
    "bot": Agent(
        "bot", "p", PlanModel(), toolkit=Toolkit(mcps=[MCPClient("locked", True, _config)])
    )
}
