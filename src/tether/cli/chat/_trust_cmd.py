"""`tether trust [PATH]`: trust a project folder, list the trusted ones, or revoke one."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_trust_parser"]


def add_trust_parser(sub: Any) -> Callable[[argparse.Namespace], int]:
    """Add the `trust` subcommand to `sub`; return its runner."""
    trust = sub.add_parser(
        "trust",
        help="trust a project folder for `tether chat` (or --revoke, --list)",
        description=(
            "Trust a project folder (its root: the nearest ancestor with .git) so that "
            "`tether chat` uses its .tether/config.toml, .mcp.json, skills, plugins and "
            "AGENTS.md. Bypass mode stays the user's alone."
        ),
    )
    trust.add_argument("path", nargs="?", default=".", help="the folder (default: here)")
    action = trust.add_mutually_exclusive_group()
    action.add_argument("--revoke", action="store_true", help="forget the folder's trust")
    action.add_argument(
        "--without-mcp", action="store_true", help="trust it, but start none of its MCP servers"
    )
    action.add_argument("--list", action="store_true", help="list the folders answered for")
    return run_trust


def run_trust(args: argparse.Namespace) -> int:
    """Run `tether trust`; returns the exit status."""
    from tether.cli._sanitize import visible
    from tether.cli.chat._config import load_layers
    from tether.cli.chat._folder import Folder, instruction_files, project_root
    from tether.cli.chat._trust import TrustStore
    from tether.cli.chat._trust_ask import folder_lines
    from tether.errors import ChatConfigError

    store = TrustStore()
    if args.list:
        for path, record in sorted(store.folders().items()):
            print(f"{visible(path)}  {record.level}  {record.at}")
        return 0
    given = Path(args.path).expanduser().resolve()
    if not given.is_dir():
        raise ChatConfigError(f"{args.path!r} is not a folder")
    root = project_root(given)
    if args.revoke:
        known = store.revoke(root)
        print(f"{visible(str(root))}: {'no longer trusted' if known else 'was not trusted'}")
        return 0
    folder = Folder(root, load_layers(root).project, tuple(instruction_files(root, root)))
    store.set(root, "no_mcp" if args.without_mcp else "all", folder.view)
    print(f"trusted {visible(str(root))}{' without its MCP servers' if args.without_mcp else ''}")
    for line in folder_lines(folder):
        print(f"  {line}")
    return 0
