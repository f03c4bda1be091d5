"""The service over real HTTP: `traceparent` parents the reply's span; `/metrics` moves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from otlp_receiver import Receiver, attributes, receiving
from prometheus_client.parser import text_string_to_metric_families

HERE = Path(__file__).parent
KEY = "key-obs-0123456789"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as server:
        yield server


@pytest.fixture
def service(tmp_path: Path, receiver: Receiver) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    env = {**os.environ, "TETHER_LOG": "info"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "serve_observed.py"),
            str(tmp_path / "s.db"),
            receiver.url,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    said = process.stdout.readline()  # "PORT <n>": the port it bound (empty if it died)
    assert said.startswith("PORT "), said + (process.stderr.read() if process.stderr else "")
    url = f"http://127.0.0.1:{int(said.split()[1])}"
    deadline = time.monotonic() + 30
    while True:  # wait for the port to answer (the process starting), not for a duration
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the service did not start"
        time.sleep(0.05)
    try:
        yield url, process
    finally:
        process.terminate()
        process.communicate(timeout=10)  # reaps it and closes its pipes


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def total(text: str, name: str, **labels: str) -> float:
    return sum(
        value
        for (sample, have), value in samples(text).items()
        if sample == name and all((k, v) in have for k, v in labels.items())
    )


def test_traceparent_parents_the_reply_and_metrics_move(service, receiver) -> None:
    url, process = service
    headers = {"authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        sid = client.post("/v1/sessions", json={"agent_id": "bot"}).json()["session_id"]
        before = client.get("/metrics")
        assert before.status_code == 200
        assert before.headers["content-type"].startswith("text/plain")
        replies_before = total(before.text, "tether_replies_total", tether_reply_outcome="finished")
        reply = client.post(
            f"/v1/sessions/{sid}/replies",
            json={"input": {"role": "user", "content": "hi"}},
            headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"},
        )
        assert reply.status_code == 200, reply.text
        spans = receiver.wait_for("invoke_agent bot")
        after = client.get("/metrics").text
    root = next(s for s in spans if s.name == "invoke_agent bot")
    assert root.trace_id.hex() == TRACE_ID
    assert root.parent_span_id.hex() == PARENT_ID
    assert attributes(root)["gen_ai.conversation.id"]
    chat = next(s for s in receiver.wait_for("chat scripted") if s.name == "chat scripted")
    assert chat.parent_span_id == root.span_id
    assert (
        total(after, "tether_replies_total", tether_reply_outcome="finished") == replies_before + 1
    )
    assert total(after, "gen_ai_client_operation_duration_seconds_count") >= 1
    process.terminate()
    _, stderr = process.communicate(timeout=10)
    lines = [line for line in stderr.splitlines() if "tether.server.request" in line]
    assert any(
        f"POST /v1/sessions/{sid}/replies 200" in line
        and "user_id=obs-user" in line
        and f"session_id={sid}" in line
        for line in lines
    ), stderr[-2000:]
    assert KEY not in stderr


def test_a_request_without_traceparent_starts_its_own_trace(service, receiver) -> None:
    url, _ = service
    with httpx.Client(
        base_url=url, headers={"authorization": f"Bearer {KEY}"}, timeout=30
    ) as client:
        sid = client.post("/v1/sessions", json={"agent_id": "bot"}).json()["session_id"]
        assert (
            client.post(
                f"/v1/sessions/{sid}/replies", json={"input": {"role": "user", "content": "hi"}}
            ).status_code
            == 200
        )
    root = next(s for s in receiver.wait_for("invoke_agent bot") if s.name == "invoke_agent bot")
    assert root.parent_span_id == b""
