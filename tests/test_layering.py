"""Leaves never import the trunk; `import tether` loads no optional SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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
]
TRUNK = ("tether.agent", "tether.app", "tether.cli")
GROUND = ["message", "permission", "middleware", "credential", "shell"]


def runtime_imports(path: Path) -> list[str]:
    """Module-level imports, skipping `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text())
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
        *TRUNK,
    )
    offenders = []
    for pkg in GROUND:
        for path in (SRC / pkg).rglob("*.py"):
            tree = ast.parse(path.read_text())
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
        tree = ast.parse(path.read_text())
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
