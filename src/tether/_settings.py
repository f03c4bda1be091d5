"""`SettingsModel`: the base of tether's configs, whose bad arguments are `ConfigError`s.

Pydantic's `ValidationError` names internals (`type=extra_forbidden`, a docs URL); a config
made by hand should say which argument is wrong and what to write instead.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from tether.errors import ConfigError

__all__ = ["SettingsModel", "describe"]


class SettingsModel(BaseModel):
    """A pydantic model whose construction raises `ConfigError` naming the bad argument."""

    # Built on first use: a schema built at import loads pydantic's plugin machinery
    # (importlib.metadata, email), about 25 ms of `import tether`.
    model_config = ConfigDict(defer_build=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            raise ConfigError(describe(type(self), error)) from None


def describe(cls: type[BaseModel], error: ValidationError) -> str:
    """One sentence per problem: the argument, what is wrong, and the fix when there is one."""
    fields = list(cls.model_fields)
    parts = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"])
        message = str(problem["msg"]).removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            close = difflib.get_close_matches(where, fields, n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            parts.append(
                f"unknown option `{where}` ({message}); {hint}the options are "
                + ", ".join(f"`{f}`" for f in fields)
            )
        elif where and isinstance(problem.get("input"), str) and "ChatModelBase" in message:
            parts.append(
                f"`{where}` takes a model object, not {problem['input']!r}; build one with "
                f"`tether.model.from_string({problem['input']!r})`"
            )
        elif where:
            parts.append(f"`{where}={problem.get('input')!r}`: {message}")
        else:
            parts.append(message)
    text = "; ".join(parts)
    return text if text.startswith(cls.__name__) else f"{cls.__name__}: {text}"
