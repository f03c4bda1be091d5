"""Scripted agents for the web UI tests, served by a real `tether serve`.

The model is a `ScriptedChatModel` whose every step is one routing function: it reads the
user's message (a keyword picks the script) and which of the script's steps already ran
(their call ids, `s<step>c<n>`, are in the reply), so it answers the same way in any
process — the restart test kills the server mid-reply and another one carries on.

Steps can wait on a gate: a file named `<gate>` in `$TETHER_WEB_GATES`, created by the
test when it wants the reply to go on (a `gated` reply's gate is named after its message). Nothing here sleeps for timing, only to poll a gate.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from tether.agent import Agent, ModelConfig
from tether.message import ChatUsage, Msg, ToolCallBlock, ToolResultBlock
from tether.model import ScriptedChatModel
from tether.model._types import (
    ChatRequest,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)
from tether.plugin import Plugin
from tether.tool import Toolkit, tool
from tether.tool.builtin import Bash, Edit, Write

GATES = Path(os.environ.get("TETHER_WEB_GATES", "/nonexistent"))

HELLO = (
    "Hello from **tether**. Here is some `inline code` and a block:\n\n"
    '```python\ndef greet(name):\n    return f"hi {name}"  # friendly\n```\n\n'
    "- one\n- two\n\nThat is all."
)
MARKUP = (
    '<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> '
    "[click me](javascript:window.pwned=3) **<b>bold?</b>**\n\n```html\n<iframe src=x></iframe>\n```"
)
LIVE_COMMAND = "echo first line; until [ -e gates/output ]; do sleep 0.05; done; echo second line"
LONG = "\n\n".join(f"Paragraph {n} of a long answer that fills the screen." for n in range(60))
SCROLL_COMMAND = "mkdir -p scrolled-dir; echo started; until [ -e gates/scrolled ]; do sleep 0.05; done; seq 1 40"
EXAMPLES = ["hello there", "think first", "send some markup"]
PART_ONE = "The first half of a long answer, streamed before the gate. "
PART_TWO = "The second half, streamed after the gate opened. The end."


def gate_name(text: str) -> str:
    """The gate a `gated` reply to `text` waits on (one per message, so tests never share)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


async def wait_gate(name: str) -> None:
    """Wait until the test creates the gate file `name`."""
    while not (GATES / name).exists():
        await asyncio.sleep(0.02)


def _text(text: str) -> list[Any]:
    """Deltas of `text` in small pieces."""
    return [TextDelta(text=text[i : i + 8]) for i in range(0, len(text), 8)]


def _calls(step: int, *calls: tuple[str, str]) -> list[Any]:
    return [
        ToolCallDelta(index=n, id=f"s{step}c{n}", name=name, arguments=args)
        for n, (name, args) in enumerate(calls)
    ]


def _reply_so_far(request: ChatRequest) -> tuple[str, Msg | None]:
    """The user's latest text and the reply in progress (None before the first step)."""
    user_text, reply = "", None
    for msg in request.messages:
        if msg.role == "user":
            user_text, reply = msg.get_text_content() or user_text, None
        elif msg.role == "assistant":
            reply = msg
    return user_text, reply


def _step_and_results(reply: Msg | None) -> tuple[int, list[ToolResultBlock]]:
    if reply is None:
        return 0, []
    steps = [int(b.id[1 : b.id.index("c")]) for b in reply.content if _ours(b)]
    return (max(steps) + 1 if steps else 0), reply.tool_results


def _ours(block: Any) -> bool:
    return isinstance(block, ToolCallBlock) and block.id.startswith("s") and "c" in block.id


