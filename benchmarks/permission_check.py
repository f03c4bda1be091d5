"""Permission decisions per second for shell commands (simple and 10-part compounds).

Run: `PYTHONPATH=src python benchmarks/permission_check.py`. Parses, rule matches and
rule verdicts on path strings are memoised (bounded LRUs), so the "warm" rows measure
what every decision still does: resolving each path on the real file system (a temp work
dir; nothing resolved is kept across decisions) and the glue around it. The "cold" row
parses a new command every time. Issue #4's target: >= 20,000 decisions/s for simple
commands.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionEngine,
    PermissionRule,
    check_shell_command,
    is_read_only_command,
    match_allow_rule,
    match_shell_rule,
    suggest_shell_rules,
)

SIMPLE = {
    "git status (read-only)": "git status",
    "cat README.md (file arg)": "cat README.md",
    "ls -la src": "ls -la src",
    "cat src/app.py (nested path)": "cat src/app.py",
    "git commit -m x (allow rule)": "git commit -m x",
    "sort -o out (prefix rule, hazards)": "sort -o out.txt README.md",
    "rm -rf build (deny rule)": "rm -rf build",
    "npm install (ask)": "npm install",
}
COMPOUND = {
    "10 read-only parts": " && ".join(
        ["git status", "ls src", "cat README.md", "grep -n x README.md", "wc -l README.md"]
        + ["head -5 README.md", "git diff HEAD", "git log -3", "echo done", "pwd"]
    ),
    "10 parts, rule + pipes": " | ".join(["cat README.md"] + ["grep -v y"] * 8 + ["wc -l"])
    + " ; git commit -m x",
    "10 parts, one denied": "; ".join(["ls"] * 9 + ["rm -rf build"]),
}


class _Bash:
    name = "Bash"
    is_external_tool = False

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        return is_read_only_command(tool_input["command"], cwd=self.cwd)

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        return check_shell_command(tool_input["command"], context, cwd=self.cwd)

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        if rule.behavior is PermissionBehavior.ALLOW:
            return match_allow_rule(rule, tool_input["command"], context, cwd=self.cwd)
        return match_shell_rule(rule, tool_input["command"], cwd=self.cwd)

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        return suggest_shell_rules(tool_input["command"], cwd=self.cwd)


def _check(command: str, ctx: PermissionContext, root: str, _n: int) -> object:
    return check_shell_command(command, ctx, cwd=root)


async def _engine_rate(engine: PermissionEngine, bash: _Bash, command: str) -> float:
    await engine.decide(bash, {"command": command})
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.6:
        for _ in range(50):
            await engine.decide(bash, {"command": command})
        n += 50
    return n / (time.perf_counter() - start)


def _rate(fn: Callable[[int], object], seconds: float = 0.6) -> float:
    fn(0)  # warm the parse cache
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            fn(n)
            n += 1
    return n / (time.perf_counter() - start)


def _workspace() -> str:
    root = os.path.realpath(tempfile.mkdtemp(prefix="tether-bench-"))
    os.makedirs(os.path.join(root, "src"))
    for name in ("README.md", "src/app.py"):
        with open(os.path.join(root, name), "w") as f:
            f.write("x\n")
    return root


def main() -> None:
    root = _workspace()
    ctx = PermissionContext(
        working_directories=[root],
        allow_rules=["Bash(git commit:*)", "Bash(npm test)", "Bash(sort:*)", "Edit(src/**)"],
        deny_rules=["Bash(rm:*)", "Read(secret/**)"],
    )
    engine, bash = PermissionEngine(ctx), _Bash(root)
    rows: list[tuple[str, str, str, float]] = []
    for label, command in {**SIMPLE, **COMPOUND}.items():
        kind = "simple" if label in SIMPLE else "10-part"
        decision = check_shell_command(command, ctx, cwd=root).behavior.value
        rate = _rate(partial(_check, command, ctx, root))
        rows.append((kind, label, decision, rate))
    for label in ("git status (read-only)", "git commit -m x (allow rule)"):
        rate = asyncio.run(_engine_rate(engine, bash, SIMPLE[label]))
        rows.append(("engine", label, "-", rate))
    rate = _rate(lambda n: check_shell_command(f"git log -{n} --oneline", ctx, cwd=root))
    rows.append(("cold", "git log -N (new command: parse)", "allow", rate))
    print(f"{'kind':8} {'case':34} {'decision':8} {'decisions/s':>12} {'µs each':>9}")
    print("-" * 75)
    for kind, label, decision, rate in rows:
        print(f"{kind:8} {label:34} {decision:8} {rate:12,.0f} {1e6 / rate:9.1f}")
    print(f"\nload average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
