import asyncio
import os
import time

import pytest

from tether.message import ToolResultBlock, ToolResultState
from tether.state import AgentState
from tether.tool import Bash


def _output(result: ToolResultBlock) -> str:
    return result.get_text().rsplit("\n\n[", 1)[0]


async def test_cd_persists_to_the_next_call(session):
    (session.work / "sub").mkdir()
    bash = Bash()
    first = await session.run(bash, command="cd sub && pwd")
    assert _output(first) == str(session.work / "sub")
    second = await session.run(bash, command="pwd")
    assert _output(second) == str(session.work / "sub")
    assert session.state.tool_state["Bash"]["cwd"] == str(session.work / "sub")


async def test_working_directory_survives_save_and_resume(session):
    (session.work / "sub").mkdir()
    await session.run(Bash(), command="cd sub")
    session.state = AgentState.model_validate_json(session.state.model_dump_json())
    resumed = await session.run(Bash(), command="pwd")
    assert _output(resumed) == str(session.work / "sub")


async def test_exit_code_is_reported_and_cd_before_exit_sticks(session):
    (session.work / "sub").mkdir()
    result = await session.run(Bash(), command="cd sub; echo out; echo err >&2; exit 3")
    assert result.state is ToolResultState.ERROR
    assert result.get_text() == "out\nerr\n\n[exit code 3]"
    assert result.metadata["exit_code"] == 3
    assert session.state.tool_state["Bash"]["cwd"] == str(session.work / "sub")
    ok = await session.run(Bash(), command="true")
    assert ok.state is ToolResultState.SUCCESS
    assert ok.get_text() == "(no output)\n\n[exit code 0]"


async def test_syntax_errors_are_reported_not_raised(session):
    result = await session.run(Bash(), command="if then fi (")
    assert result.state is ToolResultState.ERROR
    assert "syntax error" in result.get_text()


async def test_a_deleted_working_directory_falls_back_to_the_work_dir(session):
    sub = session.work / "sub"
    sub.mkdir()
    await session.run(Bash(), command="cd sub")
    sub.rmdir()
    result = await session.run(Bash(), command="pwd")
    assert "no longer exists" in result.get_text()
    assert _output(result).endswith(str(session.work))


async def test_timeout_kills_the_command_and_its_children(session):
    started = time.monotonic()
    result = await session.run(Bash(), command="sleep 1000 & echo $$ $!; sleep 1000", timeout=500)
    assert time.monotonic() - started < 30
    assert result.state is ToolResultState.ERROR
    assert "timed out after 500 ms" in result.get_text()
    assert result.metadata["exit_code"] is None
    pids = [int(p) for p in result.get_text().split("\n")[0].split()]
    assert len(pids) == 2
    assert not any(session.pid_alive(pid) for pid in pids)


