"""An agent with an MCP server that asks the user and the model mid-call, for the
multi-worker tests (`tether serve --agents mcp_svc:agents`).

The model plays the JSON plan of the user message (`svc_agents.PlanModel`); the server is
`tests/mcp/servers/features_server.py` over stdio: `ask` elicits a name, `sample` asks the
model (answered by a `PlanModel`, which echoes, once the user confirms: asked even
in `bypass` mode).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from svc_agents import PlanModel

from tether.agent import Agent
from tether.mcp import (
    MCPClient,
    ModelSampler,
    SamplingRequest,
    StdioMCPConfig,
    ask_caller,
    confirm_with_caller,
)
from tether.mcp._asking import Caller
from tether.tool import Toolkit

FEATURES = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "features_server.py"


async def _always_ask(request: SamplingRequest) -> bool:
    """Ask the user even in `bypass` mode (the session runs its tools without asking)."""
    context = request.caller.context if request.caller is not None else None
    return await confirm_with_caller(dataclasses.replace(request, caller=Caller(context)))


def _agent() -> Agent:
    mcp = MCPClient(
        "feat",
        True,
        StdioMCPConfig(command=sys.executable, args=[str(FEATURES)]),
        on_elicitation=ask_caller,
        on_sampling=ModelSampler(PlanModel(), _always_ask),
    )
    return Agent(name="asker", system_prompt="p", model=PlanModel(), toolkit=Toolkit(mcps=[mcp]))


agents = {"asker": _agent()}
