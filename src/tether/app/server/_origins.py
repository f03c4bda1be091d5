"""Who may call: the `Host` allow-list and the cross-site check of state-changing requests.

A page on another site can reach a service on 127.0.0.1 two ways: by rebinding its own
name to 127.0.0.1 (its requests then carry `Host: evil.example`), or by sending requests
straight from the page (they carry its `Origin` and `Sec-Fetch-Site: cross-site` or
`same-site`). The first is answered 421 on every route, the second 403 on every route that
changes state. Clients that are not browsers send neither header and pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from tether.app.server._problems import problem
from tether.errors import ConfigError, CrossSiteRequestError, ServiceError, UntrustedHostError

__all__ = ["LOOPBACK_HOSTS", "HostRule", "OriginGuard", "parse_allowed_hosts"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""The names a service without API keys answers to (with the port it is bound to)."""

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SAME = frozenset({"same-origin", "none"})  # `none`: the user opened the URL themselves
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class HostRule:
    """One allowed host: a name and a port.

    The name may be `*.example.com` (any sub-domain) or `*` (any host); the port `None`
    (any port) or `0` (the port the server is bound to).
    """

    name: str
    port: int | None = None

    def matches(self, name: str, port: int | None, bound: int | None) -> bool:
        """Does `name:port` (a parsed `Host`) fall under this rule?"""
        if self.name == "*":
            return True
        if self.name.startswith("*."):
            if not name.endswith(self.name[1:]):
                return False
        elif name != self.name:
            return False
        wanted = bound if self.port == 0 else self.port
        return wanted is None or port == wanted


def parse_allowed_hosts(entries: Sequence[str]) -> tuple[HostRule, ...]:
    """`["localhost:8000", "*.example.com", "[::1]"]` → rules; `ConfigError` if malformed."""
    if isinstance(entries, str):
        entries = entries.replace(",", " ").split()
    rules = []
    for entry in entries:
        parsed = _split_host(entry.strip().lower()) if isinstance(entry, str) else None
        if parsed is None or not _valid_name(parsed[0]):
            raise ConfigError(
                f"allowed host {entry!r} is not `name`, `name:port`, `*.domain` or `*`; "
                "e.g. --allowed-hosts localhost:8000,tether.example.com"
            )
        rules.append(HostRule(*parsed))
    if not rules:
        raise ConfigError("allowed hosts must name at least one host (or `*` for any)")
    return tuple(rules)


def _valid_name(name: str) -> bool:
    if name in ("", "*."):
        return False
    if name.startswith("*"):
        return name == "*" or (name.startswith("*.") and "*" not in name[2:])
    return "*" not in name


def _split_host(value: str) -> tuple[str, int | None] | None:
    """`name[:port]` → (name, port); an IPv6 literal keeps its brackets; None if malformed."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text_ = value.partition(":")
        port_text = port_text_ if sep else None
    if port_text is None:
        return name, None
    if not (port_text.isascii() and port_text.isdigit()) or len(port_text) > 5:
        return None
    return name, int(port_text)


class OriginGuard:
    """ASGI middleware: 421 for a `Host` outside `hosts`, 403 for a cross-site change.

    A change is any method but GET, HEAD and OPTIONS, with or without a body.
    """

    def __init__(self, app: ASGIApp, hosts: tuple[HostRule, ...]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        refusal: ServiceError | None = self._host_refusal(scope, host)
        if refusal is None and scope["method"] not in _SAFE_METHODS:
            refusal = _cross_site(headers, host)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status = 421 if isinstance(refusal, UntrustedHostError) else 403
        await problem(status, type(refusal).__name__, str(refusal))(scope, receive, send)

    def _host_refusal(self, scope: Scope, host: str) -> UntrustedHostError | None:
        parsed = _split_host(host.lower())
        server = scope.get("server")
        bound = int(server[1]) if server and server[1] is not None else None
        if parsed is not None and any(r.matches(*parsed, bound) for r in self.hosts):
            return None
        return UntrustedHostError(
            f"this service does not answer to the host {host[:100]!r}; open it as "
            f"{_named(self.hosts, bound)}, or start it with --allowed-hosts naming this host"
        )


def _named(hosts: tuple[HostRule, ...], bound: int | None) -> str:
    shown = []
    for rule in hosts[:4]:
        port = bound if rule.port == 0 else rule.port
        shown.append(rule.name if port is None else f"{rule.name}:{port}")
    return " or ".join(shown)


def _cross_site(headers: dict[str, str], host: str) -> CrossSiteRequestError | None:
    site = headers.get("sec-fetch-site")
    origin = headers.get("origin")
    if site is not None and site.strip().lower() not in _SAME:
        why = f"`Sec-Fetch-Site: {site[:40]}`"
    elif origin is not None and not _same_origin(origin, host):
        why = f"`Origin: {origin[:100]}`"
    else:
        return None
    return CrossSiteRequestError(
        f"a state-changing request from another site ({why}) is refused: only pages this "
        "service serves may change sessions; other programs should send no `Origin`"
    )


def _same_origin(origin: str, host: str) -> bool:
    """Does `Origin` name this service, i.e. the host and port the request was sent to?"""
    scheme, sep, netloc = origin.strip().lower().partition("://")
    if not sep or scheme not in _DEFAULT_PORTS or "/" in netloc:
        return False  # `null` (a sandboxed or file page) included
    mine, theirs = _split_host(host.lower()), _split_host(netloc)
    if mine is None or theirs is None:
        return False
    default = _DEFAULT_PORTS[scheme]
    return mine[0] == theirs[0] and (mine[1] or default) == (theirs[1] or default)


def _headers(scope: Scope) -> dict[str, str]:
    """The request headers this guard reads (the first of each, latin-1 decoded)."""
    wanted = {b"host", b"origin", b"sec-fetch-site"}
    found: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        if name in wanted and name.decode() not in found:
            found[name.decode()] = value.decode("latin-1")
    return found
