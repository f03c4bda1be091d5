"""`tether serve` start-up failures: one line naming the fix, non-zero, before any URL."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

LAUNCH = """
import sys
from importlib.abc import MetaPathFinder

HIDDEN = set(filter(None, sys.argv.pop(1).split(",")))

class Hide(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
from tether.cli import main
sys.exit(main())
"""


def _serve(cwd: Path, *args: str, hide: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, hide, "serve", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port bound but not listening: every connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _one_line_failure(done: subprocess.CompletedProcess[str], *expected: str) -> str:
    output = (done.stdout + done.stderr).strip()
    assert done.returncode != 0, output
    assert len(output.splitlines()) <= 2, output
    assert "http://" not in output and "startup complete" not in output.lower(), output
    assert "Traceback" not in output, output
    for text in expected:
        assert text in output, output
    return output


@pytest.mark.parametrize("workers", ["1", "2"])
def test_unreachable_redis(tmp_path: Path, refused_port: int, workers: str) -> None:
    url = f"redis://127.0.0.1:{refused_port}/0"
    done = _serve(tmp_path, "--storage", url, "--workers", workers)
    _one_line_failure(done, f"Redis at {url} cannot be used", "check that the server is running")


def test_unreachable_postgres(tmp_path: Path, refused_port: int) -> None:
    url = f"postgresql://postgres:secret@127.0.0.1:{refused_port}/tether"
    output = _one_line_failure(
        _serve(tmp_path, "--storage", url, "--workers", "2"),
        "PostgreSQL at",
        "check that the server is running",
    )
    assert "secret" not in output


def test_unknown_storage_scheme(tmp_path: Path) -> None:
    _one_line_failure(_serve(tmp_path, "--storage", "mysql://x"), "a storage URL must be")


def test_port_in_use_suggests_another(tmp_path: Path, busy_port: int) -> None:
    done = _serve(tmp_path, "--port", str(busy_port))
    _one_line_failure(done, f"port {busy_port} on 127.0.0.1 is already in use", "--port")
    assert not (tmp_path / ".tether").exists()  # refused before the storage was made


def test_agents_module_missing(tmp_path: Path) -> None:
    done = _serve(tmp_path, "--agents", "nowhere:AGENTS")
    _one_line_failure(done, "cannot import 'nowhere' for --agents")


def test_agents_module_that_raises(tmp_path: Path) -> None:
    (tmp_path / "broken_agents.py").write_text("AGENTS = {}\nraise RuntimeError('no config')\n")
    done = _serve(tmp_path, "--agents", "broken_agents:AGENTS")
    _one_line_failure(done, "raised RuntimeError: no config", "--debug")


def test_agents_attribute_missing(tmp_path: Path) -> None:
    (tmp_path / "some_agents.py").write_text("OTHER = 1\n")
    done = _serve(tmp_path, "--agents", "some_agents:AGENTS")
    _one_line_failure(done, "module 'some_agents' has no attribute 'AGENTS'")


def test_agent_whose_provider_key_is_missing(tmp_path: Path) -> None:
    (tmp_path / "key_agents.py").write_text(
        "from tether.agent import Agent\n"
        "from tether.model import OpenAIChatModel\n"
        "AGENTS = {'helper': Agent('helper', 'Be brief.', OpenAIChatModel(model='gpt-4o'))}\n"
    )
    done = _serve(tmp_path, "--agents", "key_agents:AGENTS")
    _one_line_failure(done, "agent 'helper'", "OPENAI_API_KEY")


def test_model_flag_without_a_key(tmp_path: Path) -> None:
    done = _serve(tmp_path, "--model", "openai:gpt-4o")
    _one_line_failure(done, "--model openai:gpt-4o", "OPENAI_API_KEY")


def test_model_flag_without_the_provider_package(tmp_path: Path) -> None:
    done = _serve(tmp_path, "--model", "openai:gpt-4o", hide="openai", OPENAI_API_KEY="sk-x")
    _one_line_failure(done, "pip install 'tether[openai]'")


def test_model_flag_with_a_missing_script(tmp_path: Path) -> None:
    _one_line_failure(_serve(tmp_path, "--model", "scripted:missing.yaml"), "missing.yaml")
