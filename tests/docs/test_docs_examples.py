"""Every ```python block of the user guide runs (in a temporary folder, offline).

The blocks of one page run in order in one namespace, as a reader would paste them. A block
with a top-level `await` runs on the page's event loop; the others run as plain scripts
(so `asyncio.run(main())` works). See `docs_blocks.py` for the marks.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docs_blocks import MODES, Block, blocks, pages

from _heap import collected_on_exit
from tether.agent import Agent
from tether.model import ChatModelBase

sys.path.insert(0, str(Path(__file__).parents[1] / "model_providers"))
from provider_replay import ReplayServer
from provider_wire import stream_reply

PAGES = [p for p in pages() if blocks(p)]
SKIPPED = [b for p in pages() for b in blocks(p) if b.mode == "skip"]


def run_block(block: Block, namespace: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
    code = compile(block.code, block.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)  # a coroutine when the block awaits at top level
    if asyncio.iscoroutine(result):
        loop.run_until_complete(result)


@contextlib.contextmanager
def fake_openai(loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    server = ReplayServer()
    loop.run_until_complete(server.start())
    server.add(*[stream_reply("openai", [("text", "Hello from the fake."), ("usage", 5, 4)])] * 3)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-test")
    try:
        yield
    finally:
        loop.run_until_complete(server.stop())


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_the_page_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    loop = asyncio.new_event_loop()
    out = io.StringIO()
    heap = contextlib.ExitStack()
    # Dropped SDK clients are finalised at the end, while their loop is open: left to a
    # later GC pass they run during an unrelated `ast.parse`, which trips a CPython 3.11.7
    # check.
    heap.enter_context(collected_on_exit())
    try:
        for block in blocks(path):
            assert block.mode in MODES, f"{block.id}: unknown mark {block.mode!r}"
            if block.mode == "skip":
                continue
            with contextlib.redirect_stdout(out), contextlib.ExitStack() as stack:
                if block.mode == "fake-openai":
                    stack.enter_context(fake_openai(loop, monkeypatch))
                try:
                    run_block(block, namespace, loop)
                except Exception as error:
                    raise AssertionError(f"the block at {block.id} failed: {error!r}") from error
    finally:
        loop.run_until_complete(close_models(namespace))
        loop.run_until_complete(loop.shutdown_asyncgens())
        heap.close()
        loop.close()


async def close_models(namespace: dict[str, Any]) -> None:
    """Close the SDK clients of the models a page made (directly or inside an agent)."""
    models = [v for v in namespace.values() if isinstance(v, ChatModelBase)]
    models += [v.model for v in namespace.values() if isinstance(v, Agent)]
    for model in models:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


@pytest.mark.parametrize("block", SKIPPED, ids=lambda b: b.id)
def test_a_skipped_block_says_why(block: Block) -> None:
    assert len(block.reason) > 10, f"{block.id}: a skipped block needs a reason"
    compile(block.code, block.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)  # still valid
    pytest.skip(block.reason)


def test_there_are_blocks_to_run() -> None:
    assert sum(len(blocks(p)) for p in PAGES) > 30
