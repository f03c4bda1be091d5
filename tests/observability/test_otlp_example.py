"""The README's OTLP snippet, run as a program against a real local OTLP/HTTP receiver."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from otlp_receiver import Receiver, attributes, receiving

EXAMPLE = Path(__file__).parents[2] / "examples" / "otel" / "otlp_tracing.py"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as server:
        yield server


def test_the_snippet_sends_the_reply_spans_over_otlp(receiver: Receiver) -> None:
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Traced!"
    assert [path for path, _ in receiver.requests] == ["/v1/traces"]
    spans = receiver.spans()
    assert sorted(s.name for s in spans) == ["chat scripted", "invoke_agent helper"]
    root = next(s for s in spans if s.name == "invoke_agent helper")
    chat = next(s for s in spans if s.name == "chat scripted")
    assert chat.parent_span_id == root.span_id and chat.trace_id == root.trace_id
    assert attributes(root)["gen_ai.operation.name"] == "invoke_agent"
    assert attributes(root)["gen_ai.agent.name"] == "helper"
