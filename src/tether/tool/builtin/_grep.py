"""`Grep`: search file contents with ripgrep."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import shutil
import signal
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tether._field_docs import field_docs
from tether.permission import search_filter
from tether.tool._base import ToolContext, ToolOutput
from tether.tool.builtin._common import FileToolBase, error, resolve_path

__all__ = ["Grep", "GrepInput", "find_ripgrep"]

_COLLECT_FILES = 20_000
"""Paths gathered (then sorted by mtime) before the result cap is applied."""


@functools.cache
def find_ripgrep() -> str | None:
    """The `rg` binary: the one the `ripgrep` package installed, else the one on PATH."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        files = distribution("ripgrep").files or []
    except PackageNotFoundError:
        files = []
    for file in files:
        if file.name in ("rg", "rg.exe"):
            located = os.path.realpath(str(file.locate()))
            if os.access(located, os.X_OK):
                return located
    return shutil.which("rg")


@field_docs
class GrepInput(BaseModel):
    """Arguments of `Grep` (the short flags are the ripgrep/grep ones)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    pattern: str
    """Regular expression to search for (Rust regex syntax, like ripgrep: escape literal
    braces and parentheses, e.g. `interface\\{\\}` or `foo\\(`)."""
    path: str | None = None
    """File or directory to search, absolute or relative to the working directory.
    Defaults to the working directory."""
    glob: str | None = None
    """Only search files whose path matches this glob, e.g. `*.py` or `src/**/*.{ts,tsx}`."""
    type: str | None = None
    """Only search files of this ripgrep type, e.g. `py`, `js`, `rust`, `go` (faster than
    a glob for common languages)."""
    output_mode: Literal["files_with_matches", "content", "count"] = "files_with_matches"
    """`files_with_matches` (default): the paths of matching files, most recently modified
    first. `content`: the matching lines as `path:line:text` (context lines use `-`).
    `count`: the number of matching lines per file."""
    case_insensitive: bool = Field(default=False, alias="-i")
    """Ignore case."""
    line_numbers: bool = Field(default=True, alias="-n")
    """Show line numbers in `content` mode (on by default)."""
    after: int | None = Field(default=None, alias="-A", ge=0)
    """Lines of context to show after each match (`content` mode)."""
    before: int | None = Field(default=None, alias="-B", ge=0)
    """Lines of context to show before each match (`content` mode)."""
    context: int | None = Field(default=None, alias="-C", ge=0)
    """Lines of context to show before and after each match (`content` mode)."""
    head_limit: int | None = Field(default=None, ge=1)
    """Return at most this many lines/entries. Defaults to the tool's cap."""


