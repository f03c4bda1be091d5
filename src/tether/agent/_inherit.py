"""A sub-agent's permissions: its own, never wider than its parent's."""

from __future__ import annotations

import os

from tether.errors import SubAgentPermissionError
from tether.permission import PermissionContext, PermissionMode

__all__ = ["inherit_permissions", "mode_rank"]

_RANK = {
    PermissionMode.EXPLORE: 0,
    PermissionMode.DONT_ASK: 1,
    PermissionMode.DEFAULT: 2,
    PermissionMode.ACCEPT_EDITS: 3,
    PermissionMode.BYPASS: 4,
}


def mode_rank(mode: PermissionMode) -> int:
    """How much a mode lets run without asking (higher is wider)."""
    return _RANK[mode]


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def inherit_permissions(
    parent: PermissionContext,
    own: PermissionContext,
    name: str,
    mode: PermissionMode | None = None,
) -> PermissionContext:
    """The permission context a sub-agent starts with.

    Its mode is `mode`, else the one its own state sets, else its parent's; never wider
    than the parent's. Its rules are its own plus the parent's deny rules; its work dirs
    are the parent's unless it names narrower ones (each inside one of the parent's).

    Raises:
        SubAgentPermissionError: the mode or a work dir is wider than the parent's.
    """
    if mode is None:
        mode = own.mode if "mode" in own.model_fields_set else parent.mode
    if _RANK[mode] > _RANK[parent.mode]:
        raise SubAgentPermissionError(
            f"sub-agent {name!r} would run in permission mode {mode.value!r}, wider than "
            f"its parent's {parent.mode.value!r}; leave its mode unset (it inherits the "
            "parent's) or choose one no wider"
        )
    parent_dirs = parent.working_directories or [os.getcwd()]
    dirs = list(own.working_directories)
    for folder in dirs:
        if not any(_inside(folder, top) for top in parent_dirs):
            raise SubAgentPermissionError(
                f"sub-agent {name!r} names work dir {folder!r}, outside its parent's "
                f"({', '.join(parent_dirs)}); give it folders inside the parent's"
            )
    deny = list(own.deny_rules)
    deny += [rule for rule in parent.deny_rules if rule not in deny]
    return PermissionContext(
        mode=mode,
        allow_rules=list(own.allow_rules),
        ask_rules=list(own.ask_rules),
        deny_rules=deny,
        working_directories=dirs or list(parent.working_directories),
        allow_broader_confirm_rules=(
            parent.allow_broader_confirm_rules and own.allow_broader_confirm_rules
        ),
    )
