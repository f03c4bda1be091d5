"""How a tool call reads on screen: a one-line summary and, for edits, a diff."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from tether.message import ToolCallBlock

__all__ = [
    "DiffLine",
    "call_arguments",
    "call_diff",
    "call_summary",
    "numbered_diff",
    "rule_label",
]

_KEYS = {"Bash": "command", "Read": "file_path", "Write": "file_path", "Edit": "file_path"}


def call_arguments(call: ToolCallBlock) -> dict[str, Any]:
    """The call's arguments, `{}` if they are not a JSON object."""
    try:
        value = json.loads(call.input or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def call_summary(call: ToolCallBlock, width: int = 100) -> str:
    """`git status` for Bash, the path for file tools, the pattern for searches, else JSON."""
    args = call_arguments(call)
    key = _KEYS.get(call.name)
    if key is not None and isinstance(args.get(key), str):
        text = str(args[key])
    elif call.name in ("Grep", "Glob") and isinstance(args.get("pattern"), str):
        where = args.get("path")
        text = str(args["pattern"]) + (f" in {where}" if isinstance(where, str) else "")
    else:
        text = json.dumps(args, ensure_ascii=False) if args else (call.input or "")
    text = " ⏎ ".join(text.splitlines()) if "\n" in text else text
    return text if len(text) <= width else text[: width - 1] + "…"


DiffLine = tuple[str, str]
"""`(kind, text)`: kind `-` removed, `+` added, ` ` context, `…` a gap or a cut."""


def call_diff(call: ToolCallBlock, cwd: Path, max_lines: int = 40) -> list[DiffLine]:
    """What an Edit or Write would change in the file, with its line numbers (else empty).

    An Edit is diffed against the file as it is (the replaced snippet with its context
    lines and indentation); when the file or the snippet can't be found, the snippet alone.
    """
    args = call_arguments(call)
    path = args.get("file_path")
    if call.name not in ("Edit", "Write") or not isinstance(path, str):
        return []
    target = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        text: str | None = target.read_text(encoding="utf-8") if target.is_file() else None
    except (OSError, UnicodeDecodeError):
        text = None
    if call.name == "Write":
        old, new = text or "", str(args.get("content", ""))
    else:
        snippet, replacement = str(args.get("old_string", "")), str(args.get("new_string", ""))
        if text is None or not snippet or snippet not in text:
            old, new = snippet, replacement
        else:
            count = -1 if args.get("replace_all") is True else 1
            old, new = text, text.replace(snippet, replacement, count)
    lines = numbered_diff(old.splitlines(), new.splitlines())
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], ("…", f"… {len(lines) - max_lines} more lines")]
    return lines


def numbered_diff(old: list[str], new: list[str], context: int = 3) -> list[DiffLine]:
    """Hunks of changed lines with `context` lines around them, each led by its line number.

    Removed and context lines carry their number in the old file, added lines in the new.
    """
    out: list[DiffLine] = []
    width = len(str(max(len(old), len(new), 1)))
    groups = difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(context)
    for n, group in enumerate(groups):
        if n:
            out.append(("…", " " * width + " ⋮"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [(" ", f"{i + 1:>{width}}   {old[i]}") for i in range(i1, i2)]
                continue
            out += [("-", f"{i + 1:>{width}} - {old[i]}") for i in range(i1, i2)]
            out += [("+", f"{j + 1:>{width}} + {new[j]}") for j in range(j1, j2)]
    return out


def rule_label(rule: object) -> str:
    """A rule as the user reads it: a path anchored at the work dir shown as `./path`.

    `Edit(/calc.py)` and `Edit(./calc.py)` are the same rule (relative to the work
    dirs), but the first reads like a file at the filesystem root; the stored rule is
    not changed.
    """
    text = str(rule)
    name, sep, rest = text.partition("(/")
    if sep and name != "Bash" and not rest.startswith("/"):
        return f"{name}(./{rest}"
    return text
