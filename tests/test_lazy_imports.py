"""A failure while a package loads a name lazily shows its real cause, not "cannot import name"."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether import _lazy


@pytest.fixture
def broken_module(tmp_path: Path) -> Iterator[str]:
    name = "tether_test_broken_lazy"
    (tmp_path / f"{name}.py").write_text(
        "import types\ntypes.SimpleNamespace().needs_newer_dependency\nThing = 1\n"
    )
    sys.path.insert(0, str(tmp_path))
    yield name
    sys.path.remove(str(tmp_path))
    sys.modules.pop(name, None)


def test_an_attribute_error_while_importing_becomes_an_import_error_with_its_cause(
    broken_module: str,
) -> None:
    with pytest.raises(ImportError, match="needs_newer_dependency") as info:
        _lazy.load("tether.example", "Thing", broken_module)
    assert isinstance(info.value.__cause__, AttributeError)
    assert "tether.example.Thing" in str(info.value)


def test_from_import_through_a_package_getattr_keeps_the_cause(
    broken_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.app.storage as storage

    monkeypatch.setitem(storage._HOMES, "Thing", broken_module)
    with pytest.raises(ImportError, match="needs_newer_dependency"):
        from tether.app.storage import Thing  # type: ignore[attr-defined]  # noqa: F401


def test_a_missing_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _lazy.load("tether.example", "NoSuchName", "tether.errors")