SCRIPTS: dict[str, Callable[[int, list[ToolResultBlock], str], list[Any]]] = {
    "hello": lambda step, _, text: [
        *_text(HELLO),
        UsageDelta(ChatUsage(input_tokens=1200, output_tokens=34)),
    ],
    "think": lambda step, _, text: [
        ThinkingDelta(text="Weighing it up quietly."),
        *_text("Decided."),
    ],
    "live output": lambda step, results, text: (
        _calls(0, ("Bash", json.dumps({"command": LIVE_COMMAND})))
        if step == 0
        else _text("The command finished.")
    ),
    "write a file": lambda step, results, text: (
        _calls(
            0, ("Write", json.dumps({"file_path": "notes.txt", "content": "line one\nline two\n"}))
        )
        if step == 0
        else _text(f"Write: {results[-1].state.value}.")
    ),
    "edit the file": lambda step, results, text: (
        _calls(
            0,
            (
                "Edit",
                json.dumps(
                    {"file_path": "notes.txt", "old_string": "line two", "new_string": "line 2"}
                ),
            ),
        )
        if step == 0
        else _text(f"Edit: {results[-1].state.value}.")
    ),
    "markup": lambda step, _, text: _text(MARKUP),
    "notes": lambda step, _, text: (
        _calls(0, ("activate_plugin", '{"module_name": "note", "rounds": 3}'))
        if step == 0
        else _text("Notes are awake.")
    ),
    "concurrent": lambda step, results, text: (
        _calls(0, ("lookup", '{"topic": "alpha"}'), ("lookup", '{"topic": "beta"}'))
        if step == 0
        else _text("Both lookups finished: " + ", ".join(r.get_text() for r in results) + ".")
    ),
    "always": lambda step, results, text: (
        _calls(step, ("Bash", '{"command": "mkdir -p made' + str(step) + '"}'))
        if step < 2
        else _text(f"Ran {len(results)} commands.")
    ),
    "deny": lambda step, results, text: (
        _calls(0, ("Bash", '{"command": "rm -rf precious"}'))
        if step == 0
        else _text(f"Understood: the call was {results[-1].state.value}, so I left it alone.")
    ),
    "meter": lambda step, _, text: [
        *_text("Measured."),
        UsageDelta(ChatUsage(input_tokens=100 * len(text), output_tokens=10)),
    ],
    "with a reason": lambda step, results, text: (
        _calls(0, ("Bash", '{"command": "rm -rf keepsake"}'))
        if step == 0
        else _text(f"The model was told: {results[-1].get_text()}")
    ),
    "mode switch": lambda step, results, text: (
        _calls(0, ("Bash", '{"command": "mkdir -p moded"}'))
        if step == 0
        else _text(f"The mkdir call: {results[-1].state.value}.")
    ),
    "deploy": lambda step, results, text: (
        _calls(0, ("deploy", '{"version": "2.0"}'))
        if step == 0
        else _text(f"The deploy reported: {results[-1].get_text()}")
    ),
    "fetch both": lambda step, results, text: (
        _calls(
            0,
            ("fetch_page", '{"url": "https://a.example"}'),
            ("fetch_page", '{"url": "https://b.example"}'),
        )
        if step == 0
        else _text(
            "Results: " + "; ".join(f"{r.state.value}: {r.get_text()[:20]}" for r in results) + "."
        )
    ),
    "long then ask": lambda step, results, text: (
        [*_text(LONG), *_calls(0, ("Bash", json.dumps({"command": SCROLL_COMMAND})))]
        if step == 0
        else _text("All done at the bottom.")
    ),
    "forever": lambda step, _, text: [*_text(PART_ONE), "never", *_text(PART_TWO)],
    "gated": lambda step, _, text: [*_text(PART_ONE), gate_name(text), *_text(PART_TWO)],
    "delegate": lambda step, results, text: (
        _calls(0, ("scout", '{"task": "scout a folder"}'))
        if step == 0
        else _text(f"The scout said: {results[-1].get_text()}")
    ),
    "scout": lambda step, results, text: (  # the `scout` sub-agent's own script
        _calls(0, ("Bash", '{"command": "mkdir -p scouted"}'))
        if step == 0
        else _text(f"Scouted: {results[-1].state.value}.")
    ),
}


_FAILED_ONCE: set[str] = set()


def route(request: ChatRequest) -> list[Any] | BaseException:
    """The next step for this request: the script its user message names."""
    user_text, reply = _reply_so_far(request)
    if "flaky" in user_text and user_text not in _FAILED_ONCE:
        _FAILED_ONCE.add(user_text)  # the first attempt fails, its retry answers
        return ConnectionError("the scripted network blinked")
    step, results = _step_and_results(reply)
    for word, script in SCRIPTS.items():
        if word in user_text.lower():
            return script(step, results, user_text)
    return _text(f"You said: {user_text}")


class GatedScriptedModel(ScriptedChatModel):
    """A `ScriptedChatModel` whose streams may pause at a gate (a string in the deltas)."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """Play the routed step, waiting at its gates."""
        async for item in super().stream(request):
            if isinstance(item, str):
                await wait_gate(item)
                continue
            yield item


@tool(is_read_only=True, is_concurrency_safe=True)
async def lookup(topic: str) -> str:
    """Look a topic up (waits for the test's `lookups` gate, so both calls run at once)."""
    await wait_gate("lookups")
    return f"{topic} found"


@tool(is_concurrency_safe=True, requires_confirmation=True)
def fetch_page(url: str) -> str:
    """Fetch a page (asks first; runs concurrently with other fetches)."""
    return f"page of {url}"


@tool(is_external_tool=True)
def deploy(version: str) -> str:
    """Deploy a version (runs outside the agent: the user pastes its result)."""
    raise AssertionError("external tools never run in the agent")


def add_note(title: str) -> str:
    """Save a note."""
    return f"saved {title}"


NOTES = Plugin(
    name="Notes",
    module_name="note",
    description="Keeps notes",
    tools=[add_note],
    prompt="Keep titles short.",
    allow_sleep=True,
    sleep_brief="Keeps notes; wake it when the user wants to take notes.",
)


def make_agents() -> dict[str, Agent]:
    """The agents `tether serve --agents web_agents:make_agents` serves."""
    model = GatedScriptedModel([route] * 100_000, context_length=32_000)
    scout = Agent("scout", "You scout.", model, toolkit=Toolkit(tools=[Bash()]))
    agent = Agent(
        "helper",
        "You are a scripted helper for browser tests.",
        model,
        toolkit=Toolkit(
            tools=[Bash(), Write(), Edit(), lookup, fetch_page, deploy, scout.as_tool()],
            plugins=[NOTES],
        ),
        model_config=ModelConfig(initial_retry_delay=0.05, max_retry_delay=0.05),
    )
    agent.examples = EXAMPLES  # type: ignore[attr-defined]  # the empty page's prompts
    return {"helper": agent}
