"""The permission tests' workspace: a real work dir on disk with `$HOME` at its fake home.

A module that needs more traps overrides `ws` (or `module_ws`) with a fixture of the same
name that takes this one and adds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from permission_workspace import Workspace, make_workspace


def _isolate(workspace: Workspace, mp: pytest.MonkeyPatch) -> Workspace:
    mp.setenv("HOME", str(workspace.home))  # `~` leads to the fake credentials
    mp.delenv("CDPATH", raising=False)  # `cd x` means ./x, whatever the caller's shell set
    return workspace


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A fresh workspace for each test."""
    return _isolate(make_workspace(tmp_path), monkeypatch)


@pytest.fixture(scope="module")
def module_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """One workspace for a whole module (property tests that run many examples on it)."""
    with pytest.MonkeyPatch.context() as mp:
        yield _isolate(make_workspace(tmp_path_factory.mktemp("ws")), mp)
