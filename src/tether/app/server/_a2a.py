"""`/a2a/{agent_id}`: the A2A protocol (JSON-RPC and HTTP+JSON) over the service's runs.

Built on `a2a-sdk`'s server: its request handler and routes, with tether's executor
(`_a2a_executor`) and task store (`_a2a_store`, tasks in the sessions' storage) behind
them. Per agent, mounted under `/a2a/{agent_id}`:

- `GET  /.well-known/agent-card.json` — the card (public, like every A2A card);
- `POST /` — JSON-RPC (`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`,
  `CancelTask`, ...);
- `/rest/...` — HTTP+JSON (`POST /rest/message:send`, `GET /rest/tasks/{id}`, ...).

`GET /.well-known/agent-card.json` at the root serves the card of the only agent when the
service has one (see docs/decisions/protocols.md). Every other request needs the API key
like the native routes; its user owns the contexts and tasks it creates.

The SDK loads with the first A2A request (`_a2a_routes`): a service nobody asks over A2A
starts without it (it is 0.4 s of a `tether serve` start's 0.9 s of CPU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.requests import Request as StarletteRequest
from starlette.types import Receive, Scope, Send

from tether.app.server._context import Service, service_of
from tether.app.server._problems import problem, status_of
from tether.errors import TetherError, UnknownAgentError

if TYPE_CHECKING:
    from starlette.routing import Router

    from tether.app.server._a2a_handler import TetherRequestHandler

__all__ = ["A2AMount", "router"]

_CARD = "/.well-known/agent-card.json"
_USER = "tether.a2a.user"
_PARKED = 60.0
"""Seconds a task waiting for input stays in this worker's memory (then read from storage)."""

router = APIRouter()


@router.get(_CARD, include_in_schema=False)
async def root_card(request: Request) -> JSONResponse:
    """The card of the service's only agent (404 when it serves several: use theirs)."""
    runs = service_of(request).runs
    if len(runs.agents) != 1:
        known = ", ".join(f"/a2a/{a}{_CARD}" for a in sorted(runs.agents))
        raise UnknownAgentError(f"this service serves several agents; read their cards: {known}")
    (agent_id,) = runs.agents
    return _card(service_of(request), agent_id, request)


class A2AMount:
    """The ASGI app under `/a2a`: finds the agent, checks the key, runs the SDK's routes."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._apps: dict[str, Router] = {}
        self._handlers: list[TetherRequestHandler] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request of `/a2a/{agent_id}/...`."""
        if scope["type"] != "http":
            return
        request = StarletteRequest(scope, receive)
        root = scope.get("root_path", "")
        rest = scope["path"][len(root) :] if scope["path"].startswith(root) else scope["path"]
        agent_id, _, tail = rest.lstrip("/").partition("/")
        try:
            self.service.runs.agent(agent_id)  # 404 before the key is looked at
            if "/" + tail == _CARD and request.method == "GET":
                response = _card(self.service, agent_id, request)
                return await response(scope, receive, send)
            user = self.service.user(request)
        except TetherError as exc:
            answer = problem(status_of(exc), type(exc).__name__, str(exc))
            return await answer(scope, receive, send)
        path = scope["path"] if tail else scope["path"].rstrip("/") + "/"
        inner = {**scope, "path": path, "root_path": f"{root}/{agent_id}", _USER: user}
        await self._app(agent_id)(inner, receive, send)

    def _app(self, agent_id: str) -> Router:
        app = self._apps.get(agent_id)
        if app is None:
            app = self._apps[agent_id] = self._build(agent_id)
        return app

    def _build(self, agent_id: str) -> Router:
        from tether.app.server import _a2a_routes  # the SDK, on first use

        app, handler = _a2a_routes.agent_app(self.service, agent_id, _USER, parked=_PARKED)
        self._handlers.append(handler)
        return app

    async def close(self) -> None:
        """Drain the handlers' tasks (on shutdown)."""
        handlers, self._handlers = self._handlers, []
        self._apps.clear()  # a restarted app builds them again
        for handler in handlers:
            await handler.aclose()


def _card(service: Service, agent_id: str, request: Request | StarletteRequest) -> JSONResponse:
    from tether.app.server import _a2a_routes  # the SDK, on first use

    return _a2a_routes.card_response(service, agent_id, request)
