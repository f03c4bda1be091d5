"""The docs build with `mkdocs build --strict`, and every public name has a reference entry."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tether

ROOT = Path(__file__).resolve().parents[2]
PAGES = {  # package → its reference page (docs/reference/<page>.md)
    "tether": "tether",
    "tether.agent": "agent",
    "tether.state": "state",
    "tether.event": "event",
    "tether.message": "message",
    "tether.tool": "tool",
    "tether.tool.builtin": "tool-builtin",
    "tether.permission": "permission",
    "tether.shell": "shell",
    "tether.context": "context",
    "tether.plugin": "plugin",
    "tether.mcp": "mcp",
    "tether.skill": "skill",
    "tether.model": "model",
    "tether.credential": "credential",
    "tether.app.storage": "storage",
    "tether.app.server": "server",
    "tether.app.web": "server",
    "tether.middleware": "middleware",
    "tether.tracing": "tracing",
    "tether.errors": "errors",
    "tether.testing": "testing",
    "tether.testing.storage_conformance": "testing",
    "tether.testing.event_log_conformance": "testing",
    "tether.cli": "cli",
    "tether.cli.chat": "cli",
}
ALIASES = ("tether.model.",)
"""Modules whose names are re-exported by a package above (documented there)."""


def public_modules() -> list[str]:
    names = ["tether"]
    for info in pkgutil.walk_packages(tether.__path__, "tether."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if getattr(importlib.import_module(info.name), "__all__", None):
            names.append(info.name)
    return names


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return target


def test_every_public_package_has_a_reference_page() -> None:
    missing = [m for m in public_modules() if m not in PAGES and not m.startswith(ALIASES)]
    assert missing == [], f"add a docs/reference page and a PAGES entry for {missing}"
    for page in PAGES.values():
        assert (ROOT / "docs" / "reference" / f"{page}.md").is_file()


def rendered(site: Path, module: str) -> str:
    return (site / "reference" / PAGES[module] / "index.html").read_text(encoding="utf-8")


@pytest.mark.long
@pytest.mark.parametrize("module", sorted(PAGES))
def test_every_name_in_all_is_rendered(site: Path, module: str) -> None:
    html = rendered(site, module)
    names = [n for n in importlib.import_module(module).__all__ if not n.startswith("__")]
    missing = [n for n in names if f'id="{module}.{n}"' not in html]
    if module == "tether":  # a re-export may be documented only at its package's page
        everywhere = "".join(rendered(site, m) for m in PAGES)
        missing = [n for n in missing if not re.search(rf'id="tether\.[a-z_.]+\.{n}"', everywhere)]
    assert missing == [], f"{module}: no rendered entry for {missing}"


def test_the_version_is_on_the_top_page(site: Path) -> None:
    assert "__version__" in rendered(site, "tether")


@pytest.mark.parametrize("module", [m for m in public_modules() if m.startswith(ALIASES)])
def test_names_of_provider_modules_are_rendered_under_tether_model(site: Path, module: str) -> None:
    html = (site / "reference" / "model" / "index.html").read_text(encoding="utf-8")
    for name in importlib.import_module(module).__all__:
        assert f'id="tether.model.{name}"' in html


def test_search_ranks_concept_pages_above_decision_logs(site: Path) -> None:
    import json

    docs = json.loads((site / "search" / "search_index.json").read_text())["docs"]
    boosts = {d["location"].split("#")[0]: d.get("boost", 1) for d in docs}
    decisions = {k: v for k, v in boosts.items() if k.startswith("decisions")}
    concepts = {k: v for k, v in boosts.items() if k.startswith("concepts/")}
    assert decisions and concepts
    assert max(decisions.values()) < 1 < min(concepts.values())


def test_the_agent_page_opens_with_agent(site: Path) -> None:
    ids = re.findall(r'id="tether\.agent\.(\w+)"', rendered(site, "tether.agent"))
    assert ids[:3] == ["Agent", "ReActConfig", "ModelConfig"]
