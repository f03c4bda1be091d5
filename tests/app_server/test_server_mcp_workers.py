"""An MCP server's question asked during a reply on one `tether serve` worker, answered
through another worker (two processes on one Redis or PostgreSQL, no sticky sessions)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from svc_helpers import (
    SSE,
    ProcessServer,
    new_session,
    plan,
    server_env,
    shared_storage,
    sse,
)

KEY = "sk-mcp-workers-4e1b7d"
ASKS = {"mcp_elicitation_request", "mcp_sampling_request"}


@pytest.fixture(scope="module", params=["redis", "postgres"])
def workers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[ProcessServer]]:
    tmp = tmp_path_factory.mktemp("mcpworkers")
    keys = tmp / "keys.txt"
    keys.write_text(f"{KEY} alice\n")
    with shared_storage(request.param, "tsvc-mcp") as storage:
        args = ["--agents", "mcp_svc:agents", *storage.args, "--api-keys-file", str(keys)]
        servers = [ProcessServer(args, server_env(tmp), tmp / f"w{i}.log") for i in range(2)]
        try:
            for server in servers:
                server.start()
            yield servers
        finally:
            for server in servers:
                server.stop()


def _client(server: ProcessServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {KEY}"}, timeout=60)


def _ask_through_the_other(
    workers: list[ProcessServer], tool: str, args: dict[str, object], answer: dict[str, object]
) -> tuple[dict[str, object], str]:
    """Run `tool` on worker 0; answer its question on worker 1; (the question, the result)."""
    with _client(workers[0]) as a, _client(workers[1]) as b:
        sid = new_session(a, "asker")
        assert a.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"}).is_success
        asked: dict[str, object] = {}
        results: list[str] = []
        body = plan([[f"mcp__feat__{tool}", args]], "done")
        with a.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
            for frame in sse(r):
                if frame.event == "custom" and frame.data["name"] in ASKS:
                    asked = frame.data["data"]
                    path = f"/v1/sessions/{sid}/mcp-requests/{asked['request_id']}"
                    wrong = {"action": "accept"} if "approved" in answer else {"approved": True}
                    assert b.post(path, json=wrong).status_code == 409  # the other kind
                    ok = b.post(path, json=answer)
                    assert ok.status_code == 202, ok.text
                    assert a.post(path, json=answer).status_code == 409  # answered already
                if frame.event == "tool_result_end":
                    results.append(str(frame.data["tool_result"]["output"]))
        after = b.post(f"/v1/sessions/{sid}/mcp-requests/{asked['request_id']}", json=answer)
        assert after.status_code == 409  # the call ended: nothing waits any more
    [result] = results
    return asked, result


def test_an_elicitation_is_answered_on_another_worker(workers: list[ProcessServer]) -> None:
    answer = {"action": "accept", "content": {"name": "Ada"}}
    asked, result = _ask_through_the_other(workers, "ask", {}, answer)
    assert asked["server"] == "feat" and asked["message"] == "What is your name?"
    assert "hello Ada x3" in result


def test_a_sampling_request_is_confirmed_on_another_worker(
    workers: list[ProcessServer],
) -> None:
    asked, result = _ask_through_the_other(
        workers, "sample", {"question": "6*7?"}, {"approved": True}
    )
    assert "6*7?" in str(asked["text"])
    assert "model said: echo: 6*7?" in result


def test_a_refused_sampling_request_on_another_worker(workers: list[ProcessServer]) -> None:
    _, result = _ask_through_the_other(workers, "sample", {"question": "q"}, {"approved": False})
    assert "model said" not in result
