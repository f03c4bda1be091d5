"""What a test needs is skipped with the reason when absent, and fails under TETHER_REQUIRE_*."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def pytest_run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    src = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": src, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("required", ["0", "1"])
def test_no_redis_skips_with_the_reason_or_fails_when_required(required: str) -> None:
    env = {"TETHER_TEST_REDIS_URL": "redis://127.0.0.1:9/13", "TETHER_REQUIRE_REDIS": required}
    out = pytest_run("tests/test_examples.py", "-k", "redis", env=env)
    if required == "1":
        assert out.returncode == 1, out.stdout[-2000:]
        assert "TETHER_REQUIRE_REDIS=1 is set" in out.stdout
    else:
        assert out.returncode == 0, out.stdout[-2000:]
        assert "1 skipped" in out.stdout and "no Redis server answers" in out.stdout


def path_without(tmp_path: Path, program: str) -> str:
    """A PATH with every program of this one but `program` (Debian merges /bin into /usr)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = folder / entry.name
            # lexists: a broken symlink in PATH (seen twice) must not be linked again
            if entry.name != program and not os.path.lexists(link):
                link.symlink_to(entry.path)
    return str(folder)


def test_path_without_tolerates_broken_symlinks(tmp_path: Path, monkeypatch) -> None:
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "dangling").symlink_to(odd / "nowhere")
    (odd / "bwrap").write_text("")
    monkeypatch.setenv("PATH", os.pathsep.join([str(odd), str(odd), "/usr/bin"]))
    folder = Path(path_without(tmp_path, "bwrap"))
    assert os.path.islink(folder / "dangling") and not (folder / "bwrap").exists()


@pytest.mark.parametrize("required", ["0", "1"])
def test_a_skip_blaming_bubblewrap_fails_when_required(tmp_path: Path, required: str) -> None:
    env = {"PATH": path_without(tmp_path, "bwrap"), "TETHER_REQUIRE_BWRAP": required}
    out = pytest_run("tests/tool_builtin/test_builtin_sandbox.py", env=env)
    if required == "1":
        assert out.returncode == 1
        assert "TETHER_REQUIRE_BWRAP=1 is set" in out.stdout
    else:
        assert out.returncode == 0, out.stdout[-2000:]
        assert "skipped" in out.stdout and "bubblewrap" in out.stdout
