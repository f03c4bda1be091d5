"""A real pseudo-terminal running `tether chat`, read through a VT100 emulator (pyte).

Assertions are about what a person would see on the screen, not about raw bytes.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pexpect
import pyte

LAUNCH = "import sys; from tether.cli import main; sys.exit(main())"


def chat_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment whose home, config and data dirs are all under `home`."""
    dropped = ("TETHER_", "OPENAI_", "COLUMNS", "LINES")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        TETHER_HOME=str(home / "tether"),
        TERM="xterm-256color",
        PROMPT_TOOLKIT_NO_CPR="1",
    )
    env.update(extra)
    return env


class Terminal:
    """`tether chat ARGS` in a pty of `rows` x `cols`."""

    def __init__(
        self, args: list[str], cwd: Path, env: dict[str, str], rows: int = 200, cols: int = 120
    ) -> None:
        self.screen = pyte.HistoryScreen(cols, rows, history=10_000)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(
            sys.executable,
            ["-c", LAUNCH, "chat", *args],
            cwd=str(cwd),
            env=env,
            dimensions=(rows, cols),
        )

    def text(self) -> str:
        """The screen as text, trailing blanks removed."""
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    def transcript(self) -> list[str]:
        """Every line that scrolled off the top, then the screen."""
        gone = ["".join(c.data for c in row.values()).rstrip() for row in self.screen.history.top]
        return gone + self.text().splitlines()

    def _pump(self, timeout: float) -> bool:
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.stream.feed(data)
        return True

    def wait_for(self, pattern: str, count: int = 1, timeout: float = 20) -> str:
        """Wait until `pattern` (a regex) shows `count` times on the screen; return the screen."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while len(regex.findall(self.text())) < count:
            left = deadline - time.monotonic()
            alive = left > 0 and self._pump(min(left, 0.5))
            if not alive:
                raise AssertionError(
                    f"{pattern!r} x{count} not on screen "
                    f"({'exited' if left > 0 else 'timeout'}):\n{self.text()}"
                )
        return self.text()

    def count(self, pattern: str) -> int:
        """How often `pattern` shows on the screen now."""
        return len(re.findall(pattern, self.text()))

    def prompt_ready(self, count: int) -> str:
        """Wait for the `count`-th input prompt."""
        return self.wait_for(r"(?m)^>", count)

    def type(self, line: str) -> None:
        """Type a line and press Enter."""
        self.child.send(line + "\r")

    def key(self, keys: str) -> None:
        """Press keys without Enter (a single-key menu answers at once)."""
        self.child.send(keys)

    def ctrl(self, key: str) -> None:
        """Press Ctrl+`key`."""
        self.child.sendcontrol(key)

    def wait_idle(self, timeout: float = 20) -> str:
        """Wait until the screen ends with an empty input prompt."""
        return self.wait_for(r"\n>\Z", timeout=timeout)

    def leave(self) -> int:
        """Press Ctrl+D at an idle prompt; the exit status."""
        self.wait_idle()
        self.ctrl("d")
        return self.wait_exit()

    def wait_exit(self, timeout: float = 20) -> int:
        """Wait for the process to end; its exit status."""
        deadline = time.monotonic() + timeout
        while self._pump(max(deadline - time.monotonic(), 0.01)):
            if time.monotonic() > deadline:
                raise AssertionError(f"still running:\n{self.text()}")
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def kill(self) -> None:
        """End the process hard (SIGKILL), as a crash would."""
        self.child.kill(9)
        self.child.close(force=True)

    def close(self) -> None:
        """Make sure nothing is left running."""
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close(force=True)