class Grep(FileToolBase):
    """Search file contents with ripgrep; honours .gitignore, skips `.git`.

    Files `Read` could not read without asking (sensitive paths, deny and ask rules,
    files with other hard links) are left out of the output unless an allow rule names them.

    Args:
        max_results: Lines or entries returned when the call gives no `head_limit`.
        max_chars: Characters of output per call, whatever `head_limit` says.
        time_limit: Seconds a search may run; then ripgrep is stopped and what it found
            so far is returned, marked incomplete.
    """

    name = "Grep"
    input_model = GrepInput
    is_read_only = True
    is_concurrency_safe = True
    is_idempotent = True
    access = "read"

    def __init__(
        self, *, max_results: int = 250, max_chars: int = 50_000, time_limit: float = 60.0
    ) -> None:
        self.max_results = max_results
        self.max_chars = max_chars
        self.time_limit = time_limit
        self.description = (
            "Search file contents with a regular expression (ripgrep). Use it instead of "
            "running grep or rg through Bash.\n"
            "- `pattern` is a Rust regex; `path` defaults to the working directory; filter "
            "files with `glob` (e.g. `*.py`) or `type` (e.g. `py`).\n"
            "- `output_mode`: `files_with_matches` (default, paths newest first), `content` "
            "(matching lines with line numbers; `-A`/`-B`/`-C` add context lines) or "
            "`count` (matching lines per file). `-i` ignores case.\n"
            "- Files ignored by .gitignore and the `.git` directory are skipped; hidden "
            "files are searched, but files that need permission to read (secrets such as "
            "`.env`, keys, files a rule protects) never appear in the results.\n"
            f"- At most {max_results} lines/entries are returned unless `head_limit` says "
            f"otherwise, and never more than {max_chars} characters; narrow the search if "
            "the result says it was cut."
        )

    def target_path(self, tool_input: BaseModel) -> str:
        """The path searched, as the call gives it."""
        assert isinstance(tool_input, GrepInput)
        return tool_input.path or "."

    def _argv(self, rg: str, args: GrepInput, path: str) -> list[str]:
        # `--null` ends every path with a NUL, so each line's file is known exactly.
        argv = [rg, "--no-config", "--color=never", "--hidden", "--no-require-git", "--null"]
        argv += ["--glob=!.git", "--max-columns=500", "--max-columns-preview"]
        if args.output_mode == "files_with_matches":
            argv.append("--files-with-matches")
        elif args.output_mode == "count":
            argv += ["--count", "--with-filename"]
        else:
            argv += ["--no-heading", "--with-filename"]
            argv.append("--line-number")  # to tell matches from context (`_visible`)
            for flag, value in (("-A", args.after), ("-B", args.before), ("-C", args.context)):
                if value is not None:
                    argv.append(f"{flag}{value}")
        if args.case_insensitive:
            argv.append("--ignore-case")
        if args.glob:
            argv.append(f"--glob={args.glob}")
        if args.type:
            argv.append(f"--type={args.type}")
        return [*argv, "-e", args.pattern, "--", path]

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Run ripgrep and format what it found."""
        assert isinstance(tool_input, GrepInput)
        rg = find_ripgrep()
        if rg is None:
            return error(
                "ripgrep (`rg`) is not installed, so Grep cannot run. Install it with "
                "`pip install ripgrep` (a tether dependency) or `apt-get install ripgrep`; "
                "meanwhile search with Bash `grep -rn`."
            )
        path = resolve_path(tool_input.path or ".", context.cwd)
        problem = await asyncio.to_thread(_unsearchable, path)
        if problem is not None:
            return error(problem)
        limit = tool_input.head_limit or self.max_results
        files_mode = tool_input.output_mode == "files_with_matches"
        shown = search_filter(self.name, context.permission_context, cwd=context.cwd)
        run = await _run(
            self._argv(rg, tool_input, str(path)),
            cwd=context.cwd,
            max_lines=_COLLECT_FILES if files_mode else limit,
            max_chars=None if files_mode else self.max_chars,
            time_limit=self.time_limit,
            keep=functools.partial(
                _visible, shown, tool_input.output_mode, tool_input.line_numbers
            ),
            separator=b"\0" if files_mode else b"\n",
        )
        lines, cut = run.lines, run.cut
        late = (
            f"\n\n[The search was stopped after {self.time_limit:g} s (the time limit): "
            "results are incomplete. Narrow it with `path`, `glob` or `type`.]"
            if run.timed_out
            else ""
        )
        if not lines:
            if run.timed_out:
                return "No matches found before the search was stopped." + late
            if run.code == 1 or (run.code == 0 and not run.stderr):
                return "No matches found."
            return error(f"ripgrep failed (exit code {run.code}): {run.stderr.strip()[:2000]}")
        if files_mode:
            lines = await asyncio.to_thread(_newest_first, lines)
            cut = cut or len(lines) > limit
            lines = lines[:limit]
        return self._format(tool_input.output_mode, lines, cut, limit) + late

    def _format(self, mode: str, lines: list[str], cut: bool, limit: int) -> str:
        if mode == "files_with_matches":
            head = f"{len(lines)} file{'s' if len(lines) != 1 else ''} match"
            text = head + (" (newest first):\n" if len(lines) > 1 else ":\n") + "\n".join(lines)
        elif mode == "count":
            total = sum(int(line.rpartition(":")[2] or 0) for line in lines)
            text = "\n".join(lines) + f"\n\n{total} matching lines in {len(lines)} files."
        else:
            text = "\n".join(lines)
        if cut:
            text += (
                f"\n\n[Results cut at {limit} lines/entries or {self.max_chars} characters. "
                "Narrow the search with `path`, `glob` or `type`, or raise `head_limit`.]"
            )
        return text


_NUMBERED = re.compile(r"(\d+)([:-])(.*)", re.DOTALL)


def _visible(shown: Callable[[str], bool], mode: str, numbers: bool, line: str) -> str | None:
    """A record of ripgrep's `--null` output as shown, or `None` if its file is left out.

    A file `Read` could not read without asking (sensitive, a deny or ask rule, other
    hard links) never appears, unless an allow rule names it. Content lines come with
    their numbers (`12:` a match, `12-` context), dropped here unless asked for.
    """
    if mode == "files_with_matches":
        return line if shown(line) else None
    path, nul, rest = line.partition("\0")
    if not nul:
        return line  # a context separator (`--`)
    if not shown(path):
        return None
    if mode == "count":
        return f"{path}:{rest}"
    numbered = _NUMBERED.fullmatch(rest)
    if numbered is None:
        return f"{path}:{rest}"
    number, sep, text = numbered.groups()
    return f"{path}{sep}{number}{sep}{text}" if numbers else f"{path}{sep}{text}"


def _newest_first(paths: list[str]) -> list[str]:
    def mtime(path: str) -> float:
        try:
            return os.stat(path).st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (-mtime(p), p))


async def _drain(stream: asyncio.StreamReader, keep: int) -> str:
    kept = bytearray()
    while chunk := await stream.read(1 << 16):
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return kept.decode("utf-8", errors="replace")


@dataclass(slots=True)
class _Run:
    lines: list[str] = field(default_factory=list)
    cut: bool = False
    """Stopped on purpose once the line or character cap was reached."""
    timed_out: bool = False
    code: int | None = None
    stderr: str = ""


def _unsearchable(path: Path) -> str | None:
    """Why ripgrep should not be pointed at `path` (reading a FIFO or device never ends)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"Path does not exist: {path}. Check it, or find files with Glob."
    except OSError as exc:
        return f"Cannot search {path}: {exc.strerror or exc}."
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return f"{path} is not a regular file or directory (a device, FIFO or socket); Grep skips it."


