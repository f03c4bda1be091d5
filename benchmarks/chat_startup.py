"""Start-up of `tether chat`: `tether chat -p "hi" --model scripted:FILE`, wall clock.

Run: `python benchmarks/chat_startup.py [--runs N]`

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
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_MS = 400.0
LAUNCH = "import sys; from tether.cli import main; sys.exit(main())"


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--no-bytecode", action="store_true", help="keep the caller's PYTHONDONTWRITEBYTECODE"
    )
    options = parser.parse_args()
    runs = options.runs
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        root = Path(tmp)
        script = root / "script.yaml"
        script.write_text("- text: Hello from tether.\n")
        as_json = root / "script.json"  # the same script; JSON needs no YAML parser
        as_json.write_text('[{"text": "Hello from tether."}]')
        env = {**os.environ, "HOME": str(root), "TETHER_HOME": str(root / "tether")}
        env["XDG_CONFIG_HOME"] = str(root / "config")
        if not options.no_bytecode:  # as installed: every module loads from cached bytecode
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
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
        for argv in cases.values():  # compile and cache bytecode; warm the file cache and database
            _time(argv, root, env)
        print(
            f"{'case':<22}{'wall median':>12}{'wall min':>10}{'wall max':>10}{'cpu median':>12}"
            f"   ({runs} runs; ms)"
        )
        medians = {}
        for name, argv in cases.items():
            runs_ms = [_time(argv, root, env) for _ in range(runs)]
            walls, cpus = [w for w, _ in runs_ms], [c for _, c in runs_ms]
            medians[name] = statistics.median(walls)
            print(
                f"{name:<22}{medians[name]:>12.0f}{min(walls):>10.0f}{max(walls):>10.0f}"
                f"{statistics.median(cpus):>12.0f}"
            )
    verdict = "ok" if medians["tether chat -p hi"] <= BUDGET_MS else "OVER BUDGET"
    print(
        f"budget {BUDGET_MS:.0f} ms (YAML script): {verdict}; load average {os.getloadavg()[0]:.1f}"
    )
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
