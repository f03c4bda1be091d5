"""What the file tools share: path resolution, the read record, results, permissions."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
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
    "write_file",
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

    is_permission_check_local = True  # decides from the arguments alone

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


def _parent_problem(path: Path) -> str | None:
    """Why `path` cannot be created under its parents, if one of them is not a directory."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a directory, so {path} cannot be created."
    return None


def write_file(path: Path, data: bytes) -> str | None:
    """Make `data` the content of `path`, all or nothing; `None`, or why it failed.

    Missing parent directories are created. The data goes to a new file beside `path`,
    which then takes its place in one rename, so a failure (disk full, file size limit,
    a killed process) leaves the old content whole. The old file's mode, and its owner
    where allowed, carry over. A file with several hard links is written in place, so
    the links keep sharing it; so is one whose directory does not let us add a file.
    Blocking: call it from a worker thread.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _parent_problem(path) or f"Cannot write {path}: {exc.strerror or exc}."
    try:
        old = os.stat(path)
    except FileNotFoundError:
        old = None
    except OSError as exc:
        return f"Cannot write {path}: {exc.strerror or exc}."
    try:
        if old is not None and (old.st_nlink > 1 or not stat.S_ISREG(old.st_mode)):
            path.write_bytes(data)
        else:
            _replace(path, data, old)
    except OSError as exc:
        return f"Cannot write {path}: {exc.strerror or exc}."
    return None


def _replace(path: Path, data: bytes, old: os.stat_result | None) -> None:
    temp = path.with_name(f".{path.name[:100]}.{secrets.token_hex(4)}.tether-tmp")
    try:
        # 0o666 less the umask, as for any new file; an existing file's mode is set below.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except PermissionError:
        path.write_bytes(data)  # the directory takes no new file: write in place
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if old is not None:
                with contextlib.suppress(OSError):  # before chmod: chown clears set-id bits
                    os.fchown(f.fileno(), old.st_uid, old.st_gid)
                os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
