"""Loop overhead in instructions: a load-proof figure for `loop_overhead.py`'s workload.

Wall-clock figures swing with the machine's load; instruction counts barely do. Each case
runs the reply workload of `loop_overhead.py` (a zero-latency model, two tool calls, a
final text, empty context) under `valgrind --tool=cachegrind` twice, with a few and with
many replies, and the difference divided by the extra replies is the instructions one
reply costs (start-up, imports and warm-up cancel out). Cases: `reply()`, `reply_stream()`
with every event consumed, the hand-written floor (`_floor.py`) and, with `--checkpoint`,
`reply()` with a no-op checkpoint (the save points' own cost; trees from before
checkpoints existed cannot run it).

Several source trees can be compared in one run (the same session, the same load):

    python benchmarks/loop_instructions.py [--tree LABEL=SRC_DIR ...] [--few 100 --many 600]
        [--checkpoint]

`SRC_DIR` is a folder holding the `tether` package (default: this checkout's `src`). The
workload uses only API that the issue-14 base (`fc2b7d3`) already had, so an older tree
can be measured from `git archive <commit> src | tar -x -C /tmp/x` without a worktree.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import _valgrind

HERE = Path(__file__).resolve().parent
CASES = ("reply", "stream", "floor", "checkpoint")


def _floor_workload(replies: int) -> None:
    """`replies` replies of the hand-written floor."""
    sys.path.insert(0, str(HERE))
    import _floor

    async def floor() -> None:
        messages: list[dict[str, Any]] = []
        await _floor.reply(messages, "go")  # warm up
        del messages[:]
        for _ in range(replies):
            await _floor.reply(messages, "go")
            del messages[:]

    asyncio.run(floor())


def _workload(case: str, replies: int) -> None:
    """Run `replies` replies of one case (inside valgrind); imports happen here."""
    if case == "floor":
        _floor_workload(replies)
        return

    from tether.agent import Agent
    from tether.message import UserMsg

    sys.path.insert(0, str(HERE))
    from _workload import LoopModel, toolkit

    agent = Agent(
        name="bench",
        system_prompt="You are fast.",
        model=LoopModel(),
        toolkit=toolkit(),
    )

    async def noop(state: Any) -> None:
        return None

    async def one() -> None:
        if case == "stream":
            async for _event in agent.reply_stream(UserMsg("user", "go")):
                pass
        elif case == "checkpoint":  # a no-op checkpoint: the save points' own cost
            await agent.reply(UserMsg("user", "go"), checkpoint=noop)
        else:
            await agent.reply(UserMsg("user", "go"))
        del agent.state.context[:]

    async def run() -> None:
        for _ in range(3):  # warm up: lazily built schemas and caches
            await one()
        for _ in range(replies):
            await one()

    asyncio.run(run())


def instructions(src: str, case: str, replies: int) -> int:
    """Instructions of one process running `replies` replies of `case` on tree `src`."""
    return _valgrind.instructions(src, __file__, "--child", case, str(replies))


def per_reply(src: str, case: str, few: int, many: int) -> float:
    return (instructions(src, case, many) - instructions(src, case, few)) / (many - few)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=SRC_DIR")
    parser.add_argument("--few", type=int, default=100)
    parser.add_argument("--many", type=int, default=600)
    parser.add_argument(
        "--checkpoint", action="store_true", help="also reply() with a no-op checkpoint"
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _workload(args.child[0], int(args.child[1]))
        return
    trees = [t.split("=", 1) for t in args.tree] or [["this", str(HERE.parent / "src")]]
    floor = per_reply(trees[0][1], "floor", args.few, args.many)
    print(
        f"instructions per reply (runs of {args.many} minus runs of {args.few} replies)", flush=True
    )
    print(f"floor (hand-written loop): {floor / 1e6:.3f} M", flush=True)
    extra = f" {'checkpointed':>13} {'× floor':>8}" if args.checkpoint else ""
    print(
        f"{'tree':<16} {'reply()':>10} {'× floor':>8} {'reply_stream()':>15} {'× floor':>8}{extra}"
    )
    for label, src in trees:
        reply = per_reply(src, "reply", args.few, args.many)
        stream = per_reply(src, "stream", args.few, args.many)
        row = (
            f"{label:<16} {reply / 1e6:>8.3f} M {reply / floor:>7.2f}× "
            f"{stream / 1e6:>13.3f} M {stream / floor:>7.2f}×"
        )
        if args.checkpoint:
            saved = per_reply(src, "checkpoint", args.few, args.many)
            row += f" {saved / 1e6:>11.3f} M {saved / floor:>7.2f}×"
        print(row, flush=True)  # a row as soon as it is measured (the run takes minutes)


if __name__ == "__main__":
    main()
