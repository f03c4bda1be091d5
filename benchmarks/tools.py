"""Time the built-in tools on big inputs: Grep over 50,000 files, Read of a 10 MB file.

Run: `PYTHONPATH=src .venv/bin/python benchmarks/tools.py [--files 50000] [--runs 5]`.
Prints one row per operation with the median and best wall time per call.
"""

import argparse
import asyncio
import inspect
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tether.message import ToolResultBlock
from tether.permission import PermissionContext
from tether.tool import Bash, Glob, Grep, Read, ToolBase, ToolContext
from tether.tool.builtin import find_ripgrep


def build_tree(root: Path, files: int) -> None:
    """`files` small Python files in 100-file directories; 1 in 1000 holds `needle_token`."""
    body = "".join(f"def function_{i}(x):\n    return x * {i}\n\n" for i in range(20))
    for n in range(files):
        directory = root / f"pkg{n // 100:04d}"
        if n % 100 == 0:
            directory.mkdir(parents=True)
        extra = "needle_token = True\n" if n % 1000 == 0 else ""
        (directory / f"mod{n:05d}.py").write_text(body + extra)
    (root / ".gitignore").write_text("pkg0000/\n")


def build_big_file(path: Path, size: int) -> int:
    line = "The quick brown fox jumps over the lazy dog; " * 2 + "\n"
    count = size // len(line)
    path.write_text(line * count)
    return count


async def timed(
    tool: ToolBase, context: ToolContext, runs: int, **args
) -> tuple[float, float, str]:
    parsed = tool.input_model.model_validate(args)
    times, text = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        outcome = tool.call(parsed, context)
        if inspect.isawaitable(outcome):
            out = await outcome
        else:  # a streaming tool (Bash): its last chunk is the result
            out = [chunk async for chunk in outcome][-1]
        times.append(time.perf_counter() - started)
        text = out.get_text() if isinstance(out, ToolResultBlock) else str(out)
    return statistics.median(times), min(times), text


async def raw_ripgrep(tree: Path, runs: int) -> tuple[str, float, float, int, str]:
    """The floor: the same search as the first Grep row, rg run bare, output discarded."""
    rg = find_ripgrep()
    assert rg is not None
    argv = [rg, "--no-config", "-l", "--hidden", "--no-require-git", "needle_token", str(tree)]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL)
        await proc.wait()
        times.append(time.perf_counter() - started)
    label = "(baseline) bare `rg -l`, same search"
    return label, statistics.median(times) * 1000, min(times) * 1000, 0, ""


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tether-bench-"))
    try:
        tree = base / "tree"
        started = time.perf_counter()
        build_tree(tree, opts.files)
        big = base / "big.txt"
        lines = build_big_file(big, 10 * 1024 * 1024)
        print(
            f"setup: {opts.files} files and a {big.stat().st_size / 1e6:.1f} MB file "
            f"({lines} lines) in {time.perf_counter() - started:.1f} s\n"
        )
        context = ToolContext(
            tool_call_id="bench",
            reply_id="bench",
            permission_context=PermissionContext(working_directories=[str(tree)]),
        )
        cases = [
            ("Grep files_with_matches, rare (49 hits)", Grep(), {"pattern": "needle_token"}),
            (
                "Grep content, rare, -C 2",
                Grep(),
                {"pattern": "needle_token", "output_mode": "content", "-C": 2},
            ),
            ("Grep count, rare", Grep(), {"pattern": "needle_token", "output_mode": "count"}),
            (
                "Grep content, every file (capped 250)",
                Grep(),
                {"pattern": "function_7\\(", "output_mode": "content"},
            ),
            ("Grep files, every file (sorted, cap 250)", Grep(), {"pattern": "function_7\\("}),
            ("Grep no match", Grep(), {"pattern": "zzz_absent_zzz"}),
            ("Glob **/*.py (gitignore, cap 100)", Glob(), {"pattern": "**/*.py"}),
            ("Read 10 MB: first page", Read(), {"file_path": str(big)}),
            ("Read 10 MB: middle page", Read(), {"file_path": str(big), "offset": lines // 2}),
            ("Read 10 MB: last page", Read(), {"file_path": str(big), "offset": lines - 1999}),
            ("Bash `true` (spawn + cwd trailer)", Bash(), {"command": "true"}),
        ]
        rows = [await raw_ripgrep(tree, opts.runs)]
        for label, tool, args in cases:
            median, best, text = await timed(tool, context, opts.runs, **args)
            first = text.split("\n", 1)[0][:40]
            rows.append((label, median * 1000, best * 1000, len(text), first))
        width = max(len(r[0]) for r in rows)
        print(
            f"{'operation':<{width}}  {'median ms':>10}  {'best ms':>9}  {'chars':>8}  first line"
        )
        print("-" * (width + 70))
        for label, median, best, size, first in rows:
            print(f"{label:<{width}}  {median:>10.1f}  {best:>9.1f}  {size:>8}  {first}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
