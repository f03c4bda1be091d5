"""The `Offloader` protocol and `LocalFileOffloader`: where what leaves the context goes."""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

from tether.errors import ConfigError
from tether.message import Msg

__all__ = ["LocalFileOffloader", "Offloader"]


@runtime_checkable
class Offloader(Protocol):
    """Writes what leaves the context somewhere the agent can read it back.

    Both methods return a path (or URI) that the context keeps as a reference; the
    agent opens it with its Read tool when it needs the details.
    """

    async def offload_messages(self, session_id: str, messages: list[Msg]) -> str:
        """Append `messages` to the session's log; return a path the agent can Read."""
        ...

    async def offload_text(self, session_id: str, name: str, text: str) -> str:
        """Store a full text (e.g. a truncated tool result); return its path.

        Never overwrite an earlier text, even one stored under the same `name`: the
        context may still point at it (call ids repeat across replies with some
        providers).
        """
        ...


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe_name(value: str, what: str) -> str:
    name = _UNSAFE.sub("_", value).strip(".")[:120]
    if not name:
        raise ConfigError(
            f"cannot make a file name from {what} {value!r}; use letters, digits, `.`, `_` or `-`"
        )
    return name


class LocalFileOffloader:
    """Offload to local files under `root`, one folder per session.

    Compressed messages are appended to `<root>/<session_id>/context.jsonl`, one
    `Msg` JSON per line (a message compressed twice is written twice; readers keep the
    last line of each id). Full tool outputs go to
    `<root>/<session_id>/tool_results/<name>.txt`, never overwriting an earlier file
    (`<name>-2.txt`, `-3`, ... when the name is taken). Paths returned are absolute.
    File writes run in a worker thread so the event loop never blocks on the disk.
    """

    def __init__(self, root: str | Path) -> None:
        path = Path(root).expanduser()
        if path.exists() and not path.is_dir():
            raise ConfigError(f"LocalFileOffloader root {str(path)!r} exists and is not a folder")
        self.root = path.resolve()

    def session_dir(self, session_id: str) -> Path:
        """The folder holding one session's offloaded files."""
        return self.root / _safe_name(session_id, "session id")

    def messages_path(self, session_id: str) -> Path:
        """The JSONL file of a session's compressed messages."""
        return self.session_dir(session_id) / "context.jsonl"

    async def offload_messages(self, session_id: str, messages: list[Msg]) -> str:
        """Append `messages` to the session's JSONL log; return its absolute path."""
        path = self.messages_path(session_id)
        lines = "".join(m.model_dump_json() + "\n" for m in messages)
        try:
            await asyncio.to_thread(_append, path, lines)
        except OSError as exc:
            exc.add_note(self._advice())
            raise
        return str(path)

    async def offload_text(self, session_id: str, name: str, text: str) -> str:
        """Write `text` to a new `tool_results/<name>[-n].txt`; return its absolute path."""
        folder = self.session_dir(session_id) / "tool_results"
        try:
            path = await asyncio.to_thread(_write_new, folder, _safe_name(name, "name"), text)
        except OSError as exc:
            exc.add_note(self._advice())
            raise
        return str(path)

    def _advice(self) -> str:
        return (
            f"LocalFileOffloader could not write under {str(self.root)!r}; make that folder "
            "writable (and free some disk space), or give the agent another offloader root"
        )

    def __repr__(self) -> str:
        return f"LocalFileOffloader({str(self.root)!r})"


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", newline="") as f:
        f.write(text)


def _write_new(folder: Path, stem: str, text: str) -> Path:
    """Write `text` to the first free `<stem>.txt`, `<stem>-2.txt`, ... (exclusive create)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = folder / (f"{stem}.txt" if n == 1 else f"{stem}-{n}.txt")
        try:
            with path.open("x", encoding="utf-8", newline="") as f:
                f.write(text)
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")