async def _run(
    argv: list[str],
    *,
    cwd: str,
    max_lines: int,
    max_chars: int | None,
    time_limit: float,
    keep: Callable[[str], str | None],
    separator: bytes,
) -> _Run:
    """Run rg and read its records; stops once enough is read or the time is up.

    `keep` turns a record into the line shown, or drops it (`None`); dropped records
    count toward no limit.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    assert proc.stdout is not None and proc.stderr is not None
    run = _Run()
    stderr_task = asyncio.create_task(_drain(proc.stderr, 8192))
    finished = False
    try:
        try:
            async with asyncio.timeout(time_limit):
                await _collect(proc.stdout, run, keep, separator, max_lines, max_chars)
        except TimeoutError:
            run.timed_out = True
        finished = True
    finally:
        if not finished or run.cut or run.timed_out:
            # Not `proc.kill()`: it polls the pid, racing asyncio's child watcher (which
            # then logs "Unknown child process pid"); a signal to a zombie is harmless.
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
        run.code = await proc.wait()
        run.stderr = await stderr_task
    return run


async def _collect(
    stdout: asyncio.StreamReader,
    run: _Run,
    keep: Callable[[str], str | None],
    separator: bytes,
    max_lines: int,
    max_chars: int | None,
) -> None:
    used = 0
    while True:
        try:
            raw = await stdout.readuntil(separator)
        except asyncio.IncompleteReadError as exc:
            raw = exc.partial
        if not raw:
            return
        line = keep(raw.decode("utf-8", errors="replace").removesuffix(separator.decode()))
        if line is None:
            continue
        used += len(line) + 1
        over = max_chars is not None and used > max_chars and run.lines
        if len(run.lines) >= max_lines or over:
            run.cut = True
            return
        run.lines.append(line)
