"""The `tether chat` flags."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["MODES", "add_parser"]

MODES = ("default", "accept_edits", "explore", "bypass", "dont_ask")
"""The permission modes a flag or config may name (`tether.permission.PermissionMode`)."""


def add_parser(sub: Any) -> Callable[[argparse.Namespace], int]:
    """Add the `chat` subcommand to `sub` (an argparse subparsers action); return its runner."""
    chat = sub.add_parser(
        "chat",
        help="a coding agent in the current folder (interactive, or headless with -p)",
        description="Talk to a coding agent working in the current folder.",
    )
    chat.add_argument("prompt", nargs="?", help="first message (read from stdin with -p if absent)")
    chat.add_argument("--model", help="PROVIDER:NAME, e.g. openai:gpt-4o or scripted:FILE")
    resume = chat.add_mutually_exclusive_group()
    resume.add_argument(
        "-c", "--continue", dest="continue_", action="store_true",
        help="continue the latest session in this folder",
    )  # fmt: skip
    resume.add_argument("-r", "--resume", metavar="SESSION_ID", help="resume a given session")
    chat.add_argument(
        "--permission-mode", choices=MODES, help="how calls no rule decides are treated"
    )
    chat.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="allow matching calls, e.g. 'Bash(git diff:*)' (repeatable)",
    )
    chat.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="RULE",
        help="deny matching calls (repeatable)",
    )
    chat.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="another folder the tools may use (repeatable)",
    )
    chat.add_argument(
        "--trust-folder",
        action="store_true",
        help="trust this project folder's config, MCP servers and AGENTS.md (and remember it)",
    )
    chat.add_argument("--config", metavar="FILE", help="config file (instead of the project's)")
    chat.add_argument(
        "-p",
        "--print",
        dest="headless",
        action="store_true",
        help="headless: one reply, no questions, then exit",
    )
    chat.add_argument(
        "--output-format", choices=("text", "json", "stream-json"), default="text",
        help="headless output: final text, one JSON result, or JSON lines of events",
    )  # fmt: skip
    chat.add_argument(
        "--max-iters", type=_positive, metavar="N", help="tool-using steps per reply (default 20)"
    )
    return run


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run `tether chat` with parsed flags; returns the exit status."""
    from tether.cli.chat._main import run_chat

    return run_chat(args)
