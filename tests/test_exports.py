"""Every package's `__all__` is sorted and complete, and the seed samples' imports resolve."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tether

PACKAGES = sorted(
    name
    for _, name, is_pkg in pkgutil.walk_packages(tether.__path__, "tether.")
    if is_pkg and ".providers" not in name
) + ["tether"]

SEED_IMPORTS = {
    "tether.agent": ["Agent", "ContextConfig"],
    "tether.model": ["DashScopeChatModel", "ScriptedChatModel"],
    "tether.credential": ["DashScopeCredential"],
    "tether.tool": ["Toolkit", "Bash", "Edit", "Grep", "Read", "Write"],
    "tether.mcp": ["MCPClient", "HttpMCPConfig"],
    "tether.message": ["UserMsg", "ToolResultBlock", "TextBlock", "ToolResultState"],
    "tether.event": [
        "RequireUserConfirmEvent",
        "ConfirmResult",
        "UserConfirmResultEvent",
        "RequireExternalExecutionEvent",
        "ExternalExecutionResultEvent",
        "EventType",
    ],
    "tether.state": ["AgentState"],
    "tether.app.storage": ["RedisStorage"],
}


def _isort_key(name: str) -> tuple[int, str]:
    # the order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions
    if name.isupper():
        return (0, name)
    return (1 if name[:1].isupper() else 2, name)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_public_names_are_listed(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert list(exported) == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    for item in exported:
        assert hasattr(module, item), f"{name}.__all__ lists {item!r}, which does not exist"
    public = {
        k
        for k, v in vars(module).items()
        if not k.startswith("_") and getattr(v, "__module__", "").startswith(name + ".")
    }
    assert public <= set(exported), (
        f"{name} exposes {sorted(public - set(exported))} without listing them"
    )


@pytest.mark.parametrize("module, names", sorted(SEED_IMPORTS.items()))
def test_seed_imports_resolve(module: str, names: list[str]) -> None:
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is not None


def test_every_error_is_a_tether_error_with_a_docstring() -> None:
    from tether import errors

    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.TetherError) and cls.__doc__
