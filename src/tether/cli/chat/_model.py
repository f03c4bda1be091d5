"""Which model to talk to: `--model`, else `TETHER_MODEL`, else the config file."""

from __future__ import annotations

import os

from tether.errors import ChatConfigError, ConfigError
from tether.model import ChatModelBase, ScriptedChatModel

__all__ = ["resolve_model"]

_HOW = (
    "pass --model PROVIDER:NAME (e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
    "scripted:FILE), set TETHER_MODEL, or set `model = ...` in ~/.config/tether/config.toml "
    "(a project's .tether/config.toml counts only once you trust the folder: `tether trust`)"
)


def resolve_model(flag: str | None, configured: str | None) -> tuple[ChatModelBase, str]:
    """Build the model (and say which spec it came from); one line naming what to set if not.

    Raises:
        ChatConfigError: no model named, or its provider's API key is not set.
        ConfigError: the spec names an unknown provider or a bad script file.
    """
    spec = flag or os.environ.get("TETHER_MODEL") or configured
    if not spec:
        raise ChatConfigError(f"no model chosen: {_HOW}")
    if spec.startswith("scripted:"):  # no provider registry, no credentials: a fast start
        return ScriptedChatModel.from_file(spec.removeprefix("scripted:")), spec
    from tether.credential import CredentialBase  # providers only
    from tether.model import from_string

    try:
        model = from_string(spec)
    except ConfigError:
        raise
    except ImportError as exc:
        raise ChatConfigError(f"model {spec!r} needs a package that is missing: {exc}") from None
    credential = getattr(model, "credential", None)  # providers' public attribute
    needs_key = getattr(model, "requires_api_key", False)
    if isinstance(credential, CredentialBase) and needs_key and credential.get_api_key() is None:
        raise ChatConfigError(
            f"no API key for {spec!r}: {credential.how_to_set()} (or pick another model "
            "with --model)"
        )
    return model, spec
