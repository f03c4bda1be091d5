"""`GET /v1/agents/{id}/intro`: what a new session's empty page shows about its agent."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict

from tether.app.server._context import service_of
from tether.app.server._demo import _HELP, RuleChatModel

__all__ = ["AgentIntro", "examples_of", "router"]

router = APIRouter(prefix="/v1")
MAX_EXAMPLES = 3


class AgentIntro(BaseModel):
    """An agent's introduction: its name, what it does and prompts to try."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str
    """The agent's id."""
    name: str
    """The agent's name."""
    description: str
    """What it does (its `description`, else its system prompt's first line)."""
    examples: list[str]
    """Up to three prompts to try (its `examples`; the demo's come from its help text)."""


def examples_of(agent: Any) -> list[str]:
    """The agent's example prompts: an `examples` list of strings on it, or the demo's."""
    own = getattr(agent, "examples", None)
    if isinstance(own, list | tuple) and all(isinstance(e, str) for e in own):
        return [e.strip() for e in own if e.strip()][:MAX_EXAMPLES]
    if isinstance(getattr(agent, "model", None), RuleChatModel):
        return re.findall(r"`([^`]+)`", _HELP)[:MAX_EXAMPLES]
    return []


@router.get("/agents/{agent_id}/intro", response_model=AgentIntro)
async def agent_intro(agent_id: str, request: Request) -> AgentIntro:
    """The agent's name, description and example prompts (404 for an unknown id)."""
    service = service_of(request)
    service.user(request)
    agent = service.runs.agent(agent_id)
    description = getattr(agent, "description", None) or agent.system_prompt.strip()
    return AgentIntro(
        id=agent_id,
        name=agent.name,
        description=str(description).strip(),
        examples=examples_of(agent),
    )
