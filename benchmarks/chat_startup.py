"""Start-up of `tether chat`: `tether chat -p "hi" --model scripted:FILE`, wall clock.

Run: `python benchmarks/chat_startup.py [--runs N] [--tree LABEL=SRC_DIR ...] [--instructions]`

Each run is a fresh process (import + config + storage + first reply + exit), in a
temporary folder with its own TETHER_HOME; the median of `--runs` is compared with the
400 ms budget. For reference it also times a bare interpreter and `from tether import
Agent` (the agent machinery; `import tether` alone loads its names lazily), and
reports CPU time (user + system), which a machine shared with other work inflates less.

Bytecode is cached, as in a pip-installed package (pip compiles `.pyc` files at install).
The child processes run with `PYTHONDONTWRITEBYTECODE` removed and `PYTHONPYCACHEPREFIX`
pointing at a folder of this run, and each case runs once before it is timed, so every
module, tether's own from a source tree included, loads from cached bytecode. (A machine
that sets `PYTHONDONTWRITEBYTECODE=1`, as ours does, otherwise recompiles tether's
~200 source modules in every run: that measured the compiler, ~100 ms of each start.)
`--no-bytecode` keeps the caller's setting, to show that difference.

`--tree LABEL=SRC_DIR` (repeatable) compares source trees (a folder holding the `tether`
package, e.g. an old commit's `git archive <commit> src | tar -x -C /tmp/x`): the runs are
interleaved, tree after tree within each round, so every tree sees the same load. With
`--instructions` each case also runs once per tree under `valgrind --tool=cachegrind`, a
count that a loaded machine barely moves. Without `--tree` the tree is the imported one.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_MS = 400.0
LAUNCH = "import sys; from tether.cli import main; sys.exit(main())"
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _time(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return elapsed, cpu


def _instructions(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions one run of `argv` executes, counted by cachegrind."""
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    done = subprocess.run(
        [*valgrind, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    found = _REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{argv} under valgrind failed: {done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def _trees(specs: list[str]) -> dict[str, str | None]:
    """LABEL -> source folder for PYTHONPATH; `None`: the caller's environment."""
    if not specs:
        return {"this": None}
    trees: dict[str, str | None] = {}
    for spec in specs:
        label, sep, src = spec.partition("=")
        if not sep or not (Path(src) / "tether" / "__init__.py").is_file():
            raise SystemExit(f"--tree {spec!r}: want LABEL=SRC_DIR, a folder holding tether/")
        trees[label] = str(Path(src).resolve())
    return trees


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--no-bytecode", action="store_true", help="keep the caller's PYTHONDONTWRITEBYTECODE"
    )
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=SRC_DIR")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (cachegrind)"
    )
    options = parser.parse_args()
    runs = options.runs
    trees = _trees(options.tree)
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        root = Path(tmp)
        script = root / "script.yaml"
        script.write_text("- text: Hello from tether.\n")
        as_json = root / "script.json"  # the same script; JSON needs no YAML parser
        as_json.write_text('[{"text": "Hello from tether."}]')
        envs = {}
        for label, src in trees.items():
            env = {**os.environ, "HOME": str(root), "TETHER_HOME": str(root / label / "tether")}
            env["XDG_CONFIG_HOME"] = str(root / "config")
            if src is not None:
                env["PYTHONPATH"] = src
            if not options.no_bytecode:  # as installed: every module loads from cached bytecode
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                env["PYTHONPYCACHEPREFIX"] = str(root / "pycache" / label)
            envs[label] = env
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "from tether import Agent": [sys.executable, "-c", "from tether import Agent"],
            "tether chat -p hi": [
                sys.executable, "-c", LAUNCH, "chat", "-p", "hi", "--model", f"scripted:{script}"
            ],
            "  (JSON script)": [
                sys.executable, "-c", LAUNCH, "chat", "-p", "hi", "--model", f"scripted:{as_json}"
            ],
        }  # fmt: skip
        for env in envs.values():  # compile and cache bytecode; warm the file cache and database
            for argv in cases.values():
                _time(argv, root, env)
        timed: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for name, argv in cases.items():
            for _ in range(runs):  # interleaved: each round runs every tree once
                for label, env in envs.items():
                    timed.setdefault((label, name), []).append(_time(argv, root, env))
        counts = {
            (label, name): _instructions(argv, root, env)
            for label, env in envs.items()
            for name, argv in cases.items()
            if options.instructions
        }
        medians = {}
        for label in envs:
            if len(envs) > 1:
                print(f"tree {label}: {trees[label]}")
            print(
                f"{'case':<26}{'wall median':>12}{'wall min':>10}{'wall max':>10}"
                f"{'cpu median':>12}"
                + ("  instructions" if counts else "")
                + f"   ({runs} runs; ms)"
            )
            for name in cases:
                walls = [w for w, _ in timed[label, name]]
                cpus = [c for _, c in timed[label, name]]
                medians[label, name] = statistics.median(walls)
                count = f"{counts[label, name] / 1e6:>12.0f} M" if counts else ""
                print(
                    f"{name:<26}{medians[label, name]:>12.0f}{min(walls):>10.0f}{max(walls):>10.0f}"
                    f"{statistics.median(cpus):>12.0f}{count}"
                )
    ok = True
    for label in envs:
        verdict = "ok" if medians[label, "tether chat -p hi"] <= BUDGET_MS else "OVER BUDGET"
        ok = ok and verdict == "ok"
        print(f"budget {BUDGET_MS:.0f} ms (YAML script), {label}: {verdict}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
