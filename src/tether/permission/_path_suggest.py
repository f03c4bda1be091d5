"""Suggesting path rules: the narrowest useful folder rule for a path."""

from __future__ import annotations

import os
from typing import Literal

from tether.permission._resolve import ResolvedPath, inside, resolve_path, token_for, work_dirs
from tether.permission._types import PermissionContext, PermissionRule

__all__ = ["suggest_for_path", "suggest_path_rules"]

_WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_READ_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"})


def _rule_tool_for(tool_name: str, access: Literal["read", "write"]) -> str:
    if tool_name in _WRITE_TOOLS or (access == "write" and tool_name not in _READ_TOOLS):
        return "Edit"
    if tool_name in _READ_TOOLS or access == "read":
        return "Read"
    return tool_name


def suggest_for_path(
    tool_name: str, resolved: ResolvedPath, access: Literal["read", "write"], dirs: list[str]
) -> list[PermissionRule]:
    if token_for(resolved) is not None:
        return []  # a sensitive path is never offered as a one-click rule
    real = resolved.real
    name = _rule_tool_for(tool_name, access)
    is_dir = os.path.isdir(real)
    folder = real if is_dir else os.path.dirname(real)
    for base in dirs:
        if inside(real, base) and real != base:
            rel_dir = os.path.relpath(folder, base)
            if rel_dir == ".":
                spec = "/" + os.path.basename(real) + ("/**" if is_dir else "")
            else:
                spec = rel_dir + "/**"
            return [PermissionRule(tool_name=name, rule_content=spec, source="session")]
    # Outside the work dirs: the file itself, never its folder (a folder may hold a work
    # dir, or everything else the user keeps); a directory only if it holds no work dir.
    if is_dir and any(inside(base, real) for base in dirs):
        return []
    home = os.path.realpath(os.path.expanduser("~"))
    if inside(real, home) and real != home:
        spec = "~/" + os.path.relpath(real, home)
    elif real == home:
        return []
    else:
        spec = "/" + real
    return [PermissionRule(tool_name=name, rule_content=spec, source="session")]


def suggest_path_rules(
    tool_name: str, path: str, context: PermissionContext, *, cwd: str
) -> list[PermissionRule]:
    """The narrowest useful rule for a path: its folder inside a work dir, e.g. `Edit(src/**)`.

    Inside a work dir the rule is relative (`Edit(src/**)`, or `Edit(/name)` for a file at
    the top); elsewhere it names the path itself (`~/notes/x.txt`, `//abs/file`), never a
    folder above it. Write tools get `Edit` rules
    (which cover `Write`), read tools `Read` rules. Sensitive paths get no suggestion.

    Args:
        tool_name: The tool that asked.
        path: The path it used.
        context: Gives the work dirs.
        cwd: The directory relative paths are taken from.

    Returns:
        Zero or one rule.
    """
    access: Literal["read", "write"] = "read" if tool_name in _READ_TOOLS else "write"
    return suggest_for_path(tool_name, resolve_path(path, cwd), access, work_dirs(context))
