"""`tether serve`: the HTTP service (and web UI) over SQLite, Redis or PostgreSQL; many workers."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import socket
import sys
from typing import Any

from tether.cli._serve_check import bind_port, check_agents, check_storage, safe_url

__all__ = ["add_serve_parser", "app_from_env"]

_ENV = "TETHER_SERVE_CONFIG"
_KEEP_ALIVE = 75  # seconds an idle keep-alive connection stays open
_DEFAULT_STORAGE = "sqlite:///./.tether/sessions.db"
_STARTUP_FAILURE = 3  # the status `uvicorn.run` exits with when the server did not start


def add_serve_parser(sub: Any) -> None:
    """Register `tether serve` on the `tether` command's subparsers."""
    p = sub.add_parser("serve", help="serve agents over HTTP (sessions, SSE, web UI)")
    p.add_argument(
        "--agents", default=None, help="MODULE:ATTR naming agent_id -> Agent (or a callable)"
    )
    p.add_argument(
        "--storage",
        default=_DEFAULT_STORAGE,
        help="sqlite:///path.db, redis://host:port/db or postgresql://user@host:port/db",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--workers", type=int, default=1, help="worker processes (>1 needs Redis or PostgreSQL)"
    )
    p.add_argument("--api-keys-file", default=None, help="file of `key user_id` lines")
    p.add_argument("--model", default=None, help="provider:name, serve a plain assistant on it")
    p.add_argument("--redis-prefix", default="tether", help="key prefix in Redis (default tether)")
    p.add_argument(
        "--lease-ttl", type=float, default=15.0, help="seconds a dead worker's lease lives"
    )
    p.add_argument("--max-body-bytes", type=int, default=1_000_000, help="largest request body")
    p.add_argument(
        "--allowed-hosts",
        default=None,
        help="comma-separated Host names to answer (name, name:port, *.domain, *); default "
        "without API keys: localhost, 127.0.0.1, [::1] on --port; with keys: any",
    )
    p.add_argument(
        "--max-permission-mode",
        default=None,
        choices=["default", "accept_edits", "explore", "bypass", "dont_ask"],
        help="highest permission mode a client may set (default without API keys: "
        "accept_edits; with keys: bypass)",
    )
    p.set_defaults(run=run_serve)


def _fail(message: str) -> int:
    print(f"tether serve: {message}", file=sys.stderr)
    return 2


def run_serve(args: argparse.Namespace) -> int:
    """Check the options, say how the service runs, and run uvicorn."""
    from tether.errors import ConfigError, MissingDependencyError, TetherError

    try:
        import uvicorn  # noqa: F401 (the `server` extra: here for the one-line error)

        from tether.app.server import keys_from_env, keys_from_file, parse_allowed_hosts
    except ModuleNotFoundError as exc:  # the `server` extra is not installed
        raise MissingDependencyError(exc.name or "fastapi", "server", "`tether serve`") from None

    from tether.app.storage._url import shared_by_workers  # the one URL registry

    shared = shared_by_workers(args.storage)
    if args.workers < 1:
        return _fail("--workers must be at least 1")
    if args.workers > 1 and not shared:
        return _fail(
            "--workers > 1 needs a Redis or PostgreSQL storage (e.g. --storage "
            "redis://localhost:6379/0 or postgresql://localhost/tether): SQLite serves one worker"
        )
    try:
        keys = keys_from_file(args.api_keys_file) if args.api_keys_file else {}
        keys.update(keys_from_env(os.environ.get("TETHER_API_KEYS")))
        if args.allowed_hosts is not None:
            parse_allowed_hosts(_hosts(args.allowed_hosts) or [])
    except ConfigError as exc:
        return _fail(str(exc))
    host = args.host
    if not keys and host not in ("127.0.0.1", "localhost"):
        return _fail(
            f"no API keys: refusing to bind {host!r}; give --api-keys-file (or "
            "TETHER_API_KEYS), or bind 127.0.0.1"
        )
    try:  # everything a worker would fail on, before the URL is announced
        sock = bind_port(host, args.port)
    except TetherError as exc:
        return _fail(" ".join(str(exc).split()))
    with sock:
        try:
            check_agents(args.agents, args.model)
            check_storage(args.storage, args.redis_prefix)
        except TetherError as exc:
            return _fail(" ".join(str(exc).split()))
        return _serve(args, sock, keys=bool(keys))


