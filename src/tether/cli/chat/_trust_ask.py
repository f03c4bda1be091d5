"""Settling a folder's trust at start: the flag, the stored answer, or asking the user."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from tether.cli._sanitize import visible
from tether.cli.chat._folder import Folder, server_line
from tether.cli.chat._trust import Decision, TrustRecord, TrustStore, decide, grown

__all__ = ["folder_lines", "settle_trust"]

Ask = Callable[[str, str], Awaitable[str]]


def folder_lines(folder: Folder) -> list[str]:
    """What the folder would configure, one line per setting (sanitised)."""
    s = folder.settings
    lines: list[str] = []
    if s.model is not None:
        lines.append(f"model: {s.model}")
    if s.mode is not None:
        note = "  (a project file cannot set this: stays ignored)" if s.mode == "bypass" else ""
        lines.append(f"permission mode: {s.mode}{note}")
    for verb, rules in (("allow", s.allow), ("ask", s.ask), ("deny", s.deny)):
        if rules:
            lines.append(f"{verb}: {', '.join(rules)}")
    for name, spec in s.mcp_servers.items():
        trusted = "  (its read-only claims trusted)" if spec.get("trust_annotations") else ""
        lines.append(f"MCP server {name}: {server_line(spec)}{trusted}")
    lines += [f"plugin: {p}" for p in s.plugins]
    lines += [f"skills folder: {k}" for k in s.skills]
    lines += [f"instructions: {p.relative_to(folder.root)}" for p in folder.instructions]
    if s.context:
        lines.append(f"[context]: {', '.join(sorted(s.context))}")
    return [visible(line) for line in lines]


async def _ask(folder: Folder, record: TrustRecord | None, new: list[str], ask: Ask) -> str | None:
    """The level the user chose (None: keep the stored answer for now)."""
    root = visible(str(folder.root))
    if record is None:
        print(f"This folder ({root}) has its own configuration for tether chat:")
        for line in folder_lines(folder):
            print(f"  {line}")
    else:
        print(f"This folder's configuration ({root}) changed since your answer; new:")
        for item in new:
            print(f"  {visible(item)}")
    servers = bool(folder.settings.mcp_servers)
    without = " / trust without its [m]CP servers" if servers else ""
    keep = "no, keep what you trusted before" if record and record.level != "none" else "no"
    question = f"Trust it? [t]rust{without} / [n]{keep[1:]} (default) "
    while True:
        try:
            answer = (await ask(question, "")).strip().lower()
        except EOFError:
            return None
        if answer in ("t", "trust", "y", "yes"):
            return "all"
        if servers and answer in ("m", "mcp"):
            return "no_mcp"
        if answer in ("", "n", "no"):
            return None if record is not None and record.level != "none" else "none"


async def settle_trust(folder: Folder, flag: bool, ask: Ask | None) -> Decision:
    """The decision for `folder`: `--trust-folder`, the stored answer, or `ask` (None: never)."""
    store = TrustStore()
    record = store.get(folder.root)
    if flag:
        record = store.set(folder.root, "all", folder.view)
    elif ask is not None and folder.configures:
        new = grown(folder, record)
        if new and (record is None or record.level != "none" or record.view != folder.view):
            level = await _ask(folder, record, new, ask)
            if level is not None:
                record = store.set(folder.root, level, folder.view)
    decision = decide(folder, record)
    _report(folder, decision)
    return decision


def _report(folder: Folder, decision: Decision) -> None:
    root = visible(str(folder.root))
    how = f"trust it with --trust-folder or `tether trust {root}` (undo: `tether trust --revoke {root}`)"
    if decision.ignored:
        what = "is not trusted" if decision.level == "none" else "changed since you trusted it"
        items = visible(", ".join(decision.ignored))
        print(f"tether chat: this folder ({root}) {what}; ignored: {items}; {how}", file=sys.stderr)
    for refused in decision.refused:
        print(f"tether chat: ignored {visible(refused)}", file=sys.stderr)
    sys.stderr.flush()
