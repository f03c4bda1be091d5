"""Keep a server's credentials out of messages: errors and logs reach the model and users.

A URL often carries an API key in its query (the seed's `...mcp?key=...`), and error
texts from HTTP libraries repeat the URL; headers and stdio `env` hold tokens too.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tether.mcp._config import HttpMCPConfig, MCPConfig

__all__ = ["Redactor", "redact_url"]

_HIDDEN = "***"
_MIN_SECRET = 6
"""Shorter values are not hunted for in free text (they would match ordinary words)."""


def redact_url(url: str) -> str:
    """`url` with its password and query values replaced by `***` (keys are kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _HIDDEN
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{_HIDDEN}@{host}" if ":" in userinfo else f"{_HIDDEN}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(key, _HIDDEN) for key, _ in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


class Redactor:
    """Replaces the secrets of one server's config wherever they appear in a text."""

    def __init__(self, config: MCPConfig) -> None:
        secrets: set[str] = set()
        if isinstance(config, HttpMCPConfig):
            parts = urlsplit(config.url)
            secrets.update(value for _, value in parse_qsl(parts.query))
            if parts.password:
                secrets.add(parts.password)
            for value in (config.headers or {}).values():
                secrets.add(value)
                secrets.update(value.split()[1:])  # `Bearer <token>`: the token alone too
            self._url: str | None = config.url
        else:
            secrets.update((config.env or {}).values())
            self._url = None
        # Longest first, so a token inside a longer secret is not half-replaced.
        self._secrets = sorted((s for s in secrets if len(s) >= _MIN_SECRET), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """`text` with the config's URL shown redacted and every secret value hidden."""
        if self._url is not None:
            text = text.replace(self._url, redact_url(self._url))
        for secret in self._secrets:
            text = text.replace(secret, _HIDDEN)
        return text
