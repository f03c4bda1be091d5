"""The command line's basics: `--version`, `python -m tether`, errors as one line."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

import tether as tether_package
from tether.cli import _main as cli_main
from tether.errors import ConfigError


def tether(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_version_is_the_package_version() -> None:
    out = tether("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"tether {tether_package.__version__}"
    root = Path(__file__).parents[2]
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert declared == tether_package.__version__
    # the docs' "new in X" notes name the release being made, the version's base
    for page in ("how-to/terminal.md", "how-to/serving.md"):
        for found in re.findall(r"new in (\d+\.\d+\.\d+)", (root / "docs" / page).read_text()):
            assert tether_package.__version__.startswith(found), page


def test_python_dash_m_tether_is_the_command() -> None:
    out = tether("--help")
    assert out.returncode == 0
    assert "demo" in out.stdout and "--version" in out.stdout


@pytest.mark.parametrize("where", [["--db", "/proc/x.db"], ["--debug", "--db", "/proc/x.db"]])
def test_an_unusable_db_is_one_line_and_a_failure(where: list[str], tmp_path: Path) -> None:
    args = ["demo", *where, "--workdir", str(tmp_path / "notes")]
    out = tether(*args)
    assert out.returncode == 1
    if "--debug" in where:
        assert "Traceback" in out.stderr and "StorageUnavailableError" in out.stderr
        return
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("tether demo: error: the SQLite database at '/proc/x.db'")
    assert "Traceback" not in out.stderr
    assert out.stdout == ""  # it failed before the demo started


def test_debug_is_accepted_after_the_subcommand(tmp_path: Path) -> None:
    out = tether("demo", "--db", "/proc/x.db", "--debug", "--workdir", str(tmp_path))
    assert out.returncode == 1
    assert "Traceback" in out.stderr


def test_a_missing_command_is_a_usage_error() -> None:
    out = tether()
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "COMMAND" in out.stderr


def returns_runner(sub: argparse._SubParsersAction) -> Callable[[argparse.Namespace], int]:
    sub.add_parser("hello").add_argument("--name", default="world")
    return lambda args: print(f"hello {args.name}") or 0


def sets_run(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("fail").set_defaults(run=lambda args: (_ for _ in ()).throw(ConfigError("nope")))


def test_both_registration_styles_work_and_errors_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        cli_main,
        "SUBCOMMANDS",
        [*cli_main.SUBCOMMANDS, f"{__name__}:returns_runner", f"{__name__}:sets_run"],
    )
    assert cli_main.main(["hello", "--name", "ada"]) == 0
    assert capsys.readouterr().out == "hello ada\n"
    assert cli_main.main(["fail"]) == 1
    assert capsys.readouterr().err == "tether fail: error: nope\n"
    with pytest.raises(ConfigError):
        cli_main.main(["fail", "--debug"])
