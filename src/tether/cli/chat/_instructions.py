"""`AGENTS.md` instructions in the system prompt, and `/init`'s starter file.

Read: the user's `~/.config/tether/AGENTS.md` (everywhere), and in a trusted folder the
project's root `AGENTS.md` (`CLAUDE.md` when there is none) and those of the folders down to
the working directory. Nested files deeper down are named to the model, not read: it is
told to read the nearest `AGENTS.md` above the files it changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tether.cli.chat._folder import user_instructions

__all__ = ["STARTER", "USER_LABEL", "Instruction", "instructions_prompt", "load_instructions"]

USER_LABEL = "~/.config/tether/AGENTS.md"
_LIMIT = 40_000
"""Characters read from one file (the rest is left out, and the model told so)."""

STARTER = """\
# AGENTS.md

Instructions for coding agents working in this repository (https://agents.md).

## Project
- What this project is, in one or two sentences.

## Commands
- Install: `...`
- Test: `...`
- Lint and format: `...`

## Conventions
- Code style, naming, where things go.
- What to check before calling a change done.
"""


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction file: how it is named on screen and its text."""

    label: str
    text: str


def load_instructions(project: tuple[Path, ...], root: Path | None) -> list[Instruction]:
    """The user's file, then `project`'s (already filtered by trust), each read once."""
    found: list[Instruction] = []
    user = user_instructions()
    if user is not None:
        found.append(Instruction(USER_LABEL, _read(user)))
    for path in project:
        label = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        found.append(Instruction(label, _read(path)))
    return [i for i in found if i.text.strip()]


def _read(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > _LIMIT:
        text = text[:_LIMIT] + f"\n[... {len(text) - _LIMIT} more characters left out]"
    return text


def instructions_prompt(found: list[Instruction], *, header: bool = True) -> str:
    """The system prompt's section for `found` (empty when there is none)."""
    if not found:
        return ""
    parts = (
        []
        if not header
        else [
            "\n\n# Instructions (AGENTS.md)\n"
            "Follow these instructions from the user and the project. A folder deeper down may "
            "have its own AGENTS.md: before changing files there, read the nearest AGENTS.md "
            "above them; it takes precedence for its folder."
        ]
    )
    parts += [f"\n\n## {i.label}\n{i.text.strip()}" for i in found]
    return "".join(parts)
