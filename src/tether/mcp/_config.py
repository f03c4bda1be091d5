"""How to reach an MCP server: a local command over stdio, or a URL over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether.mcp._oauth_config import OAuthConfig

__all__ = ["HttpMCPConfig", "MCPConfig", "StdioMCPConfig"]


class StdioMCPConfig(BaseModel):
    """Launch the server as a subprocess and speak MCP over its stdin/stdout."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    command: str
    """The executable, e.g. `uvx` or a path to a Python interpreter."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] | None = Field(default=None, repr=False)
    """Extra environment variables, merged over a minimal safe environment (`HOME`,
    `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`): nothing else of ours is passed on."""
    cwd: str | Path | None = None
    """The working directory of the server process."""
    timeout: float = 30
    """Seconds to wait for the server to start and answer the handshake, and for each
    tool listing (not for tool results: see `MCPClient(execution_timeout=...)`)."""

    @field_validator("command")
    @classmethod
    def _command(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("`command` is empty; give the executable that starts the server")
        return value

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return _positive(value)


class HttpMCPConfig(BaseModel):
    """Connect to a server by URL: streamable HTTP, or legacy SSE when it only speaks that."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    url: str
    """The endpoint, e.g. `https://example.com/mcp` (or `.../sse` for a legacy server)."""
    headers: dict[str, str] | None = Field(default=None, repr=False)
    """Headers sent with every request (e.g. `Authorization`)."""
    timeout: float = 30
    """Seconds to wait to connect and for each HTTP request (not for tool results)."""
    transport: Literal["auto", "streamable_http", "sse"] = "auto"
    """`auto` tries streamable HTTP and falls back to SSE if the server rejects it."""
    auth: OAuthConfig | None = None
    """Log in with OAuth 2.1 (streamable HTTP only); a server that answers 401 without it
    raises `MCPAuthorizationRequired`."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"`url` must start with http:// or https://, got {value!r}")
        return value

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return _positive(value)


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError(f"`timeout` must be positive seconds, got {value!r}")
    return value


MCPConfig = StdioMCPConfig | HttpMCPConfig
"""Either way of reaching a server."""
