"""Where OAuth tokens of MCP servers live: never in state, events or logs.

A store keeps, per server URL, one JSON object (the tokens and the registered client).
`FileTokenStore` is for one user on one machine (`tether chat`); a service passes a store
of its own per user.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

__all__ = ["FileTokenStore", "MemoryTokenStore", "TokenStoreBase", "default_token_dir"]


class TokenStoreBase(ABC):
    """Keeps one JSON object of OAuth data per MCP server URL."""

    @abstractmethod
    async def load(self, server_url: str) -> dict[str, Any] | None:
        """The data saved for `server_url`, or None."""

    @abstractmethod
    async def save(self, server_url: str, data: dict[str, Any]) -> None:
        """Replace the data of `server_url`."""

    @abstractmethod
    async def delete(self, server_url: str) -> None:
        """Forget `server_url` (log out); no error if nothing was saved."""


class MemoryTokenStore(TokenStoreBase):
    """Tokens for the life of the process (the default of an `MCPClient`)."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}

    async def load(self, server_url: str) -> dict[str, Any] | None:
        """The data saved for `server_url`, or None."""
        found = self._data.get(server_url)
        return None if found is None else dict(found)

    async def save(self, server_url: str, data: dict[str, Any]) -> None:
        """Replace the data of `server_url`."""
        self._data[server_url] = dict(data)

    async def delete(self, server_url: str) -> None:
        """Forget `server_url`."""
        self._data.pop(server_url, None)


def default_token_dir() -> Path:
    """`$TETHER_HOME/mcp-tokens`, or `~/.local/share/tether/mcp-tokens`."""
    home = os.environ.get("TETHER_HOME")
    base = Path(home) if home else Path.home() / ".local" / "share" / "tether"
    return base / "mcp-tokens"


class FileTokenStore(TokenStoreBase):
    """One file per server URL in a folder only the user can read (files are 0600).

    Args:
        folder: Where the files go (default: `default_token_dir()`).
    """

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_token_dir()

    def path_for(self, server_url: str) -> Path:
        """The file that holds `server_url`'s data (named by a hash of the URL)."""
        digest = hashlib.sha256(server_url.encode()).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    async def load(self, server_url: str) -> dict[str, Any] | None:
        """The data saved for `server_url`, or None (also for an unreadable file)."""
        return await asyncio.to_thread(self._read, self.path_for(server_url))

    async def save(self, server_url: str, data: dict[str, Any]) -> None:
        """Write `server_url`'s data atomically, readable by the user only."""
        payload = {"server_url": server_url, **data}
        await asyncio.to_thread(self._write, self.path_for(server_url), payload)

    async def delete(self, server_url: str) -> None:
        """Remove `server_url`'s file."""
        self.path_for(server_url).unlink(missing_ok=True)

    @staticmethod
    def _read(path: Path) -> dict[str, Any] | None:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        data.pop("server_url", None)
        return data

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tok-", suffix=".json")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as out:
                json.dump(data, out)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
