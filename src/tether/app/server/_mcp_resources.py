"""`GET /v1/sessions/{id}/mcp-resources` (and `/read`): MCP resources the user attaches.

The resources of the session's agent's MCP servers, for the web UI's picker. Read-only, and only what the user asks for: the model does not read through these routes
(it has `resource_tools=True` for that, under the permission rules).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from tether.app.server._context import service_of
from tether.errors import InvalidInputError, MCPError

__all__ = ["router"]

router = APIRouter(prefix="/v1/sessions/{session_id}")


class MCPResource(BaseModel):
    """One resource a server offers."""

    server: str
    uri: str
    name: str | None = None
    mime_type: str | None = None


class MCPResourceList(BaseModel):
    """The resources of the agent's MCP servers; `unavailable` names servers that failed."""

    resources: list[MCPResource]
    unavailable: dict[str, str]


class MCPResourceText(BaseModel):
    """One resource's text (the text parts of its contents, joined)."""

    server: str
    uri: str
    text: str


def _clients(request: Request, agent_id: str, user_id: str) -> dict[str, Any]:
    """The agent's MCP clients; of the OAuth ones, the user's own copies."""
    from tether.mcp import MCPClient

    runs = service_of(request).runs
    agent = runs.agent(agent_id)
    toolkit = runs.users.toolkit(user_id, agent) or agent.toolkit
    sources = toolkit.sources if toolkit is not None else []
    return {s.name: s for s in sources if isinstance(s, MCPClient)}


@router.get("/mcp-resources", response_model=MCPResourceList)
async def list_mcp_resources(session_id: str, request: Request) -> MCPResourceList:
    """The resources the session's agent's MCP servers offer."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    found: list[MCPResource] = []
    unavailable: dict[str, str] = {}
    for name, client in sorted(_clients(request, ref.agent_id, ref.user_id).items()):
        try:
            listed = await client.list_resources()
        except (MCPError, OSError) as exc:
            unavailable[name] = str(exc)
            continue
        except Exception as exc:  # e.g. the server has no resources capability
            unavailable[name] = f"{type(exc).__name__}: {exc}"
            continue
        found += [
            MCPResource(server=name, uri=r["uri"], name=r.get("name"), mime_type=r.get("mimeType"))
            for r in listed
        ]
    return MCPResourceList(resources=found, unavailable=unavailable)


@router.get("/mcp-resources/read", response_model=MCPResourceText)
async def read_mcp_resource(
    session_id: str,
    request: Request,
    server: Annotated[str, Query(max_length=40)],
    uri: Annotated[str, Query(max_length=2000)],
) -> MCPResourceText:
    """One resource's text; 422 for an unknown server, a failed read or no text."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    client = _clients(request, ref.agent_id, ref.user_id).get(server)
    if client is None:
        raise InvalidInputError(f"the session's agent has no MCP server {server!r}")
    try:
        contents = await client.read_resource(uri)
    except Exception as exc:
        raise InvalidInputError(f"MCP server {server!r} could not read {uri!r}: {exc}") from None
    texts = [c["text"] for c in contents if isinstance(c.get("text"), str)]
    if not texts:
        raise InvalidInputError(f"{uri!r} of {server!r} has no text (binary content)")
    return MCPResourceText(server=server, uri=uri, text="\n".join(texts))