async def test_cancellation_kills_the_process_group(session, tmp_path):
    fifo = tmp_path / "pids"
    os.mkfifo(fifo)
    command = f"sleep 1000 & sleep 1000 & echo $$ $(jobs -p) > {fifo}; wait"
    task = asyncio.create_task(session.run(Bash(), command=command))

    def read_pids() -> list[int]:
        with open(fifo) as f:  # blocks until the command has written its pids
            return [int(p) for p in f.read().split()]

    pids = await asyncio.to_thread(read_pids)
    assert len(pids) == 3 and all(session.pid_alive(pid) for pid in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not any(session.pid_alive(pid) for pid in pids)


async def test_background_processes_do_not_outlive_the_command(session):
    result = await session.run(Bash(), command="sleep 1000 & echo $!", timeout=60_000)
    assert result.state is ToolResultState.SUCCESS
    assert not session.pid_alive(int(_output(result)))


async def test_50_mb_of_output_stays_within_the_cap(session):
    command = "echo START; head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END"
    result = await session.run(Bash(max_output_chars=30_000), command=command)
    text = result.get_text()
    assert len(text) < 30_000 + 200
    assert text.startswith("START\nxxx")
    assert text.endswith("xxx\nEND\n\n[exit code 0]")
    omitted = 50_000_000 + len("START\n\nEND\n") - 30_000
    assert f"[... {omitted} bytes of output omitted ...]" in text


async def test_secrets_are_filtered_from_the_environment(session, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("DB_PASSWORD", "hunter2")
    monkeypatch.setenv("TETHER_REDIS_URL", "redis://secret")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    result = await session.run(Bash(env={"ADDED": "yes"}), command="env")
    text = result.get_text()
    for secret in ("sk-secret", "ghp-secret", "hunter2", "redis://secret"):
        assert secret not in text
    assert "PLAIN_SETTING=visible" in text and "ADDED=yes" in text


async def test_timeout_is_validated(session):
    result = await session.run(Bash(), command="true", timeout=600_001)
    assert result.state is ToolResultState.ERROR and "`timeout`" in result.get_text()


async def test_stdin_is_closed(session):
    result = await session.run(Bash(), command="cat; echo done", timeout=10_000)
    assert _output(result) == "done"


async def test_cancellation_while_the_shell_starts_kills_its_group(session, tmp_path, monkeypatch):
    # On a busy loop the shell can start children before asyncio has connected its output
    # pipe; a cancellation landing then used to kill only the shell. Hold the connection
    # back until the children run and the call is cancelled.
    fifo = tmp_path / "pids"
    os.mkfifo(fifo)
    loop = asyncio.get_running_loop()
    release = asyncio.Event()
    connect = loop.connect_read_pipe

    async def held_connect(*args, **kwargs):
        await release.wait()
        return await connect(*args, **kwargs)

    monkeypatch.setattr(loop, "connect_read_pipe", held_connect)
    command = f"sleep 1000 & sleep 1000 & echo $$ $(jobs -p) > {fifo}; wait"
    task = asyncio.create_task(session.run(Bash(), command=command))

    def read_pids() -> list[int]:
        with open(fifo) as f:  # blocks until the command has written its pids
            return [int(p) for p in f.read().split()]

    pids = await asyncio.to_thread(read_pids)
    assert len(pids) == 3 and all(session.pid_alive(pid) for pid in pids)
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not any(session.pid_alive(pid) for pid in pids)


async def test_cancellation_logs_no_asyncio_warning(session, tmp_path, caplog):
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    for _ in range(20):  # a race: each round has a fair chance to show it
        task = asyncio.create_task(session.run(Bash(), command=f"echo up > {fifo}; sleep 1000"))
        assert await asyncio.to_thread(fifo.read_text) == "up\n"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


async def test_the_command_sees_no_positional_parameters(session):
    result = await session.run(Bash(), command='echo "[$#][$1]"; for x; do echo "arg $x"; done')
    assert _output(result) == "[0][]"


async def test_writes_to_the_cwd_channel_do_not_corrupt_the_saved_directory(session):
    result = await session.run(Bash(), command='echo /etc >&"$TETHER_FD"; echo done')
    assert result.state is ToolResultState.SUCCESS
    assert session.state.tool_state["Bash"]["cwd"] == str(session.work)
    assert "no longer exists" not in (await session.run(Bash(), command="pwd")).get_text()


async def test_death_by_signal_is_named(session):
    result = await session.run(Bash(), command="kill -9 $$")
    assert result.state is ToolResultState.ERROR
    assert result.metadata["exit_code"] == -9
    assert "killed by signal 9 (SIGKILL)" in result.get_text()


async def test_command_reading_stdin_gets_eof_at_once(session):
    started = time.monotonic()
    result = await session.run(
        Bash(), command="read -r line; echo rc=$?; head -c 5 /dev/stdin | wc -c", timeout=20_000
    )
    assert _output(result) == "rc=1\n0"
    assert time.monotonic() - started < 10


async def test_a_shell_that_cannot_start_is_an_error_and_leaks_no_descriptor(session):
    await session.run(Bash(shell="/nonexistent/bash"), command="true")  # warm up the pools
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        result = await session.run(Bash(shell="/nonexistent/bash"), command="true")
        assert result.state is ToolResultState.ERROR
        assert "No such file" in result.get_text()
    assert len(os.listdir("/proc/self/fd")) == before
