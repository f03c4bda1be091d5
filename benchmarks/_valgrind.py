"""Instructions one child Python process executes, counted by valgrind's cachegrind.

Counts repeat for the same tree, script and arguments whatever else the machine does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
_CACHEGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]


def instructions(src: str, script: str, *args: str) -> int:
    """Instructions of `python script args...` run with `src` as the import path."""
    env = {**os.environ, "PYTHONPATH": src, "PYTHONHASHSEED": "0"}
    out = subprocess.run(
        [*_CACHEGRIND, sys.executable, script, *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = _REFS.search(out.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))
