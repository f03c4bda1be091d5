"""The operator's ceiling on the permission mode a client may give a session."""

from __future__ import annotations

from tether.errors import ConfigError, PermissionCeilingError
from tether.permission import PermissionMode

__all__ = ["allowed_modes", "check_mode", "parse_ceiling"]

_M = PermissionMode
_UNDER: dict[PermissionMode, frozenset[PermissionMode]] = {
    # Each mode, and the modes that run (or let ask) no more than it does.
    _M.EXPLORE: frozenset({_M.EXPLORE}),
    _M.DONT_ASK: frozenset({_M.DONT_ASK}),
    _M.DEFAULT: frozenset({_M.DEFAULT, _M.DONT_ASK, _M.EXPLORE}),
    _M.ACCEPT_EDITS: frozenset({_M.ACCEPT_EDITS, _M.DEFAULT, _M.DONT_ASK, _M.EXPLORE}),
    _M.BYPASS: frozenset(_M),
}


def parse_ceiling(value: PermissionMode | str | None, *, keyless: bool) -> PermissionMode:
    """The ceiling to enforce; by default `accept_edits` without API keys, else `bypass`."""
    if value is None:
        return _M.ACCEPT_EDITS if keyless else _M.BYPASS
    try:
        return _M(value)
    except ValueError:
        modes = ", ".join(m.value for m in _M)
        raise ConfigError(
            f"max_permission_mode {value!r} is not a permission mode; use one of: {modes}"
        ) from None


def allowed_modes(ceiling: PermissionMode) -> list[str]:
    """The modes a client may set under `ceiling`, in `PermissionMode` order."""
    return [m.value for m in _M if m in _UNDER[ceiling]]


def check_mode(mode: PermissionMode, ceiling: PermissionMode) -> None:
    """`PermissionCeilingError` unless `mode` is at or under `ceiling`."""
    if mode not in _UNDER[ceiling]:
        raise PermissionCeilingError(
            f"permission mode {mode.value!r} is above this service's ceiling "
            f"{ceiling.value!r}; use one of: {', '.join(allowed_modes(ceiling))} (the "
            "operator can raise it with `tether serve --max-permission-mode`)"
        )
