"""`tether.shell` stands alone: it imports nothing of tether, and no grammar until used."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tether.shell

SHELL = Path(tether.shell.__file__).parent


def test_the_package_imports_nothing_of_tether_but_itself() -> None:
    offenders = []
    for path in SHELL.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            offenders += [
                f"{path.name}: {n}"
                for n in names
                if n.startswith("tether") and not n.startswith("tether.shell")
            ]
    assert offenders == []


def test_importing_tether_or_the_package_loads_no_grammar() -> None:
    code = (
        "import sys, tether, tether.shell, tether.permission; "
        "print(any(m.startswith('tree_sitter') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_permission_re_exports_the_analysis() -> None:
    from tether.permission import ShellAnalysis, analyze_command

    assert analyze_command is tether.shell.analyze_command
    assert isinstance(analyze_command("ls -la"), ShellAnalysis)
