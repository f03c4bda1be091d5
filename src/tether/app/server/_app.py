"""`create_app`: the FastAPI application of `tether serve`."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tether.agent import Agent
from tether.app.server._a2a import A2AMount
from tether.app.server._a2a import router as a2a_router
from tether.app.server._agents import AgentsSource, resolve_agents
from tether.app.server._agui import router as agui_router
from tether.app.server._auth import KeyRing
from tether.app.server._ceiling import parse_ceiling
from tether.app.server._context import Service, service_of
from tether.app.server._elicit import router as elicit_router
from tether.app.server._headers import SecurityHeaders
from tether.app.server._intro import router as intro_router
from tether.app.server._limits import BodyLimit
from tether.app.server._mcp_login import callback_router as mcp_callback_router
from tether.app.server._mcp_login import router as mcp_login_router
from tether.app.server._mcp_resources import router as mcp_resources_router
from tether.app.server._observability import install_observability
from tether.app.server._origins import (
    LOOPBACK_HOSTS,
    HostRule,
    OriginGuard,
    parse_allowed_hosts,
)
from tether.app.server._problems import install_problem_handlers, problem
from tether.app.server._replies import router as replies_router
from tether.app.server._runs import Runs
from tether.app.server._sessions import router as sessions_router
from tether.app.server._titles import router as titles_router
from tether.app.storage import EventLogBase, StorageBase
from tether.app.storage._notes import NotesBase, SQLiteNotes, notes_for
from tether.app.storage._url import event_log_for, events_path
from tether.errors import ConfigError, TetherError

__all__ = ["STATIC_DIR", "create_app", "event_log_for", "events_path"]

log = logging.getLogger("tether.server")

STATIC_DIR = Path(__file__).resolve().parent.parent / "web" / "static"
"""Where the web UI's files are; mounted at `/` when the folder exists."""


def create_app(
    agents: AgentsSource,
    storage: StorageBase,
    *,
    api_keys: Mapping[str, str] | None = None,
    events: EventLogBase | None = None,
    max_body_bytes: int = 1_000_000,
    lease_ttl: float = 15.0,
    shutdown_grace: float = 10.0,
    static_dir: Path | None = STATIC_DIR,
    allowed_hosts: Sequence[str] | None = None,
    max_permission_mode: str | None = None,
    notes: NotesBase | None = None,
) -> FastAPI:
    """The HTTP service over `agents` (id → `Agent`) and `storage`.

    Args:
        agents: The agents to serve, by the id sessions name them with; or a callable
            (sync or async) returning them, called when the server starts.
        storage: Where sessions live; the app opens it on start and closes it on stop.
        api_keys: API key → user id. Without keys every caller is the one local user:
            bind the server to 127.0.0.1 only (`tether serve` does).
        events: The event log and leases; by default the one next to `storage`.
        max_body_bytes: Larger request bodies get 413.
        lease_ttl: Seconds before the lease of a worker that died expires.
        shutdown_grace: Seconds running replies get to end when the server stops.
        static_dir: The web UI to serve at `/`, if the folder exists.
        allowed_hosts: The `Host` names the service answers to (`name`, `name:port`,
            `*.domain`, `*`); others get 421. By default, without API keys: `localhost`,
            `127.0.0.1` and `[::1]` on the bound port; with keys: any.
        max_permission_mode: The highest permission mode a client may give a session
            (`PATCH`); higher gets 403. By default `accept_edits` without API keys, else
            `bypass`.
        notes: Values every worker shares (MCP answers, MCP OAuth tokens per user); by
            default the ones next to `storage`.

    Every response carries a strict `Content-Security-Policy`, `X-Frame-Options: DENY`,
    `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`; a POST, PATCH,
    PUT or DELETE from a page of another origin gets 403.
    """
    if isinstance(agents, Mapping):
        agents = dict(agents)  # checked now, not at start
        _check_now(agents)
    if not isinstance(max_body_bytes, int) or max_body_bytes < 1:
        raise ConfigError(f"max_body_bytes must be a positive int, got {max_body_bytes!r}")
    log_store = events if events is not None else event_log_for(storage)
    shared = notes if notes is not None else _notes_next_to(storage)
    runs = Runs({}, storage, log_store, lease_ttl=lease_ttl, notes=shared)
    keys = KeyRing(api_keys)
    ceiling = parse_ceiling(max_permission_mode, keyless=not keys.enabled)
    hosts = _host_rules(allowed_hosts, keyless=not keys.enabled)
    service = Service(runs=runs, keys=keys, max_mode=ceiling)
    a2a = A2AMount(service)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runs.agents = await resolve_agents(agents)
        await storage.open()
        await log_store.open()
        await shared.open()
        try:
            yield
        finally:
            await runs.close(shutdown_grace)
            await a2a.close()
            await runs.users.close()
            await shared.close()
            await log_store.close()
            await storage.close()

    app = FastAPI(
        title="tether",
        summary="Agent sessions over HTTP, with a durable, resumable event stream.",
        lifespan=lifespan,
    )
    app.state.tether = service
    install_problem_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(OriginGuard, hosts=hosts)  # before the body is read
    app.include_router(sessions_router)
    app.include_router(replies_router)
    app.include_router(titles_router)
    app.include_router(intro_router)
    app.include_router(agui_router)
    app.include_router(elicit_router)
    app.include_router(mcp_resources_router)
    app.include_router(mcp_login_router)
    app.include_router(mcp_callback_router)
    app.include_router(a2a_router)  # the root agent card
    app.mount("/a2a", a2a)
    _health(app)
    install_observability(app)  # GET /metrics, traceparent into the replies, request logs
    docs = (app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url)
    app.add_middleware(SecurityHeaders, docs_paths=[p for p in docs if p])
    if static_dir is not None and (static_dir / "index.html").is_file():
        from fastapi.staticfiles import StaticFiles

        app.mount("/", StaticFiles(directory=static_dir, html=True), name="web")
    return app


def _notes_next_to(storage: StorageBase) -> NotesBase:
    """The notes next to `storage`; for a storage of another kind, this process's own."""
    try:
        return notes_for(storage)
    except ConfigError:
        return SQLiteNotes(":memory:")


def _host_rules(allowed: Sequence[str] | None, *, keyless: bool) -> tuple[HostRule, ...]:
    if allowed is not None:
        return parse_allowed_hosts(allowed)
    if keyless:
        return tuple(HostRule(name, 0) for name in LOOPBACK_HOSTS)
    return (HostRule("*"),)


def _check_now(agents: Mapping[str, object]) -> None:
    if not agents or not all(isinstance(a, Agent) for a in agents.values()):
        raise ConfigError("`agents` must map agent ids to `Agent`s, with at least one agent")


def _health(app: FastAPI) -> None:
    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        """The storage and the event log answer (503 otherwise)."""
        runs = service_of(request).runs
        try:
            await runs.storage.list_sessions("readyz-probe")
            await runs.events.ping()
        except TetherError as exc:
            return problem(503, type(exc).__name__, str(exc))
        if not runs.accepting:
            return problem(503, "ServiceClosingError", "this worker is shutting down")
        return JSONResponse({"status": "ready"})
