"""`Bash`: run a shell command with a persistent working directory."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tether._field_docs import field_docs
from tether.message import ToolResultBlock, ToolResultState
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from tether.tool._base import ToolBase, ToolContext
from tether.tool.builtin._common import permission_cwd
from tether.tool.builtin._live import LiveOutput
from tether.tool.builtin._process import filtered_environment, run_process
from tether.tool.builtin._sandbox import SandboxBase

__all__ = ["Bash", "BashInput"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# The command is passed as "$1" and eval'd, so no quoting is needed (the eval'd text
# starts with `shift`, so the command sees no positional parameters, as in a fresh
# shell); the EXIT trap reports the final directory (even after `exit`) on the side
# channel, as its last line.
_SCRIPT = 'trap \'pwd -P >&"$TETHER_FD" 2>/dev/null\' EXIT\neval "shift; $1"'


@field_docs
class BashInput(BaseModel):
    """Arguments of `Bash`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    command: str
    """The bash command line to run."""
    timeout: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """Timeout in milliseconds (default 120000 = 2 minutes, at most 600000 = 10 minutes)."""
    description: str | None = None
    """A short description of what the command does, in 5-10 words (shown to the user)."""


def _signal_note(exit_code: int | None) -> str:
    if exit_code is None or exit_code >= 0:
        return ""
    try:
        name = signal.Signals(-exit_code).name
    except ValueError:
        name = "an unknown signal"
    return f": killed by signal {-exit_code} ({name})"


def _command_of(tool_input: Mapping[str, Any]) -> str | None:
    command = tool_input.get("command")
    return command if isinstance(command, str) else None


