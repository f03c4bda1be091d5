"""Checks on the arguments of `UserMsg`/`AssistantMsg`/`SystemMsg`, with the right call shown."""

from __future__ import annotations

from typing import Any

from tether.errors import ArgumentError

__all__ = ["UNSET", "check_role_args"]

UNSET: Any = object()
"""Marks an argument the caller did not pass."""


def check_role_args(cls_name: str, role: str, name: Any, content: Any, given_role: Any) -> None:
    """Raise `ArgumentError` unless `name` and `content` make a `cls_name(name, content)` call."""
    if given_role is not UNSET and given_role != role:
        raise ArgumentError(
            f"{cls_name} always has role {role!r} (got role={given_role!r}); for another role "
            f"use its class, e.g. `AssistantMsg(name, content)`, or `Msg(name=..., role=..., "
            f"content=...)`"
        )
    if name is UNSET:
        shown = "..." if content is UNSET else repr(content)
        raise ArgumentError(
            f"{cls_name} needs `name` (who wrote the message) as well as `content`: "
            f"`{cls_name}(name={role!r}, content={shown})`"
            + ("; it sets `role` itself" if given_role is not UNSET else "")
        )
    if content is UNSET:
        shown = repr(name) if isinstance(name, str) else "..."
        raise ArgumentError(
            f"{cls_name} takes `name` first and `content` second; {cls_name}({shown}) has no "
            f"content. Write `{cls_name}({role!r}, {shown})` or "
            f"`{cls_name}(name={role!r}, content={shown})`"
        )
    if not isinstance(name, str):
        raise ArgumentError(
            f"{cls_name}'s `name` (who wrote it) must be a str, got {type(name).__name__}; "
            f"write `{cls_name}({role!r}, content)`"
        )
