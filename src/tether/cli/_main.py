"""`tether` command line: `tether demo` runs the main job offline."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from tether.cli._serve import add_serve_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `tether` command."""
    from tether._log import configure_logging

    configure_logging()  # TETHER_LOG=debug|info|warning|error: the tether logs go to stderr
    parser = argparse.ArgumentParser(
        prog="tether", description="LLM agents you can trust with real tools."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a scripted agent offline and show its events")
    demo.add_argument(
        "--db", default=None, help="SQLite file for the session (default: a temp file)"
    )
    demo.add_argument(
        "--workdir", default=None, help="folder the demo's file tools work in (default: a temp dir)"
    )
    add_serve_parser(sub)
    args = parser.parse_args(argv)
    if hasattr(args, "run"):
        return int(args.run(args))
    if args.command == "demo":
        from tether.cli._demo import run_demo

        return asyncio.run(run_demo(db=args.db, workdir=args.workdir))
    parser.print_help()  # pragma: no cover
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
