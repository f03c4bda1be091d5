"""`tether demo` runs the main job offline, end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_runs_offline(tmp_path: Path) -> None:
    db, notes = tmp_path / "s.db", tmp_path / "notes"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tether.cli._main",
            "demo",
            "--db",
            str(db),
            "--workdir",
            str(notes),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert "waiting for confirmation" in out.stdout
    assert "without asking" in out.stdout
    assert sorted(p.name for p in notes.iterdir()) == ["motto.md", "second.md"]
    assert db.exists()
    assert "↳ success []" in out.stdout  # an empty list result is shown as JSON, not dropped


def test_demo_leaves_no_temporary_folders(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = subprocess.run(
        [sys.executable, "-m", "tether.cli._main", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "COLUMNS": "200",
            "PATH": "/usr/bin:/bin",
            "TMPDIR": str(scratch),
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        },
    )
    assert out.returncode == 0, out.stderr
    assert "removed now" in out.stdout
    assert list(scratch.iterdir()) == []
