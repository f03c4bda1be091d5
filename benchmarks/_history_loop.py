"""`loop_overhead.py --history`: a checkpointed `reply()` at 2,000 prior messages vs none.

Each reply runs the loop workload with a SQLite checkpoint (7 save points) on a state of
`prior` messages; the reply's messages are removed afterwards so every reply starts at
`prior` (as `loop_overhead.per_reply_us` does). Instructions under
`valgrind --tool=cachegrind`: runs of `many` minus runs of `few` replies, per reply (the
2,000-message state is built, stored and warmed in both runs and cancels out).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import _valgrind

HERE = Path(__file__).resolve().parent


def workload(prior: int, replies: int, checkpoint: str) -> None:
    """`replies` replies at `prior` messages (inside valgrind); imports happen here."""
    sys.path.insert(0, str(HERE))
    from _workload import LoopModel, toolkit
    from loop_overhead import history

    from tether.agent import Agent
    from tether.app.storage import SQLiteStorage
    from tether.message import UserMsg

    async def run() -> None:
        with tempfile.TemporaryDirectory() as scratch:
            async with SQLiteStorage(f"{scratch}/loop.db") as storage:
                ids = ("bench", "bench", "loop")
                state = (await storage.upsert_session(*ids, state=history(prior))).state
                agent = Agent(
                    name="bench",
                    system_prompt="You are fast.",
                    model=LoopModel(),
                    toolkit=toolkit(),
                    state=state,
                )
                save = storage.checkpoint(*ids) if checkpoint == "sqlite" else None
                for _ in range(replies + 3):  # three to warm up
                    await agent.reply(UserMsg("user", "go"), checkpoint=save)
                    del agent.state.context[prior:]

    asyncio.run(run())


def instructions(src: str, prior: int, replies: int, checkpoint: str) -> int:
    script = str(HERE / "loop_overhead.py")
    args = ("--history-child", str(prior), str(replies), checkpoint)
    return _valgrind.instructions(src, script, *args)


def per_reply(src: str, prior: int, few: int, many: int, checkpoint: str) -> float:
    more = instructions(src, prior, many, checkpoint)
    return (more - instructions(src, prior, few, checkpoint)) / (many - few)


def report(trees: list[tuple[str, str]], prior: int, few: int, many: int) -> None:
    """Print reply() instructions at 0 and `prior` messages, with and without a checkpoint."""
    print(f"reply() instructions per reply (runs of {many} minus {few} replies)")
    print(f"| tree | checkpoint | 0 messages | {prior:,} messages | × empty |")
    print("|---|---|---|---|---|")
    for label, src in trees:
        for checkpoint in ("none", "sqlite"):
            empty = per_reply(src, 0, few, many, checkpoint)
            full = per_reply(src, prior, few, many, checkpoint)
            print(
                f"| {label} | {checkpoint} | {empty / 1e6:.3f} M | {full / 1e6:.3f} M |"
                f" {full / empty:.2f} |",
                flush=True,
            )