class Bash(ToolBase):
    """Run shell commands; the working directory persists between calls of a session.

    Args:
        sandbox: Run every command inside this sandbox (e.g. `BubblewrapSandbox()`).
        max_output_chars: Output kept per call (its first and last halves).
        env: Variables added to the (secret-filtered) environment of every command.
        shell: The bash binary.
    """

    name = "Bash"
    input_model = BashInput

    def __init__(
        self,
        *,
        sandbox: SandboxBase | None = None,
        max_output_chars: int = 30_000,
        env: Mapping[str, str] | None = None,
        shell: str = "/bin/bash",
    ) -> None:
        self.sandbox = sandbox
        self.max_output_chars = max_output_chars
        self.env = dict(env or {})
        self.shell = shell
        confined = (
            "\n- Commands run in a sandbox: files outside the working directories are "
            "read-only, and so are git hooks and config, shell profiles and editor "
            "settings inside them; /tmp is private"
            + (", and there is no network." if not getattr(sandbox, "allow_network", True) else ".")
            if sandbox is not None
            else ""
        )
        self.description = (
            "Run a bash command and return its combined stdout and stderr and exit code.\n"
            "- The working directory persists between calls: `cd` in one call holds for "
            "the next. Environment variables and shell functions do not persist.\n"
            f"- `timeout` is in milliseconds: default {DEFAULT_TIMEOUT_MS} (2 minutes), "
            f"at most {MAX_TIMEOUT_MS} (10 minutes). On timeout the command and everything "
            "it started are killed.\n"
            f"- Output over {max_output_chars} characters is cut in the middle (the start "
            "and the end are kept); redirect long output to a file and Read or Grep it.\n"
            "- Commands cannot be interactive (stdin is closed); processes left in the "
            "background are killed when the command ends.\n"
            "- Prefer Read, Grep, Glob, Edit and Write over cat, grep, find, sed and echo >."
            + confined
        )

    def _cwd(self, context: PermissionContext, tool_state: Mapping[str, Any] | None) -> str:
        saved = (tool_state or {}).get("cwd")
        return saved if isinstance(saved, str) else permission_cwd(context)

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        """Whether the permission engine's shell analysis finds the command read-only."""
        command = _command_of(tool_input)
        if command is None:
            return False
        try:
            from tether.permission import is_read_only_command

            return is_read_only_command(command, cwd=os.getcwd())
        except Exception:  # anything unanalysable is treated as a write
            return False

    def is_concurrency_safe_call(self, tool_input: dict[str, Any]) -> bool:
        """Read-only commands may run alongside other concurrency-safe calls."""
        return self.is_read_only_call(tool_input)

    is_permission_check_local = True  # decides from the arguments alone

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """The shell analysis decides; an `auto_allow` sandbox turns its ASKs into ALLOW.

        Under auto-allow, a command still asks when an ask rule matched it or it touches a
        sensitive path (a safety check); deny rules and explore mode still deny.
        """
        from tether.permission import check_shell_command

        command = _command_of(tool_input)
        if command is None:
            return PermissionDecision(
                behavior=PermissionBehavior.ALLOW, reason="invalid arguments; nothing runs"
            )
        auto = self.sandbox is not None and self.sandbox.auto_allow
        judged = context
        if auto and context.mode is PermissionMode.DONT_ASK:
            # Judge as if someone could be asked: what the sandbox allows needs nobody.
            judged = context.model_copy(update={"mode": PermissionMode.DEFAULT})
        decision = check_shell_command(command, judged, cwd=self._cwd(context, tool_state))
        if (
            auto
            and decision.behavior is PermissionBehavior.ASK
            and decision.rule is None
            and not decision.safety_check
        ):
            return PermissionDecision(
                behavior=PermissionBehavior.ALLOW,
                reason="runs inside the sandbox, which is the boundary (auto-allow mode)",
            )
        return decision

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether `Bash(cmd)` / `Bash(prefix:*)` matches the command.

        An allow rule matches only if it allows the command's hazards too (it grants
        words, never running another program or leaving the work dirs).
        """
        from tether.permission import PermissionBehavior, match_allow_rule, match_shell_rule

        command = _command_of(tool_input)
        if command is None:
            return False
        cwd = self._cwd(context, tool_state)
        if rule.behavior is PermissionBehavior.ALLOW:
            return match_allow_rule(rule, command, context, cwd=cwd)
        return match_shell_rule(rule, command, cwd=cwd)

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        """Command-prefix rules that would allow commands like this one."""
        from tether.permission import suggest_shell_rules

        command = _command_of(tool_input)
        if command is None:
            return []
        return suggest_shell_rules(command, cwd=self._cwd(context, tool_state))

    async def call(  # a stream of output, then the result
        self, tool_input: BaseModel, context: ToolContext
    ) -> AsyncIterator[str | ToolResultBlock]:
        """Run the command in the saved directory and save the directory it ends in.

        The output streams as it comes (TOOL_RESULT_TEXT_DELTA events; at most
        `max_output_chars` of it); the result that follows is what the model reads.
        """
        assert isinstance(tool_input, BashInput)
        cwd, note = await asyncio.to_thread(self._start_dir, context)
        argv = [self.shell, "--noprofile", "--norc", "-c", _SCRIPT, "bash", tool_input.command]
        if self.sandbox is not None:
            work_dirs = context.permission_context.working_directories or [context.cwd]
            argv = self.sandbox.wrap(argv, cwd=cwd, work_dirs=work_dirs)
        timeout_ms = tool_input.timeout or DEFAULT_TIMEOUT_MS
        live = LiveOutput(self.max_output_chars)
        process = asyncio.ensure_future(
            run_process(
                argv,
                cwd=cwd,
                env=filtered_environment(self.env),
                time_limit=timeout_ms / 1000,
                max_output_bytes=self.max_output_chars,
                side_channel=True,
                on_output=live.feed,
            )
        )
        try:
            if note:
                yield note
            async for text in live.until(process):
                yield text
            result = process.result()
        finally:
            if not process.done():  # cancelled, or the stream was closed: kill the command
                process.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await process
        # The trap writes last; anything the command itself wrote there comes before.
        final = result.side_channel.decode("utf-8", errors="replace").strip().rpartition("\n")[2]
        if final and os.path.isabs(final):
            context.tool_state["cwd"] = final
        text = note + (result.output.rstrip("\n") or "(no output)")
        if result.timed_out:
            text += (
                f"\n\n[Command timed out after {timeout_ms} ms; it and every process it "
                "started were killed. Raise `timeout` (at most 600000) or run less at once.]"
            )
            state = ToolResultState.ERROR
        else:
            text += f"\n\n[exit code {result.exit_code}{_signal_note(result.exit_code)}]"
            state = ToolResultState.SUCCESS if result.exit_code == 0 else ToolResultState.ERROR
        metadata = {"exit_code": result.exit_code, "cwd": context.tool_state.get("cwd", cwd)}
        yield ToolResultBlock(id="", name=self.name, output=text, state=state, metadata=metadata)

    def _start_dir(self, context: ToolContext) -> tuple[str, str]:
        saved = context.tool_state.get("cwd")
        if isinstance(saved, str) and os.path.isdir(saved):
            return saved, ""
        start = context.cwd
        if isinstance(saved, str):
            context.tool_state["cwd"] = start
            return start, f"[{saved} no longer exists; running in {start}.]\n"
        return start, ""
