"""The service tests' own helpers: a server that failed to start is the error reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from svc_helpers import ProcessServer, server_env


def test_stop_before_start_does_nothing(tmp_path: Path) -> None:
    ProcessServer([], server_env(tmp_path), tmp_path / "never.log").stop()


def test_a_failed_start_is_the_error_seen(tmp_path: Path) -> None:
    """The first worker fails; stopping both (the second never started) keeps its error."""
    env = server_env(tmp_path)
    servers = [
        ProcessServer(["--storage", "mysql://x"], env, tmp_path / f"w{i}.log") for i in range(2)
    ]
    with pytest.raises(RuntimeError, match="did not report its port"):
        try:
            for server in servers:
                server.start()
        finally:
            for server in servers:
                server.stop()
    assert "a storage URL must be" in servers[0].log_path.read_text()
