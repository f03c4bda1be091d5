"""OS sandboxes for Bash: `SandboxBase` and `BubblewrapSandbox` (Linux, bubblewrap)."""

from __future__ import annotations

import os
import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from tether.errors import SandboxUnavailableError

__all__ = ["DEFAULT_SETTINGS_PATHS", "BubblewrapSandbox", "SandboxBase"]

DEFAULT_SETTINGS_PATHS = (
    ".tether",
    "~/.tether",
    "~/.config/tether",
    # Files that make other programs run code, unconfined, the next time the user runs
    # git, opens a shell or an editor in the work dir.
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git",  # only where it is a file (a worktree's pointer to its git dir)
    ".gitmodules",
    ".gitconfig",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".vscode",
    ".idea",
    ".mcp.json",
    ".ripgreprc",
)
"""Paths kept read-only inside the sandbox: the agent's settings, and the files other
programs take code from. Relative entries are taken in every work dir; a `.git`
directory itself stays writable (git works inside), only its hooks and config do not."""


class SandboxBase(ABC):
    """Wraps a command line so that it runs confined.

    `auto_allow` is the documented mode in which Bash runs commands without asking (unless
    a deny or ask rule matches), because the sandbox, not the user, is the boundary.
    """

    auto_allow: bool = False
    """Run sandboxed commands that would otherwise ask, without asking."""

    @abstractmethod
    def wrap(self, argv: Sequence[str], *, cwd: str, work_dirs: Sequence[str]) -> list[str]:
        """The command line that runs `argv` in `cwd` inside the sandbox."""


class BubblewrapSandbox(SandboxBase):
    """Runs Bash commands under bubblewrap (`bwrap`).

    Inside, the whole filesystem is read-only except the work dirs (the session's
    working directories plus `writable_paths`); `/tmp` is a private, empty tmpfs; the
    agent's settings files, and the files other programs take code from (git hooks and
    config, shell profiles, editor settings), are read-only even inside a work dir, and
    the directories holding them cannot be moved away; the network is cut off
    (only a private loopback) unless `allow_network`; processes see only their own PID
    namespace and die with the sandbox.

    Args:
        writable_paths: Extra paths the commands may write (besides the work dirs).
        allow_network: Keep the host's network.
        settings_paths: Paths kept read-only; relative ones are taken in each work dir,
            `~` is expanded. Paths that do not exist are skipped.
        auto_allow: Let Bash run commands without asking (see `SandboxBase.auto_allow`).
        bwrap_path: The `bwrap` binary; found on PATH by default.
        check: Try the sandbox once now, so a host where it cannot run fails at once.

    Raises:
        SandboxUnavailableError: bubblewrap is not installed, or cannot create its
            namespaces here (e.g. unprivileged user namespaces are disabled).
    """

    def __init__(
        self,
        *,
        writable_paths: Sequence[str | Path] = (),
        allow_network: bool = False,
        settings_paths: Sequence[str | Path] = DEFAULT_SETTINGS_PATHS,
        auto_allow: bool = False,
        bwrap_path: str | None = None,
        check: bool = True,
    ) -> None:
        found = bwrap_path or shutil.which("bwrap")
        if not found or not os.access(found, os.X_OK):
            where = repr(bwrap_path) if bwrap_path else "`bwrap` on PATH"
            raise SandboxUnavailableError(
                f"bubblewrap is not installed (no executable {where}); install the "
                "Debian/Ubuntu package `bubblewrap` (`apt-get install bubblewrap`), "
                "or run Bash without a sandbox."
            )
        self.bwrap = found
        self.writable_paths = [os.path.realpath(os.path.expanduser(p)) for p in writable_paths]
        self.allow_network = allow_network
        self.settings_paths = [os.path.expanduser(str(p)) for p in settings_paths]
        self.auto_allow = auto_allow
        if check:
            self._check()

    def _check(self) -> None:
        argv = self.wrap(["/bin/true"], cwd="/", work_dirs=[])
        try:
            done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailableError(f"bubblewrap cannot run here: {exc}") from exc
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", errors="replace").strip()
            raise SandboxUnavailableError(
                "bubblewrap is installed but cannot create a sandbox here: "
                f"{reason or done.returncode}. "
                "It needs user namespaces (sysctl kernel.unprivileged_userns_clone=1, or "
                "root); inside a container, allow them or run Bash without a sandbox."
            )

    def _protected(self, work_dirs: Sequence[str]) -> list[str]:
        paths: list[str] = []
        for entry in self.settings_paths:
            if os.path.isabs(entry):
                paths.append(os.path.realpath(entry))
            elif entry == ".git":
                git = [os.path.join(d, entry) for d in work_dirs]
                paths.extend(os.path.realpath(g) for g in git if os.path.isfile(g))
            else:
                paths.extend(os.path.realpath(os.path.join(d, entry)) for d in work_dirs)
        return [p for p in dict.fromkeys(paths) if os.path.exists(p)]

    def wrap(self, argv: Sequence[str], *, cwd: str, work_dirs: Sequence[str]) -> list[str]:
        """The `bwrap` command line that runs `argv` in `cwd` with the work dirs writable."""
        writable = [os.path.realpath(d) for d in [*work_dirs, *self.writable_paths]]
        command = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        command += ["--tmpfs", "/tmp", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        if not self.allow_network:
            command.append("--unshare-net")
        # Later mounts cover earlier ones: work dirs over the read-only root and the
        # private /tmp, then the settings read-only again over the work dirs.
        for path in dict.fromkeys(writable):
            if os.path.exists(path):
                command += ["--bind", path, path]
        protected = self._protected(writable)
        # A mount point cannot be renamed or removed: the directories between a work dir
        # and a protected path are mounted on themselves (still writable), or moving one
        # (`mv .git .git-old`) would carry the protection away with it.
        for path in _between(writable, protected):
            command += ["--bind", path, path]
        for path in protected:
            command += ["--ro-bind", path, path]
        return [*command, "--chdir", cwd, "--", *argv]


def _between(roots: Sequence[str], paths: Sequence[str]) -> list[str]:
    """The directories strictly between any of `roots` and any of `paths` below it."""
    found: dict[str, None] = {}
    for path in paths:
        for root in roots:
            if not path.startswith(root.rstrip("/") + "/"):
                continue
            parent = os.path.dirname(path)
            chain: list[str] = []
            while len(parent) > len(root.rstrip("/")):
                chain.append(parent)
                parent = os.path.dirname(parent)
            found.update(dict.fromkeys(reversed(chain)))
    return list(found)
