"""A worker process for the crash and race tests: serves one stored session with checkpoints.

    python crash_worker.py CONFIG_JSON

CONFIG: backend ("sqlite"/"redis"), path or prefix, log (tool log file), mode ("start",
"continue", "confirm", "message"), kill_save (int), kill_when ("before"/"after"),
kill_tool (tool name), barrier (bool: print READY, wait for a line on stdin), text.
Tools append `start <tool> <call id>` to the log with fsync before they act.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

from tether.agent import Agent
from tether.app.storage import RedisStorage, SQLiteStorage, StorageBase
from tether.errors import SessionConflictError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import Msg, ToolCallBlock, ToolResultBlock, UserMsg
from tether.model import ChatModelBase, ChatRequest, TextDelta, ToolCallDelta
from tether.state import AgentState
from tether.tool import ToolContext, Toolkit, tool

CONFIG: dict[str, Any] = json.loads(sys.argv[1])
KEY = ("u", "agent", "s")


def log(line: str) -> None:
    with open(CONFIG["log"], "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def started(name: str, ctx: ToolContext) -> None:
    log(f"start {name} {ctx.tool_call_id}")
    if CONFIG.get("kill_tool") == name:
        os.kill(os.getpid(), signal.SIGKILL)


@tool(is_concurrency_safe=True, is_idempotent=True)
async def lookup(item: str, ctx: ToolContext) -> str:
    """Look an item up (idempotent)."""
    started("lookup", ctx)
    return f"{item} is in stock"


@tool(is_concurrency_safe=True)
async def charge(amount: int, ctx: ToolContext) -> str:
    """Charge the card (not idempotent)."""
    started("charge", ctx)
    return f"charged {amount}"


@tool
async def ship(item: str, ctx: ToolContext) -> str:
    """Ship the item (serial, not idempotent)."""
    started("ship", ctx)
    return f"shipped {item}"


@tool(requires_confirmation=True)
async def transfer(amount: int, ctx: ToolContext) -> str:
    """Transfer money (asks first)."""
    started("transfer", ctx)
    return f"transferred {amount}"


def well_formed(messages: list[Msg]) -> bool:
    """Every call in the request has exactly one result, in its own message."""
    for msg in messages:
        calls = [b.id for b in msg.content if isinstance(b, ToolCallBlock)]
        results = [b.id for b in msg.content if isinstance(b, ToolResultBlock)]
        if sorted(calls) != sorted(results) or len(set(calls)) != len(calls):
            return False
    return True


class ShopModel(ChatModelBase):
    """Deterministic: three calls on a reply's first step, the final text once answered."""

    def __init__(self) -> None:
        super().__init__("shop")

    async def stream(self, request: ChatRequest) -> Any:
        if not well_formed(request.messages):
            log("malformed request")
        last = request.messages[-1]
        if any(isinstance(b, ToolResultBlock) for b in last.content):
            yield TextDelta(text="all done")
            return
        if CONFIG["mode"] in ("confirm", "message"):
            yield TextDelta(text=f"answered {CONFIG.get('text', '')}")
            return
        yield ToolCallDelta(index=0, id="c_lookup", name="lookup", arguments='{"item": "book"}')
        yield ToolCallDelta(index=1, id="c_charge", name="charge", arguments='{"amount": 5}')
        yield ToolCallDelta(index=2, id="c_ship", name="ship", arguments='{"item": "book"}')


def open_storage() -> StorageBase:
    if CONFIG["backend"] == "sqlite":
        return SQLiteStorage(CONFIG["path"])
    return RedisStorage(host="127.0.0.1", port=6379, key_prefix=CONFIG["prefix"])


def killing(save: Any) -> Any:
    count = 0

    async def checkpoint(state: AgentState) -> None:
        nonlocal count
        count += 1
        if count == CONFIG.get("kill_save") and CONFIG.get("kill_when") == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        await save(state)
        log(f"saved {count}")
        if count == CONFIG.get("kill_save") and CONFIG.get("kill_when") == "after":
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


async def main() -> None:
    async with open_storage() as storage:
        record = await storage.get_session(*KEY)
        assert record is not None
        tools = [lookup, charge, ship, transfer]
        agent = Agent("shop", "p", ShopModel(), Toolkit(tools=tools), state=record.state)
        checkpoint = killing(storage.checkpoint(*KEY))
        inputs: Any = None
        mode, state = CONFIG["mode"], record.state
        if mode == "start":
            inputs = UserMsg("user", "buy a book")
        elif mode == "continue" and state.reply is None:
            if any(m.role == "user" for m in state.context):
                print("NOTHING")
                return
            inputs = UserMsg("user", "buy a book")  # died before the first save point
        elif mode == "confirm":
            pending = state.pending
            assert pending is not None
            call = pending.awaiting_confirmation[0]
            inputs = UserConfirmResultEvent(
                reply_id=pending.reply_id,
                confirm_results=[ConfirmResult(confirmed=True, tool_call=call)],
            )
        elif mode == "message":
            inputs = UserMsg("user", CONFIG["text"])
        if CONFIG.get("barrier"):
            print("READY", flush=True)
            sys.stdin.readline()
        try:
            msg = await agent.reply(inputs, checkpoint=checkpoint)
        except SessionConflictError:
            print("CONFLICT", flush=True)
            return
        print("DONE " + (msg.get_text_content() or ""), flush=True)


asyncio.run(main())
