import asyncio
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from tether.errors import SandboxUnavailableError
from tether.message import ToolResultState
from tether.tool import Bash
from tether.tool.builtin import BubblewrapSandbox


@pytest.fixture
def outside():
    """A directory outside the work dir and outside /tmp (which the sandbox replaces)."""
    path = Path(tempfile.mkdtemp(prefix="tether-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def tcp_server():
    """A real local TCP server; yields its port."""

    async def greet(reader, writer):
        writer.write(b"hello\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


def test_missing_bubblewrap_names_the_package(monkeypatch):
    with pytest.raises(SandboxUnavailableError, match="`bubblewrap`"):
        BubblewrapSandbox(bwrap_path="/nonexistent/bwrap")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailableError, match="apt-get install bubblewrap"):
        BubblewrapSandbox()


async def test_write_outside_the_work_dir_fails(session, outside, bwrap_ok):
    target = outside / "escaped.txt"
    command = f"echo pwned > {target}"
    sandboxed = await session.run(Bash(sandbox=BubblewrapSandbox()), command=command)
    assert sandboxed.state is ToolResultState.ERROR
    assert "Read-only file system" in sandboxed.get_text()
    assert not target.exists()
    # The same command without the sandbox does write there: the sandbox made the difference.
    plain = await session.run(Bash(), command=command)
    assert plain.state is ToolResultState.SUCCESS and target.read_text() == "pwned\n"


async def test_write_inside_the_work_dir_succeeds(session, outside, bwrap_ok):
    bash = Bash(sandbox=BubblewrapSandbox(writable_paths=[outside]))
    result = await session.run(
        bash, command=f"mkdir -p sub && echo ok > sub/f.txt && cd sub && echo extra > {outside}/x"
    )
    assert result.state is ToolResultState.SUCCESS, result.get_text()
    assert (session.work / "sub/f.txt").read_text() == "ok\n"
    assert (outside / "x").read_text() == "extra\n"
    assert session.state.tool_state["Bash"]["cwd"] == str(session.work / "sub")
    assert (await session.run(bash, command="pwd")).get_text().startswith(str(session.work / "sub"))


async def test_tmp_is_private(session, bwrap_ok):
    name = f"/tmp/tether-probe-{uuid.uuid4().hex}"
    result = await session.run(
        Bash(sandbox=BubblewrapSandbox()), command=f"echo hi > {name} && cat {name}"
    )
    assert result.state is ToolResultState.SUCCESS
    assert result.get_text().startswith("hi")
    assert not os.path.exists(name)


async def test_network_is_unreachable_unless_allowed(session, tcp_server, bwrap_ok):
    command = f"exec 3<>/dev/tcp/127.0.0.1/{tcp_server} && head -n1 <&3"
    plain = await session.run(Bash(), command=command, timeout=10_000)
    assert plain.get_text().startswith("hello")
    cut_off = await session.run(Bash(sandbox=BubblewrapSandbox()), command=command, timeout=10_000)
    assert cut_off.state is ToolResultState.ERROR
    assert "hello" not in cut_off.get_text()
    allowed = await session.run(
        Bash(sandbox=BubblewrapSandbox(allow_network=True)), command=command, timeout=10_000
    )
    assert allowed.get_text().startswith("hello")


async def test_settings_files_cannot_be_modified(session, bwrap_ok):
    settings = session.work / ".tether"
    settings.mkdir()
    (settings / "settings.json").write_text('{"mode": "default"}')
    bash = Bash(sandbox=BubblewrapSandbox())
    for command in (
        'echo \'{"mode": "bypass"}\' > .tether/settings.json',
        "rm .tether/settings.json",
        "mv .tether .tether-old",
        "touch .tether/other.json",
    ):
        result = await session.run(bash, command=command)
        assert result.state is ToolResultState.ERROR, command
    assert (settings / "settings.json").read_text() == '{"mode": "default"}'
    assert sorted(os.listdir(settings)) == ["settings.json"]
    # The rest of the work dir stays writable.
    assert (await session.run(bash, command="echo ok > other.txt")).state is ToolResultState.SUCCESS


def _running_with_argument(session: Any, marker: bytes) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            args = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker in args and session.pid_alive(int(name)):
            found.append(int(name))
    return found


async def test_timeout_kills_sandboxed_processes(session, bwrap_ok):
    marker = f"1000.{uuid.uuid4().int % 10**9}"  # a unique `sleep` argument to find it by
    result = await session.run(
        Bash(sandbox=BubblewrapSandbox()),
        command=f"sleep {marker} & sleep {marker}",
        timeout=500,
    )
    assert result.state is ToolResultState.ERROR and "timed out" in result.get_text()
    assert _running_with_argument(session, marker.encode()) == []


async def test_cancellation_kills_sandboxed_processes(session, bwrap_ok):
    marker = f"1000.{uuid.uuid4().int % 10**9}"
    fifo = session.work / "ready"
    os.mkfifo(fifo)
    bash = Bash(sandbox=BubblewrapSandbox())
    task = asyncio.create_task(
        # "up" once the child runs `sleep`: until its exec, a fork shows bash's arguments
        # (this command line among them), so the marker must be a whole argument.
        session.run(
            bash,
            command=f"sleep {marker} & until tr '\\0' '\\n' < /proc/$!/cmdline | "
            f"grep -qx {marker}; do :; done; echo up > {fifo}; wait",
        )
    )
    assert await asyncio.to_thread(fifo.read_text) == "up\n"  # blocks until written
    assert len(_running_with_argument(session, marker.encode())) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _running_with_argument(session, marker.encode()) == []


def test_the_description_tells_the_model_about_the_sandbox(bwrap_ok):
    assert "sandbox" in Bash(sandbox=BubblewrapSandbox()).description
    assert "no network" in Bash(sandbox=BubblewrapSandbox()).description
    assert "sandbox" not in Bash().description


async def test_files_that_run_code_outside_the_sandbox_stay_read_only(session, bwrap_ok):
    # A hook, a git config entry (core.fsmonitor, aliases), a shell profile or an editor
    # task written from inside would run unconfined the next time the user runs git or
    # opens a shell or editor there.
    work = session.work
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / ".bashrc").write_text("# rc\n")
    (work / ".vscode").mkdir()
    (work / ".vscode" / "tasks.json").write_text("{}")
    config = (work / ".git" / "config").read_text()
    bash = Bash(sandbox=BubblewrapSandbox())
    # Git itself works inside: a commit writes objects and refs.
    commit = await session.run(
        bash, command="git -c user.email=a@b.c -c user.name=a commit -q --allow-empty -m x"
    )
    assert commit.state is ToolResultState.SUCCESS, commit.get_text()
    for command in (
        "echo 'touch /tmp/pwned' > .git/hooks/pre-commit",
        "git config core.fsmonitor 'touch /tmp/pwned'",
        "echo 'touch /tmp/pwned' >> .bashrc",
        "echo '{\"tasks\": []}' > .vscode/tasks.json",
        # Moving the directory that holds them would take the protection along.
        "mv .git .git-old && git init -q . && git config core.fsmonitor 'touch /tmp/pwned'",
        "rm -rf .git; git init -q . && git config core.fsmonitor 'touch /tmp/pwned'",
    ):
        result = await session.run(bash, command=command)
        assert result.state is ToolResultState.ERROR, command
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert (work / ".git" / "config").read_text() == config
    assert (work / ".bashrc").read_text() == "# rc\n"
    assert (work / ".vscode" / "tasks.json").read_text() == "{}"


async def test_a_git_file_pointing_elsewhere_stays_read_only(session, bwrap_ok):
    # In a worktree `.git` is a file naming the git dir; rewritten, it could point git at
    # a config the command wrote.
    (session.work / ".git").write_text("gitdir: /nonexistent/worktree\n")
    result = await session.run(
        Bash(sandbox=BubblewrapSandbox()), command="echo 'gitdir: evil' > .git"
    )
    assert result.state is ToolResultState.ERROR
    assert (session.work / ".git").read_text() == "gitdir: /nonexistent/worktree\n"
