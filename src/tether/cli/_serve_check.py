"""`tether serve` start-up checks: what can fail is tried before the URL is announced.

The port (bound here and handed to uvicorn, so `--port 0` announces the real one), the
agents module, each served model's provider package and key, and the storage (with its
event log) are checked in the command's own process, so a failure is one line naming the
fix and a non-zero exit, with one worker or many (uvicorn's supervisor would otherwise
report a worker's crash as a traceback per worker).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Mapping
from typing import Any

from tether.errors import (
    ConfigError,
    MissingDependencyError,
    ModelAuthenticationError,
    TetherError,
)

__all__ = ["bind_port", "check_agents", "check_storage", "safe_url"]

_PROBE_SECONDS = 5.0
"""How long the start-up check waits for PostgreSQL."""


def bind_port(host: str, port: int) -> socket.socket:
    """The socket `tether serve` hands to uvicorn: `host:port` bound, address reuse on.

    Port 0 takes the port the kernel picks (`getsockname()` says which). The socket is
    TCP by protocol too: asyncio sets `TCP_NODELAY` on the connections of such a socket
    only (an SSE frame is not held back waiting for an acknowledgement).

    Raises:
        ConfigError: the port is taken or the address cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a port number (0-65535)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use; pick another with --port "
                f"(e.g. --port {port + 1 if port < 65535 else 8000}) or stop what uses it"
            ) from None
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); check --host and --port"
        ) from None
    sock.set_inheritable(True)  # the workers' processes serve it too
    return sock


def check_agents(spec: str | None, model: str | None) -> None:
    """Import the agents (or build the `--model` one) and check each model can be called.

    Raises:
        ConfigError: the module, attribute or mapping is unusable, a provider package is
            missing, or a provider's API key is not set.
    """
    if spec:
        source = _import(spec)
        if isinstance(source, Mapping):  # a factory is called by each worker, not here
            _check_mapping(source)
    elif model:
        from tether.model import from_string

        _check_model(from_string(model), f"--model {model}")


def _import(spec: str) -> Any:
    from tether.app.server._agents import import_agents

    try:
        return import_agents(spec)
    except TetherError:
        raise
    except Exception as exc:  # the module itself failed while running
        raise ConfigError(
            f"importing {spec.partition(':')[0]!r} for --agents raised {type(exc).__name__}: "
            f"{exc}; fix the module (`--debug` shows the traceback)"
        ) from exc


def _check_mapping(source: Mapping[Any, Any]) -> None:
    from tether.app.server._agents import resolve_agents

    agents = asyncio.run(resolve_agents(source))
    for agent_id, agent in agents.items():
        _check_model(agent.model, f"agent {agent_id!r}")


def _check_model(model: Any, who: str) -> None:
    """The provider's package is installed and its key set (what the first reply needs)."""
    from tether.credential import CredentialBase

    credential = getattr(model, "credential", None)  # providers' public attributes
    if not isinstance(credential, CredentialBase):
        return  # not a provider model (scripted, a wrapper): nothing to look up
    try:
        asyncio.run(_touch_client(model))
    except (MissingDependencyError, ModelAuthenticationError) as exc:  # building needs the key
        raise ConfigError(f"{who}: {exc}") from None
    if getattr(model, "requires_api_key", False) and credential.get_api_key() is None:
        raise ConfigError(
            f"{who}: no API key for model {model.model_name!r}; {credential.how_to_set()}"
        )


async def _touch_client(model: Any) -> None:
    """Build the SDK client (which imports the package) and close it again."""
    _ = model.client
    await model.aclose()


def check_storage(url: str, prefix: str) -> None:
    """Open the storage and its event log once, then close both.

    Raises:
        ConfigError: the URL names no known storage.
        MissingDependencyError: the storage's extra is not installed.
        StorageUnavailableError: the backend does not answer.
    """
    asyncio.run(_open_and_close(url, prefix))


async def _open_and_close(url: str, prefix: str) -> None:
    from tether.app.storage import event_log_for, storage_from_url

    try:
        storage = _quick(storage_from_url(url, prefix=prefix))
        events = event_log_for(storage)
    except ModuleNotFoundError as exc:  # built lazily: a backend whose package is missing
        raise MissingDependencyError(
            exc.name or "?", _extra(url), f"--storage {safe_url(url)}"
        ) from None
    pool_log = logging.getLogger("psycopg.pool")  # one warning per failed connection try
    level = pool_log.level
    pool_log.setLevel(logging.CRITICAL)
    try:
        await storage.open()
        await events.open()
    finally:
        await events.close()
        await storage.close()
        pool_log.setLevel(level)


def _quick(storage: Any) -> Any:
    """A PostgreSQL storage that gives up after a few seconds (the served one waits 30)."""
    from tether.app.storage import PostgresStorage

    if isinstance(storage, PostgresStorage):
        return PostgresStorage(
            storage.dsn, schema=storage.schema, pool_timeout=_PROBE_SECONDS, retry_for=0
        )
    return storage


def safe_url(url: str) -> str:
    """The URL without a password."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def _extra(url: str) -> str:
    return "redis" if url.startswith("redis") else "postgres"
