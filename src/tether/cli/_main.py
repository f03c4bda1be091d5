"""`tether` command line: one parser, one subcommand module per command.

Each module in `SUBCOMMANDS` has `register(subparsers)`, which adds its parser and sets
`handler` (a callable taking the parsed arguments and returning the exit status). Adding a
command is one line in that list.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from tether.errors import TetherError

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS: list[str] = [
    "tether.cli._demo",
]
"""Modules that each register one subcommand (`register(subparsers) -> None`)."""

_USER_ERRORS = (TetherError, OSError)
"""What a command line user can cause: shown as one line, with `--debug` for the traceback."""


def _version() -> str:
    try:
        return version("tether")
    except PackageNotFoundError:  # pragma: no cover  # running from a source tree
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The `tether` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="tether", description="LLM agents you can trust with real tools."
    )
    parser.add_argument("--version", action="version", version=f"tether {_version()}")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when a command fails"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def _split_debug(argv: Sequence[str]) -> tuple[list[str], bool]:
    """`argv` without `--debug` (accepted anywhere before a lone `--`), and whether it was there."""
    words = list(argv)
    end = words.index("--") if "--" in words else len(words)
    debug = "--debug" in words[:end]
    return [w for i, w in enumerate(words) if i >= end or w != "--debug"], debug


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `tether` command; returns the exit status."""
    words, debug = _split_debug(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(words)
    args.debug = debug
    try:
        status: int = args.handler(args)
    except KeyboardInterrupt:
        print("tether: interrupted", file=sys.stderr)
        return 130
    except _USER_ERRORS as error:
        if args.debug:
            raise
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"tether {args.command}: error: {message}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
