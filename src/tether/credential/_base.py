"""`CredentialBase`: an API key that never shows itself, read from the environment if not given."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SecretStr, model_validator

__all__ = ["CredentialBase"]


class CredentialBase(BaseModel):
    """An API key (a `SecretStr`) and an optional base URL for one provider.

    When `api_key` (or `base_url`) is not given, the provider's usual environment
    variables are read, first match wins. The key is masked in `repr()`, `str()`,
    `model_dump()` and JSON; only `get_api_key()` reveals it, for the SDK client.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    api_key: SecretStr | None = None
    """The API key; `None` (or a blank one) reads it from the environment (see
    `api_key_env`). Whitespace around it is dropped."""
    base_url: str | None = None
    """Endpoint root; `None` (or blank) reads it from the environment or uses the provider's
    default."""

    provider: ClassVar[str] = ""
    """Provider name used in error messages."""
    api_key_env: ClassVar[tuple[str, ...]] = ()
    """Environment variables holding the key, in order of preference."""
    base_url_env: ClassVar[tuple[str, ...]] = ()
    """Environment variables holding the base URL, in order of preference."""

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, data: Any) -> Any:
        # Whitespace around a value is a paste accident (a key with its newline fails deep
        # in the HTTP layer as a "connection error"); an empty value is no value.
        values = dict(data) if isinstance(data, dict) else {}
        key = _clean(values.get("api_key"))
        values["api_key"] = key if key is not None else _first_env(cls.api_key_env)
        url = _clean(values.get("base_url"))
        values["base_url"] = url if url is not None else _first_env(cls.base_url_env)
        return values if isinstance(data, dict) or data is None else data

    def get_api_key(self) -> str | None:
        """The key in clear text, for handing to the provider's SDK; `None` if unset."""
        return None if self.api_key is None else self.api_key.get_secret_value()

    def how_to_set(self) -> str:
        """A sentence telling the user where the key goes."""
        envs = " or ".join(self.api_key_env)
        where = f" or set the {envs} environment variable" if envs else ""
        return f"pass `{type(self).__name__}(api_key=...)`{where}"

    def __repr__(self) -> str:
        key = "None" if self.api_key is None else "'**********'"
        return f"{type(self).__name__}(api_key={key}, base_url={self.base_url!r})"

    __str__ = __repr__


def _clean(value: Any) -> Any:
    """A given key or URL without surrounding whitespace; `None` if it is blank."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, str):
        return value.strip() or None
    return value


def _first_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = (os.environ.get(name) or "").strip()
        if value:
            return value
    return None
