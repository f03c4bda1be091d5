"""How a tool call reads on screen: a one-line summary and, for edits, a diff."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from tether.message import ToolCallBlock

__all__ = ["call_arguments", "call_diff", "call_summary"]

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


def call_diff(call: ToolCallBlock, cwd: Path, max_lines: int = 40) -> list[str]:
    """Unified-diff lines of what an Edit or Write would change (empty for other tools)."""
    args = call_arguments(call)
    path = args.get("file_path")
    if call.name not in ("Edit", "Write") or not isinstance(path, str):
        return []
    if call.name == "Edit":
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
    else:
        target = Path(path) if Path(path).is_absolute() else cwd / path
        try:
            old = target.read_text(encoding="utf-8") if target.is_file() else ""
        except (OSError, UnicodeDecodeError):
            old = ""
        new = str(args.get("content", ""))
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1))[
        2:
    ]  # drop the ---/+++ header: the path is already shown
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"… {len(lines) - max_lines} more lines"]
    return lines
