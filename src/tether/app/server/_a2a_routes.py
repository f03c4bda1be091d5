"""The A2A SDK's side of `/a2a/{agent_id}`: one agent's routes and its card as JSON.

Imported by `_a2a` on the first A2A request, so that the SDK loads only when used.
"""

from __future__ import annotations

from typing import Any

from a2a.auth.user import User
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_jsonrpc_routes,
    create_rest_routes,
)
from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.requests import Request as StarletteRequest
from starlette.routing import Router

from tether.app.server._a2a_card import agent_card
from tether.app.server._a2a_executor import TetherExecutor
from tether.app.server._a2a_handler import TetherRequestHandler
from tether.app.server._a2a_store import SessionTaskStore
from tether.app.server._context import Service

__all__ = ["agent_app", "card_response"]


def agent_app(
    service: Service, agent_id: str, user_key: str, *, parked: float
) -> tuple[Router, TetherRequestHandler]:
    """The SDK's JSON-RPC (`/`) and HTTP+JSON (`/rest`) routes for `agent_id`, and their handler.

    The caller of a request is the user its scope's `user_key` names.
    """
    agent = service.runs.agent(agent_id)
    card = agent_card(agent, agent_id, "http://localhost", keys=service.keys.enabled)
    store = SessionTaskStore(service.runs, agent_id)
    executor = TetherExecutor(service, agent_id, store)
    handler = TetherRequestHandler(executor, card, parked=parked)
    builder = _Callers(user_key)
    routes = [
        *create_jsonrpc_routes(handler, "/", context_builder=builder),
        *create_rest_routes(handler, context_builder=builder, path_prefix="/rest"),
    ]
    return Router(routes=routes), handler


def card_response(
    service: Service, agent_id: str, request: Request | StarletteRequest
) -> JSONResponse:
    """`agent_id`'s card, its URLs under the request's own base."""
    base = str(request.base_url).rstrip("/")
    root = request.scope.get("root_path", "")
    if root and base.endswith(root):
        base = base[: -len(root)]
    card = agent_card(service.runs.agent(agent_id), agent_id, base, keys=service.keys.enabled)
    return JSONResponse(agent_card_to_dict(card))


class _Caller(User):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class _Callers(DefaultServerCallContextBuilder):
    """The call context of a request: its user is the one its API key names."""

    def __init__(self, user_key: str) -> None:
        super().__init__()
        self._user_key = user_key

    def build_user(self, request: Any) -> User:
        return _Caller(request.scope[self._user_key])
