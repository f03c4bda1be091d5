from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from terminal import Terminal, chat_env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def script(tmp_path: Path) -> Callable[[list[dict]], str]:
    """Write a model script; returns the `--model` value."""
    counter = iter(range(1000))

    def write(steps: list[dict]) -> str:
        path = tmp_path / f"script{next(counter)}.yaml"
        path.write_text(yaml.safe_dump(steps))
        return f"scripted:{path}"

    return write


@pytest.fixture
def terminal(home: Path, project: Path) -> Iterator[Callable[..., Terminal]]:
    """Start `tether chat` in a pty; every one started is closed at the end."""
    started: list[Terminal] = []

    def start(*args: str, **env: str) -> Terminal:
        term = Terminal(list(args), project, chat_env(home, **env))
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()
