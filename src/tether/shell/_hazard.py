"""A hazard: what a command does that an allow rule for its words never grants."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Hazard", "HazardKind"]

HazardKind = Literal["exec", "write", "read", "names", "git"]


@dataclass(frozen=True, slots=True)
class Hazard:
    """Something a command does that an allow rule for its words never grants."""

    kind: HazardKind
    """`exec` runs a program; `write`/`read` touch `path`; `names` reads a list of files;
    `git` reads the repository config found from `path` (`None`: the current directory)."""
    reason: str
    """What it does, for the user."""
    path: str | None = None
    """The file (or directory) concerned, when known."""
