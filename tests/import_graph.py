"""The package import graph of `src/tether`, from the source (no import is executed).

    python tests/import_graph.py      # prints the graph, cycles, private and lazy imports

A package is `tether.<name>` (`tether.app.storage` counts as `app`). Only module-level
imports outside `if TYPE_CHECKING:` count as edges; imports inside functions are listed
separately (a function-level import must never be what keeps a cycle away).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).parent.parent / "src" / "tether"


@dataclass
class Graph:
    edges: dict[str, set[str]] = field(default_factory=dict)
    private: list[tuple[str, str]] = field(default_factory=list)
    """(importing file, private module of another package)"""
    lazy: list[tuple[str, str]] = field(default_factory=list)
    """(importing file, tether module imported inside a function)"""


def package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tether" or len(parts) < 2:
        return None
    return parts[1]


def _imports(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
            yield sub.module
            yield from (f"{sub.module}.{a.name}" for a in sub.names if a.name.startswith("_"))
        elif isinstance(sub, ast.Import):
            yield from (a.name for a in sub.names)


ROOT_HELPERS = {p.stem for p in SRC.glob("_*.py") if not p.stem.startswith("__")}
"""Private modules directly under `tether/` (`_ids`, `_settings`, …): ground-level helpers
every package may use, not another package's internals."""


def _is_private(module: str) -> bool:
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in ROOT_HELPERS:
        return False
    return any(part.startswith("_") and not part.startswith("__") for part in parts[1:])


def build() -> Graph:
    graph = Graph()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        here = ".".join(rel.parts).removesuffix(".__init__")
        mine = package_of(here) if "." in here else None
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
                continue
            lazy = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for module in _imports(node):
                target = package_of(module)
                if target is None or mine is None:
                    continue
                if lazy and _in_function(node, module):
                    graph.lazy.append((str(path.relative_to(SRC)), module))
                    continue
                if target != mine:
                    graph.edges.setdefault(mine, set()).add(target)
                    if _is_private(module):
                        graph.private.append((str(path.relative_to(SRC)), module))
    return graph


def _in_function(node: ast.AST, module: str) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
            if module in set(_imports(sub)):
                return True
    return False


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle's nodes, found by a depth-first walk (small graph)."""
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                i = path.index(min(path))
                found.add(tuple(path[i:] + path[:i]))
            elif nxt not in path and nxt > start:
                walk(start, nxt, [*path, nxt])

    for start in sorted(edges):
        walk(start, start, [start])
    return [list(c) for c in sorted(found)]


def main() -> None:
    graph = build()
    print("package imports (runtime, module level):")
    for pkg in sorted(graph.edges):
        print(f"  {pkg:12} -> {', '.join(sorted(graph.edges[pkg]))}")
    print("cycles:", cycles(graph.edges) or "none")
    print("private cross-package imports:")
    for where, module in graph.private:
        print(f"  {where}: {module}")
    print("function-level imports of tether modules:")
    for where, module in graph.lazy:
        print(f"  {where}: {module}")


if __name__ == "__main__":
    sys.exit(main())
