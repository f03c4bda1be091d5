"""The system prompt: who the agent is and the environment it works in."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path

__all__ = ["environment_prompt", "git_root"]


def git_root(folder: Path) -> Path | None:
    """The enclosing git work tree of `folder`, if any (no `git` process needed)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def environment_prompt(cwd: Path, extra_dirs: Sequence[Path] = ()) -> str:
    """The chat agent's system prompt, describing `cwd`, the OS and the git repository."""
    repo = git_root(cwd)
    git = f"yes (work tree root: {repo})" if repo is not None else "no"
    dirs = "".join(f"\n- Also allowed: {d}" for d in extra_dirs)
    return (
        "You are tether, a coding agent working in the user's terminal. Use the tools to "
        "read, search, edit and run things in the working directory; prefer small, "
        "verifiable steps, and say plainly what you changed. Answer in Markdown.\n"
        "Some tool calls need the user's permission: if a call is rejected, do not retry it "
        "as is; ask what to do instead.\n\n"
        "# Environment\n"
        f"- Working directory: {cwd}{dirs}\n"
        f"- Platform: {platform.system()} {platform.release()}\n"
        f"- Git repository: {git}\n"
        f"- Today's date: {date.today().isoformat()}"
    )
