"""Leaves never import the trunk; `import tether` loads no optional SDK; the contracts hold."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from import_graph import _imports, build, cycles, parse

SRC = Path(__file__).parent.parent / "src" / "tether"
LEAVES = [
    "message",
    "event",
    "model",
    "tool",
    "mcp",
    "skill",
    "plugin",
    "permission",
    "context",
    "middleware",
    "state",
    "credential",
    "_loop",
    "tracing",
]
TRUNK = ("tether.agent", "tether.app", "tether.cli")


def declared_private_imports(init: Path) -> set[str]:
    """The private modules of other packages a package's docstring says it may import."""
    doc = ast.get_docstring(parse(init)) or ""
    if "no others;" not in doc:
        return set()
    listed = doc.split("no others;", 1)[1].splitlines()
    return {line.strip()[2:] for line in listed if line.strip().startswith("- tether.")}


LOOP_MAY_IMPORT = declared_private_imports(SRC / "_loop" / "__init__.py")
MAY_IMPORT = {
    str(init.parent.relative_to(SRC)) + "/": declared_private_imports(init)
    for init in SRC.rglob("__init__.py")
    if declared_private_imports(init)
}
"""Folder (`_loop/`, `app/storage/`) -> the private modules its docstring lists."""
# Private cross-package imports outside the loop's declared list: none is left; a new one
# fails.
KNOWN_PRIVATE: set[tuple[str, str]] = set()
# No package cycle is left (`PermissionRule` lives in the root helper `tether._rule`, below
# `message`); a new cycle fails.
KNOWN_CYCLES: list[list[str]] = []
# Function-level imports that would close a package cycle if they were module level: none.
# The Toolkit names the skill-folder loader and loads it by name (`tether._lazy`), and the
# plugin scheduler is built by `Plugin.scheduler_for`, so `tool/` imports neither.
KNOWN_LAZY_CYCLE_BREAKERS: set[tuple[str, str]] = set()
GROUND = ["message", "permission", "middleware", "credential", "shell"]


def runtime_imports(path: Path) -> list[str]:
    """Module-level imports, skipping `if TYPE_CHECKING:` blocks."""
    tree = parse(path)
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
                found.append(sub.module)
            elif isinstance(sub, ast.Import):
                found.extend(a.name for a in sub.names)
    return found


def test_leaves_never_import_the_trunk() -> None:
    offenders = []
    for leaf in LEAVES:
        for path in (SRC / leaf).rglob("*.py"):
            for module in runtime_imports(path):
                if module.startswith(TRUNK):
                    offenders.append(f"{path.relative_to(SRC)} imports {module}")
    assert offenders == []


def test_ground_level_packages_import_nothing_above_them() -> None:
    above = (
        "tether.event",
        "tether.tool",
        "tether.model",
        "tether.plugin",
        "tether.mcp",
        "tether.skill",
        "tether.context",
        "tether.state",
        "tether._loop",
        "tether.tracing",
        *TRUNK,
    )
    offenders = []
    for pkg in GROUND:
        for path in (SRC / pkg).rglob("*.py"):
            tree = parse(path)
            for node in tree.body:  # module level only; lazy imports inside functions are allowed
                if (
                    isinstance(node, ast.ImportFrom)
                    and node.module
                    and node.module.startswith(above)
                ):
                    offenders.append(f"{path.relative_to(SRC)} imports {node.module}")
    assert offenders == []


def test_tool_does_not_import_mcp_skill_or_plugin_at_module_level() -> None:
    for path in (SRC / "tool").glob("_*.py"):
        tree = parse(path)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(
                    ("tether.mcp", "tether.skill", "tether.plugin")
                ), path


def test_import_tether_loads_no_optional_sdk() -> None:
    code = (
        "import sys, tether, tether.tool, tether.model, tether.agent, tether.permission;"
        "heavy = ['openai', 'anthropic', 'dashscope', 'ollama', 'google.genai', 'redis', 'mcp',"
        " 'fastapi', 'tree_sitter', 'aiosqlite', 'httpx', 'rich'];"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_package_import_graph_has_no_new_cycle_and_prints() -> None:
    graph = build()
    for pkg in sorted(graph.edges):
        print(f"{pkg:12} -> {', '.join(sorted(graph.edges[pkg]))}")
    assert cycles(graph.edges) == KNOWN_CYCLES


def test_the_cycle_check_sees_a_new_cycle() -> None:
    # The graph as it is, plus one upward edge a careless import would add.
    edges = {k: set(v) for k, v in build().edges.items()}
    assert "message" in edges["event"]  # events carry messages: the edge back closes a cycle
    edges["message"].add("event")
    found = cycles(edges)
    assert ["event", "message"] in found
    assert found != KNOWN_CYCLES


def test_no_private_cross_package_import_outside_the_loops_declared_list() -> None:
    offenders = []
    for where, module in build().private:
        allowed = {m for folder, ms in MAY_IMPORT.items() if where.startswith(folder) for m in ms}
        if any(module == m or module.startswith(m + ".") for m in allowed):
            continue
        if where.startswith("agent/") and module.startswith("tether._loop"):
            continue  # the loop's one client
        if (where, module) not in KNOWN_PRIVATE:
            offenders.append(f"{where} imports {module}")
    assert offenders == []
    assert LOOP_MAY_IMPORT, "the _loop docstring lists what it may import"


def test_every_declared_private_import_is_used() -> None:
    # The lists stay exact: a module no longer reached is struck from the docstring.
    used = build().private
    for folder, modules in MAY_IMPORT.items():
        for module in modules:
            assert any(w.startswith(folder) and m == module for w, m in used), (folder, module)


def test_only_the_agent_imports_the_loop() -> None:
    graph = build()
    users = sorted(pkg for pkg, targets in graph.edges.items() if "_loop" in targets)
    assert users == ["agent"]


def test_no_function_level_import_keeps_a_cycle_away() -> None:
    graph = build()
    offenders = []
    for where, module in graph.lazy:
        mine, target = where.split("/")[0].removesuffix(".py"), module.split(".")[1]
        if mine == target:
            continue
        edges = {k: set(v) for k, v in graph.edges.items()}
        edges.setdefault(mine, set()).add(target)
        closes = any(mine in c and target in c for c in cycles(edges))
        if closes and (where, module) not in KNOWN_LAZY_CYCLE_BREAKERS:
            offenders.append(f"{where} imports {module} inside a function")
    assert offenders == []


def test_the_import_contracts_hold() -> None:
    # `.importlinter`: DESIGN's layers over every import (function-level ones included),
    # `tool/` free of its sources, providers, backends and built-in tools independent.
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is a dev dependency: pip install -e '.[dev]'"
    root = SRC.parent.parent
    out = subprocess.run(
        [lint, "--no-cache", "--config", str(root / ".importlinter")],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_from_tether_import_counts_as_an_import_of_the_package() -> None:
    tree = ast.parse("from tether import event, _lazy, __version__")
    assert sorted(_imports(tree)) == ["tether._lazy", "tether.event"]
