"""The package import graph of `src/tether`, from the source (no import is executed).

    python tests/import_graph.py      # prints the graph, cycles, private and lazy imports
    python tests/import_graph.py --any  # counts `Any` in public signatures, by package

A package is `tether.<name>` (`tether.app.storage` counts as `app`; `from tether import
x` counts as an import of `tether.x`). Only module-level imports outside
`if TYPE_CHECKING:` count as edges; imports inside functions are listed separately (a
function-level import must never be what keeps a cycle away). The contracts in
`.importlinter` (`lint-imports`) state the layers over every import, function-level ones
included.
"""

from __future__ import annotations

import ast
import gc
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


def parse(path: Path) -> ast.Module:
    """`ast.parse` of a file with the collector off: on CPython 3.11.7 a collection while
    the tree is built can run code that parses too, and the outer parse then fails with
    "AST constructor recursion depth mismatch" (seen after tests/observability)."""
    gc.disable()
    try:
        return ast.parse(path.read_text())
    finally:
        gc.enable()


def package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tether" or len(parts) < 2:
        return None
    return parts[1]


def _imports(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
            if sub.module == "tether":  # `from tether import x`: the package (or root helper) x
                yield from (f"tether.{a.name}" for a in sub.names if a.name != "__version__")
                continue
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
        tree = parse(path)
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


_DUNDERS_KEPT = {"__init__", "__call__"}


def _is_public(name: str) -> bool:
    return not name.startswith("_") or name in _DUNDERS_KEPT


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body  # a quoted annotation
    return any(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(annotation))


def _signature_anys(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    count = sum(_mentions_any(a.annotation) for a in every if a is not None)
    return count + _mentions_any(fn.returns)


def public_any(where: Path = SRC) -> dict[str, int]:
    """`Any` in public signatures: one per parameter or return annotation that names it.

    Public: a function or class whose name has no leading `_` (modules may be private,
    as the public classes live in `_x.py` files), and a class's methods likewise (plus
    `__init__` and `__call__`). `**kwargs: Any` counts like any other parameter.
    """
    counts: dict[str, int] = {}
    for path in sorted(where.rglob("*.py")):
        rel = path.relative_to(where)
        pkg = rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else "(root)"
        tree = parse(path)
        found = 0
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_public(node.name):
                found += _signature_anys(node)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        if _is_public(item.name):
                            found += _signature_anys(item)
        if found:
            counts[pkg] = counts.get(pkg, 0) + found
    return counts


def main() -> None:
    if "--any" in sys.argv:
        counts = public_any()
        for pkg, n in sorted(counts.items()):
            print(f"  {pkg:12} {n}")
        print(f"Any in public signatures: {sum(counts.values())}")
        return
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
