"""Run a command in its own process group: capped output, timeout, and no orphans."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["OutputCap", "ProcessResult", "filtered_environment", "run_process"]

_SECRET_NAME = re.compile(
    r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_?KEY|ACCESS_?KEY",
    re.IGNORECASE,
)
_DRAIN_AFTER_EXIT = 2.0
"""Seconds to wait for the output pipe to close once the command has exited."""


def filtered_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without secrets.

    Names like `*_API_KEY`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`,
    `*PRIVATE_KEY*`, `*ACCESS_KEY*` and tether's own `TETHER_*` are dropped; `extra` is
    added afterwards (so it may set any of them on purpose).
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not _SECRET_NAME.search(name) and not name.upper().startswith("TETHER_")
    }
    # Nothing interactive can answer: make pagers and git prompts give up at once.
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    env.update(extra or {})
    return env


class OutputCap:
    """Keeps the first and last `limit // 2` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of output."""
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        """Head and tail decoded, with a note of what was left out between them."""
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        omitted = self.total - len(self.head) - len(self.tail)
        if omitted <= 0:
            return head + tail
        return f"{head}\n\n[... {omitted} bytes of output omitted ...]\n\n{tail}"


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """How a command ended."""

    output: str
    """Combined stdout and stderr, capped (head and tail kept)."""
    exit_code: int | None
    """The exit status; negative for a signal; `None` if it timed out."""
    timed_out: bool
    """It ran past its timeout and its process group was killed."""
    side_channel: bytes
    """What the command wrote to the extra file descriptor, if one was given."""


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _group_running(pgid: int) -> bool:
    """Whether a process of the group is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def _reap_group(pgid: int) -> None:
    """Kill the group and wait (bounded) until SIGKILL has taken every member down."""
    _kill_group(pgid)
    deadline = asyncio.get_running_loop().time() + _DRAIN_AFTER_EXIT
    while await asyncio.to_thread(_group_running, pgid):
        if asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.005)


async def _pump(
    stream: asyncio.StreamReader, cap: OutputCap, on_output: Callable[[bytes], None] | None
) -> None:
    while chunk := await stream.read(1 << 16):
        cap.feed(chunk)
        if on_output is not None:
            on_output(chunk)


def _read_side_channel(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = bytearray()
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(fd, 1 << 16):
            data += chunk
    return bytes(data)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    time_limit: float,
    max_output_bytes: int,
    side_channel: bool = False,
    on_output: Callable[[bytes], None] | None = None,
) -> ProcessResult:
    """Run `argv` in a new session and process group, stdin closed, stderr into stdout.

    When the command exits, runs past `time_limit` seconds, or the awaiting task is cancelled, the whole
    process group is killed (SIGKILL), so nothing it started in the background survives.
    With `side_channel`, the command gets a pipe whose write end's number is in the
    environment variable `TETHER_FD`; what it writes there comes back separately.
    `on_output` is given every piece of output as it is read.
    """
    read_fd, write_fd = os.pipe() if side_channel else (-1, -1)
    env = dict(env)
    if side_channel:
        env["TETHER_FD"] = str(write_fd)
    loop = asyncio.get_running_loop()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Protocol(limit=1 << 16, loop=loop),
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(write_fd,) if side_channel else (),
        )
    )
    try:
        # Shielded: the process runs (and may start others) before its pipe is connected;
        # asyncio's own clean-up on cancellation would kill the leader only.
        transport, protocol = await asyncio.shield(spawn)
    except BaseException as exc:
        try:
            if isinstance(exc, asyncio.CancelledError):
                with contextlib.suppress(Exception):
                    transport, protocol = await spawn
                    await _shut_down(transport, protocol, None)
        finally:
            if side_channel:
                os.close(read_fd)
        raise
    finally:
        if side_channel:
            os.close(write_fd)
    try:
        return await _supervise(
            transport, protocol, time_limit, max_output_bytes, read_fd, on_output
        )
    finally:
        if side_channel:
            os.close(read_fd)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Tells when the process exits, even while others still hold its output pipe.

    (`Process.wait()` only returns once the pipes are closed too.)
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


async def _shut_down(
    transport: asyncio.SubprocessTransport, protocol: _Protocol, pump: asyncio.Task[None] | None
) -> None:
    """Kill the process group, stop reading, and wait until every member is gone."""
    pid = transport.get_pid()
    _kill_group(pid)
    if pump is not None and not pump.done():
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
    # Closing the transport polls the process: only once the child watcher has reaped it,
    # or the two race and asyncio logs "Unknown child process pid".
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(protocol.exited.wait(), _DRAIN_AFTER_EXIT)
    transport.close()
    await _reap_group(pid)


async def _supervise(
    transport: asyncio.SubprocessTransport,
    protocol: _Protocol,
    time_limit: float,
    max_output_bytes: int,
    read_fd: int,
    on_output: Callable[[bytes], None] | None,
) -> ProcessResult:
    assert protocol.stdout is not None
    pid = transport.get_pid()
    cap = OutputCap(max_output_bytes)
    pump = asyncio.create_task(_pump(protocol.stdout, cap, on_output))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(protocol.exited.wait(), time_limit)
        except TimeoutError:
            timed_out = True
        # Whatever the command left running goes with it; then the pipe closes. A process
        # that escaped the group (setsid) could hold it open, so that wait is bounded.
        await _reap_group(pid)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), _DRAIN_AFTER_EXIT)
    finally:
        # Also reached on cancellation.
        await _shut_down(transport, protocol, pump)
    side = _read_side_channel(read_fd) if read_fd >= 0 else b""
    code = None if timed_out else transport.get_returncode()
    return ProcessResult(cap.text(), code, timed_out, side)
