"""`tether` command line: one parser, one registering function per subcommand.

Each entry of `SUBCOMMANDS` names a function `MODULE:FUNCTION` (default `register`) that
takes the subparsers action and adds its parser. It either sets a `handler` (or `run`)
default, a callable taking the parsed arguments and returning the exit status, or returns
that callable. Adding a command is one line in that list.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from tether._log import configure_logging
from tether.errors import TetherError

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

SUBCOMMANDS: list[str] = [
    "tether.cli._demo:register",
    "tether.cli.chat:add_parser",
    "tether.cli.chat:add_trust_parser",
    "tether.cli._serve:add_serve_parser",
]
"""The functions that register the subcommands, as `MODULE:FUNCTION`."""

_USER_ERRORS = (TetherError, OSError)
"""What a command line user can cause: shown as one line, with `--debug` for the traceback."""


def _version() -> str:
    from tether import __version__  # the source's own, also in an editable install

    return __version__


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked for (not on every start of every command)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        print(f"tether {_version()}")  # on stdout, as argparse's own `version` action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The `tether` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="tether", description="LLM agents you can trust with real tools."
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when a command fails"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for spec in SUBCOMMANDS:
        module, _, function = spec.partition(":")
        before = set(sub.choices)
        runner = getattr(importlib.import_module(module), function or "register")(sub)
        if callable(runner):  # a registrar that returns its command's runner
            for name in set(sub.choices) - before:
                sub.choices[name].set_defaults(handler=runner)
    return parser


def _handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], Any]:
    handler: Callable[[argparse.Namespace], Any] | None = getattr(args, "handler", None) or getattr(
        args, "run", None
    )
    assert callable(handler), f"subcommand {args.command!r} registered no handler"
    return handler


def _split_debug(argv: Sequence[str]) -> tuple[list[str], bool]:
    """`argv` without `--debug` (accepted anywhere before a lone `--`), and whether it was there."""
    words = list(argv)
    end = words.index("--") if "--" in words else len(words)
    debug = "--debug" in words[:end]
    return [w for i, w in enumerate(words) if i >= end or w != "--debug"], debug


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `tether` command; returns the exit status.

    Run as the process's own command line (`argv` None), the garbage collector stays off
    while the subcommands (and with them the agent machinery) are imported, and what they
    made is then frozen out of every later collection; the interpreter's last collection
    at exit is skipped too. Both walked every object the imports made (pydantic's schemas
    above all), ~20% of a `tether chat -p` run, to find no garbage. Exit handlers, thread
    joins and buffer flushes still run.
    """
    if argv is None:
        gc.disable()
        atexit.register(gc.freeze)  # objects frozen by now are left out of the final pass
    configure_logging()  # TETHER_LOG=debug|info|warning|error: the tether logs go to stderr
    words, debug = _split_debug(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv is None:
        gc.freeze()
        gc.enable()
    args = parser.parse_args(words)
    args.debug = debug
    try:
        status = int(_handler(args)(args))
    except KeyboardInterrupt:
        print("tether: interrupted", file=sys.stderr)
        return 130
    except _USER_ERRORS as error:
        if args.debug:
            raise
        from tether.cli._sanitize import visible

        message = visible(" ".join(str(error).split())) or type(error).__name__
        print(f"tether {args.command}: error: {message}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
