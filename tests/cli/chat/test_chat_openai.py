"""The interactive flow against a local OpenAI-compatible server (the real `openai` SDK)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "model_providers"))

from provider_replay import ReplayServer
from provider_wire import openai_reply
from test_chat_headless import chat


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """The replay server on its own event loop, in a thread, while the pty test blocks."""
    replay = ReplayServer()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(replay.start(), loop).result(10)
    try:
        yield replay
    finally:
        asyncio.run_coroutine_threadsafe(replay.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _bash_call(call_id: str, command: str) -> list[tuple]:
    arguments = json.dumps({"command": command})
    half = len(arguments) // 2
    return [
        ("text", "Running it."),
        ("call", 0, call_id, "Bash"),
        ("args", 0, arguments[:half]),
        ("args", 0, arguments[half:]),
        ("usage", 1200, 30),
    ]


def test_openai_streaming_tool_calls_ask_then_always(
    terminal, server: ReplayServer, project: Path
) -> None:
    server.add(
        openai_reply(_bash_call("call_1", "touch first.txt")),
        openai_reply([("text", "Created **first.txt**."), ("usage", 1300, 10)]),
        openai_reply(_bash_call("call_2", "touch second.txt")),
        openai_reply([("text", "Created second.txt too."), ("usage", 1400, 10)]),
    )
    term = terminal(
        "--model", "openai:gpt-4o", OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY="sk-test"
    )
    term.prompt_ready(1)
    term.type("create first.txt")
    term.wait_for(r"Allow Bash touch first.txt\? \[y\]es / \[a\]lways \(Bash\(touch:\*\)\)")
    term.key("a")
    term.wait_for("Created first.txt.")
    screen = term.wait_for(
        r"openai:gpt-4o · context 1\.3k/128\.0k · 2\.5k tokens this session · mode default"
    )
    assert "● Bash(touch first.txt)" in screen
    term.type("now second.txt")
    term.wait_for("Created second.txt too.")
    assert term.count("Allow Bash") == 1
    term.prompt_ready(3)
    term.type("/cost")
    term.wait_for("input tokens:  5100")
    # 5100 input and 80 output tokens at gpt-4o's shipped $2.50 / $10.00 per million
    screen = term.wait_for(r"gpt-4o: \$2\.50 input / \$10\.00 output per million tokens")
    assert "cost:          $0.01355" in screen
    assert term.leave() == 0
    server.assert_done()
    assert (project / "first.txt").exists() and (project / "second.txt").exists()
    second = server.requests[1].json()
    tool_turn = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_turn and tool_turn[0]["tool_call_id"] == "call_1"
    assert second["stream"] is True


def test_headless_json_reports_what_the_run_cost(home, project, server: ReplayServer) -> None:
    server.add(openai_reply([("text", "Hi."), ("usage", 1000, 100)]))
    done = chat(
        home, project, "-p", "hi", "--model", "openai:gpt-4o", "--output-format", "json",
        OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY="sk-test",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["usage"] == {"input_tokens": 1000, "output_tokens": 100}
    assert result["total_cost_usd"] == pytest.approx(1000 * 2.5e-6 + 100 * 10e-6)
    server.assert_done()