def _serve(args: argparse.Namespace, sock: socket.socket, *, keys: bool) -> int:
    """Announce the bound URL (with the port the kernel picked for `--port 0`) and serve."""
    import uvicorn

    port = int(sock.getsockname()[1])
    if not keys:
        hosts = args.allowed_hosts or f"localhost, 127.0.0.1 and [::1] on port {port}"
        ceiling = args.max_permission_mode or "accept_edits"
        print(
            "tether serve: no API keys, so one local user only, bound to 127.0.0.1; answering "
            f"{hosts}; permission modes up to {ceiling}",
            file=sys.stderr,
        )
    config = uvicorn.Config(
        "tether.cli._serve:app_from_env",
        factory=True,
        host=args.host,
        port=port,
        workers=args.workers,
        timeout_graceful_shutdown=5,
        # Longer than clients keep idle connections (httpx 5 s, browsers and load balancers
        # 60 s): with uvicorn's 5 s, a request sent as the server closed the connection
        # was reset (the client saw ReadError before any response, under load).
        timeout_keep_alive=_KEEP_ALIVE,
        log_level="info",
        ws="none",  # no WebSocket routes: don't load a WebSocket library (or its warnings)
    )
    os.environ[_ENV] = json.dumps({key: getattr(args, key) for key in _CONFIG_KEYS})
    sock.listen(config.backlog)  # connections wait for the workers from the announcement on
    who = args.agents or (
        f"an assistant on {args.model}" if args.model else "the offline demo agent"
    )
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"tether serve: {who} on http://{host}:{port} ({args.workers} worker(s), "
        f"storage {safe_url(args.storage)})",
        file=sys.stderr,
        flush=True,
    )
    server = uvicorn.Server(config)
    try:
        if args.workers > 1:
            _supervise(config, server, sock)
        else:
            server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    return 0 if server.started or args.workers > 1 else _STARTUP_FAILURE


def _supervise(config: Any, server: Any, sock: socket.socket) -> None:
    """Run `config.workers` processes under uvicorn's supervisor, each serving `sock`."""
    from uvicorn.supervisors import Multiprocess

    supervisor: Any = Multiprocess
    if "target" in inspect.signature(Multiprocess).parameters:  # uvicorn < 0.55 or so
        supervisor(config, target=server.run, sockets=[sock]).run()
    else:
        supervisor(config, sockets=[sock]).run()


_CONFIG_KEYS = (
    "agents",
    "storage",
    "api_keys_file",
    "model",
    "redis_prefix",
    "lease_ttl",
    "max_body_bytes",
    "allowed_hosts",
    "max_permission_mode",
)


def app_from_env() -> Any:
    """Build the app in a worker from the options `tether serve` put in the environment."""
    from tether.app.server import create_app, keys_from_env, keys_from_file

    # The SQLite storages run on threads: hand the GIL over sooner than every 5 ms, or each
    # of their statements waits behind the event loop when it is busy.
    sys.setswitchinterval(0.001)
    config = json.loads(os.environ[_ENV])
    storage, events = _storage(config["storage"], config["redis_prefix"])
    keys = keys_from_file(config["api_keys_file"]) if config["api_keys_file"] else {}
    keys.update(keys_from_env(os.environ.get("TETHER_API_KEYS")))
    return create_app(
        _agents(config),
        storage,
        api_keys=keys or None,
        events=events,
        lease_ttl=config["lease_ttl"],
        max_body_bytes=config["max_body_bytes"],
        allowed_hosts=_hosts(config.get("allowed_hosts")),
        max_permission_mode=config.get("max_permission_mode"),
    )


def _hosts(value: str | None) -> list[str] | None:
    """`--allowed-hosts a,b:8000` → `["a", "b:8000"]`."""
    return None if value is None else value.replace(",", " ").split()


def _agents(config: dict[str, Any]) -> Any:
    from tether.app.server._agents import import_agents

    if config["agents"]:
        return import_agents(config["agents"])
    if config["model"]:
        from tether.agent import Agent
        from tether.model import from_string

        model = from_string(config["model"])
        return {"assistant": Agent("assistant", "You are a helpful assistant.", model)}
    from tether.app.server._demo import demo_agents

    return demo_agents()


def _storage(url: str, prefix: str) -> tuple[Any, Any]:
    from tether.app.storage import event_log_for, storage_from_url

    storage = storage_from_url(url, prefix=prefix)
    return storage, event_log_for(storage)
