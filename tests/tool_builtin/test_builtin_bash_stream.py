"""Bash output streams while the command runs; the result that follows is what the model reads."""

from __future__ import annotations

import asyncio
import json

from tether.event import ToolResultEndEvent, ToolResultTextDeltaEvent
from tether.message import ToolCallBlock
from tether.tool import Bash
from tether.tool._runner import run_tool
from tether.tool.builtin._live import LiveOutput

# Prints, then waits (inside the command) until the test creates `go`, then prints again.
WAIT_FOR_GO = "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second"


def _call(session, tool, **arguments):
    context = session.context(tool)
    call = ToolCallBlock(id=context.tool_call_id, name=tool.name, input=json.dumps(arguments))
    return run_tool(tool, call, context, None)


async def test_output_arrives_before_the_command_ends(session) -> None:
    events = _call(session, Bash(), command=WAIT_FOR_GO)
    seen = ""
    async for event in events:
        if isinstance(event, ToolResultTextDeltaEvent):
            seen += event.delta
            if "first" in seen:
                break
    # The command is still waiting for `go`: "second" cannot have been printed yet.
    assert "second" not in seen
    (session.work / "go").touch()
    rest = [e async for e in events]
    seen += "".join(e.delta for e in rest if isinstance(e, ToolResultTextDeltaEvent))
    assert seen == "first\nsecond\n"
    end = rest[-1]
    assert isinstance(end, ToolResultEndEvent)
    assert end.tool_result.get_text() == "first\nsecond\n\n[exit code 0]"


async def test_live_output_is_capped_and_the_result_keeps_head_and_tail(session) -> None:
    events = [e async for e in _call(session, Bash(max_output_chars=1000), command="seq 1 5000")]
    live = "".join(e.delta for e in events if isinstance(e, ToolResultTextDeltaEvent))
    assert live.startswith("1\n2\n3\n") and "not shown live" in live
    assert len(live) < 1100
    result = events[-1].tool_result.get_text()
    assert result.startswith("1\n2\n") and "5000" in result and "omitted" in result


async def test_closing_the_stream_kills_the_command(session) -> None:
    events = _call(session, Bash(), command="echo $$; sleep 1000")
    async for event in events:
        if isinstance(event, ToolResultTextDeltaEvent):
            pid = int(event.delta.split()[0])
            break
    assert session.pid_alive(pid)
    await events.aclose()
    assert not session.pid_alive(pid)


async def test_a_character_split_between_two_reads_is_not_mangled() -> None:
    live = LiveOutput(limit=100)
    done = asyncio.get_running_loop().create_future()
    texts = live.until(done)
    live.feed(b"caf\xc3")  # the first byte of "é" ends this read
    assert await anext(texts) == "caf"
    live.feed(b"\xa9 ok")
    done.set_result(None)
    assert [t async for t in texts] == ["é ok"]
