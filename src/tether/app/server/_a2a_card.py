"""The A2A agent card of a served agent: who it is, what it can do, where and how to call it."""

from __future__ import annotations

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

import tether
from tether.agent import Agent

__all__ = ["BEARER", "MODES", "agent_card", "rest_url", "rpc_url"]

BEARER = "apiKey"
"""The card's name for the service's API keys (`Authorization: Bearer <key>`)."""
MODES = ["text/plain", "application/json"]


def rpc_url(base: str, agent_id: str) -> str:
    """The JSON-RPC endpoint of the agent."""
    return f"{base.rstrip('/')}/a2a/{agent_id}"


def rest_url(base: str, agent_id: str) -> str:
    """The HTTP+JSON (REST) endpoint of the agent."""
    return f"{rpc_url(base, agent_id)}/rest"


def agent_card(agent: Agent, agent_id: str, base: str, *, keys: bool) -> AgentCard:
    """The card of `agent` served at `base` (`keys`: the service needs API keys)."""
    about = _about(agent)
    skills = [
        AgentSkill(id=agent_id, name=agent.name, description=about, tags=["agent"], examples=[]),
        *(
            AgentSkill(
                id=f"tool:{name}",
                name=name,
                description=tool.description.strip() or name,
                tags=["tool"],
            )
            for name, tool in sorted(agent.toolkit.tools.items())
        ),
    ]
    card = AgentCard(
        name=agent.name,
        description=about,
        version=tether.__version__,
        supported_interfaces=[
            AgentInterface(
                url=rpc_url(base, agent_id),
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
            AgentInterface(
                url=rest_url(base, agent_id),
                protocol_binding=TransportProtocol.HTTP_JSON.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=MODES,
        default_output_modes=MODES,
        skills=skills,
    )
    if keys:
        scheme = HTTPAuthSecurityScheme(
            scheme="Bearer", description="An API key of the service, as a bearer token."
        )
        card.security_schemes[BEARER].CopyFrom(SecurityScheme(http_auth_security_scheme=scheme))
        card.security_requirements.append(SecurityRequirement(schemes={BEARER: StringList()}))
    return card


def _about(agent: Agent) -> str:
    lines = agent.system_prompt.strip().splitlines()
    return lines[0] if lines else f"The {agent.name} agent."
