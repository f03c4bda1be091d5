"""What the file tools share: path resolution, the read record, results, permissions."""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from tether.message import ToolResultBlock, ToolResultState
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)
from tether.tool._base import ToolBase, ToolContext

__all__ = [
    "READ_RECORD_OWNER",
    "FileToolBase",
    "error",
    "permission_cwd",
    "read_record",
    "resolve_path",
    "stale_reason",
]

READ_RECORD_OWNER = "Read"
"""The tool whose session state holds the record of files read (Write and Edit check it)."""


def error(text: str) -> ToolResultBlock:
    """An error result the model reads (the runner fills in the call's id and name)."""
    return ToolResultBlock(id="", name="", output=text, state=ToolResultState.ERROR)


def permission_cwd(context: PermissionContext) -> str:
    """The directory relative paths are resolved against: the first work dir."""
    dirs = context.working_directories
    return dirs[0] if dirs else os.getcwd()


def resolve_path(path: str, cwd: str) -> Path:
    """An absolute, normalised path: `~` expanded, relative paths joined to `cwd`."""
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd, expanded)
    return Path(os.path.realpath(expanded))


def read_record(context: ToolContext) -> dict[str, int]:
    """The session's record of files read: absolute path → `st_mtime_ns` when read.

    It lives in the Read tool's session state (`AgentState.tool_state["Read"]`) so that
    Write and Edit, which have their own state dicts, see the same record and it is saved
    with the session. Without a session state the call's own `tool_state` is used.
    """
    store: dict[str, Any] = context.tool_state
    states = getattr(context.session_state, "tool_state", None)
    if isinstance(states, dict):
        store = states.setdefault(READ_RECORD_OWNER, {})
    files: dict[str, int] = store.setdefault("read_files", {})
    return files


class FileToolBase(ToolBase):
    """A tool that works on one path: permissions are decided from that path."""

    access: Literal["read", "write"] = "read"
    """Whether calls read or write the path (for the permission engine)."""

    @abstractmethod
    def target_path(self, tool_input: BaseModel) -> str:
        """The path a validated call works on, as written (absolute or relative)."""

    def _path_of(self, tool_input: dict[str, Any]) -> str | None:
        try:
            parsed = self.input_model.model_validate(tool_input)
        except ValidationError:
            return None
        return self.target_path(parsed)

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """Decide from the path: inside the work dirs, reads run and writes ask."""
        from tether.permission import check_path_access

        cwd = permission_cwd(context)
        path = self._path_of(tool_input)
        if path is None:
            # The call fails validation before touching anything; let it report that.
            return PermissionDecision(
                behavior=PermissionBehavior.ALLOW, reason="invalid arguments; nothing runs"
            )
        return check_path_access(self.name, path, self.access, context, cwd=cwd)

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether a path-pattern rule such as `Read(src/**)` matches the call's path."""
        from tether.permission import match_path_rule

        cwd = permission_cwd(context)
        path = self._path_of(tool_input)
        return path is not None and match_path_rule(rule, path, context, cwd=cwd)

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        """Path-pattern rules that would allow calls like this one."""
        from tether.permission import suggest_path_rules

        cwd = permission_cwd(context)
        path = self._path_of(tool_input)
        if path is None:
            return []
        return suggest_path_rules(self.name, path, context, cwd=cwd)


def stale_reason(path: Path, context: ToolContext, verb: str) -> str | None:
    """Why an existing file may not be changed yet, or `None` if it was read and is unchanged.

    Blocking (it stats the file): call it from a worker thread.
    """
    seen = read_record(context).get(str(path))
    if seen is None:
        return (
            f"{path} exists but has not been read in this session. Read it first, then "
            f"{verb} it (so you know what you are replacing)."
        )
    if path.stat().st_mtime_ns != seen:
        return (
            f"{path} has changed on disk since you last read it (edited by the user, a "
            f"formatter or another command). Read it again, then {verb} it."
        )
    return None
