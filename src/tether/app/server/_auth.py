"""API keys: `Authorization: Bearer <key>` names the user; keys are never logged or shown."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path

from fastapi import Request

from tether.errors import AuthenticationError, ConfigError

__all__ = ["LOCAL_USER", "KeyRing", "keys_from_env", "keys_from_file"]

LOCAL_USER = "local"
"""The one user of a service started without API keys (bound to 127.0.0.1 only)."""


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class KeyRing:
    """API keys → user ids; holds only the keys' SHA-256 digests.

    With no keys every request is the local user (the service binds to 127.0.0.1).
    """

    def __init__(self, keys: Mapping[str, str] | None) -> None:
        self._users: dict[bytes, str] = {}
        for key, user in (keys or {}).items():
            if not key or not user or any(c.isspace() for c in key):
                raise ConfigError(
                    "every API key and user id must be a non-empty string without spaces; "
                    "check the keys file (one `key user_id` per line)"
                )
            self._users[_digest(key)] = user
        self.enabled = bool(self._users)

    def user_of(self, request: Request) -> str:
        """The user the request authenticates as; `AuthenticationError` if none."""
        if not self.enabled:
            return LOCAL_USER
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise AuthenticationError(
                "this service needs an API key: send `Authorization: Bearer <key>`"
            )
        wanted = _digest(key.strip())
        for digest, user in self._users.items():  # compare all, in constant time each
            if hmac.compare_digest(digest, wanted):
                return user
        raise AuthenticationError("the API key is not known to this service; check it")


def keys_from_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read `key user_id` lines (blank lines and `#` comments skipped)."""
    keys: dict[str, str] = {}
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the API keys file {os.fspath(path)!r}: {exc.strerror}"
        ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ConfigError(
                f"line {number} of the API keys file {os.fspath(path)!r} is not `key user_id`"
            )
        keys[parts[0]] = parts[1]
    return keys


def keys_from_env(value: str | None) -> dict[str, str]:
    """Parse `TETHER_API_KEYS`: `key:user_id` pairs separated by commas or spaces."""
    keys: dict[str, str] = {}
    for item in (value or "").replace(",", " ").split():
        key, sep, user = item.partition(":")
        if not sep or not key or not user:
            raise ConfigError(
                "TETHER_API_KEYS must hold `key:user_id` pairs separated by commas; one is "
                "malformed (its value is not shown)"
            )
        keys[key] = user
    return keys
