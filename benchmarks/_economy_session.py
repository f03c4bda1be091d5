"""The scripted 30-turn session of `token_economy.py`, run through the real agent loop.

40 plugins x 5 tools (the schemas and blocks of `plugin_tokens.py`), two skills, one user
message of ~30 tokens per turn, one tool call per turn whose result is ~200 tokens, and an
~80-token answer. With scheduling, the model wakes a plugin before using it and extends
it when it is in its last run and still needed; the plugins expire by themselves. One
compression happens before turn `COMPRESS_AT`. Every `ChatRequest` the loop sends is kept.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plugin_tokens import DOMAINS, SYSTEM, BenchTool, make_plugin
from pydantic import BaseModel

from tether import Agent, UserMsg
from tether.context import ContextConfig
from tether.event import PluginActivatedEvent, PluginSleptEvent
from tether.message import ToolResultBlock
from tether.model import ChatModelBase, ChatRequest, ModelDelta, TextDelta, ToolCallDelta
from tether.tool import ToolContext, Toolkit

RESULT = (
    "Found 3 matching records. 1) id=rec_8841, title 'Quarterly planning', updated "
    "2026-02-11 by Dana Whitfield, tags: planning, finance, q1; 42 comments, status open, "
    "owner team Platform. 2) id=rec_8790, title 'Vendor contract renewal', updated "
    "2026-02-09 by Omar Haddad, tags: legal, vendors; 7 comments, status waiting on legal "
    "review, due 2026-03-01. 3) id=rec_8702, title 'Office move checklist', updated "
    "2026-02-02 by Lena Park, tags: facilities; 15 comments, status in progress, 9 of 14 "
    "items done. 12 more records match; refine the query or raise the limit to see them. "
    "Ids are stable and can be passed to the get, update and delete tools of this plugin."
)
"""A tool result of about 200 tokens."""

ANSWER = (
    "Here is what I found: three records match, the newest being 'Quarterly planning' "
    "(rec_8841), updated on 11 February by Dana, with 42 comments and still open. The "
    "vendor contract renewal waits on legal review until 1 March, and the office move is "
    "9 of 14 items done. Shall I open one of them or refine the search?"
)
"""A final answer of about 80 tokens."""

SUMMARY = (
    "The user works through their notes, calendar, email, GitHub issues and CRM records "
    "with the assistant. Records found so far: rec_8841 'Quarterly planning' (open, 42 "
    "comments), rec_8790 'Vendor contract renewal' (waiting on legal until 1 March), "
    "rec_8702 'Office move checklist' (9 of 14 done). The user prefers short answers."
)

SKILLS = {
    "release-notes": "Write release notes from merged pull requests.",
    "incident-report": "Write a post-incident report from alerts and chat logs.",
}

# The plugin each turn needs (or a skill to open). Scheduled, this makes 4 wakes (note,
# calendar, github, crm), 2 extensions (across the skill turns) and 4 expiries.
PLAN: list[str] = [
    *["note"] * 3,
    *["calendar"] * 4,
    "skill:release-notes",
    "calendar",
    *["github"] * 7,
    "skill:incident-report",
    "github",
    *["crm"] * 12,
]
assert len(PLAN) == 30
COMPRESS_AT = 18
"""The turn (1-based) before which the context is compressed."""
VERBS = ("search", "get", "update")


def user_text(turn: int, need: str) -> str:
    """The user's message of `turn` (about 30 tokens)."""
    if need.startswith("skill:"):
        what = f"follow the {need[6:]} skill for this week's work"
    else:
        what = f"{VERBS[turn % 3]} the {need} records about the quarterly planning work"
    return (
        f"Turn {turn}: please {what}, and tell me briefly what changed since we last "
        "looked, so I can decide what to do next today."
    )


def _run_after(turn: int, need: str, *, gaps: int) -> int:
    """How many turns after `turn` (1-based) need `need` in a row, skipping `gaps` others."""
    count, skipped = 0, 0
    for later in PLAN[turn:]:
        if later == need:
            count += 1 + skipped
            skipped = 0
        elif skipped < gaps:
            skipped += 1
        else:
            break
    return count


class ResultTool(BenchTool):
    """A plugin tool that answers with `RESULT`."""

    is_read_only = True

    async def call(self, tool_input: BaseModel, context: ToolContext) -> str:
        return RESULT


class Director(ChatModelBase):
    """The model of the session: decides each step from the plan and the session state."""

    def __init__(self, *, scheduled: bool) -> None:
        super().__init__("director", context_length=200_000)
        self.scheduled = scheduled
        self.agent: Agent | None = None
        self.turn = 0
        self.calls = 0
        self.requests: list[tuple[int, ChatRequest]] = []
        """Each reasoning request with its turn (the summarising call is not kept)."""

    def _call(self, name: str, args: dict[str, Any]) -> list[ModelDelta]:
        self.calls += 1
        call_id = f"call_{self.calls:03d}"
        return [ToolCallDelta(index=0, id=call_id, name=name, arguments=json.dumps(args))]

    def _use(self, need: str) -> list[ModelDelta]:
        tool = f"{need}_{VERBS[self.turn % 3]}"
        return self._call(tool, {"query": "q1"} if tool.endswith("search") else {"id": "r8841"})

    def _decide(self, request: ChatRequest) -> list[ModelDelta]:
        assert self.agent is not None
        need = PLAN[self.turn - 1]
        content = request.messages[-1].content
        last = content[-1] if content else None
        if isinstance(last, ToolResultBlock):
            if last.name in ("activate_plugin", "extend_plugin_activation"):
                return self._use(need)
            return [TextDelta(ANSWER)]
        if need.startswith("skill:"):
            return self._call("Skill", {"name": need[6:]})
        left = self.agent.state.plugins.get(need, 0)
        if self.scheduled and left == 0:
            rounds = max(1, _run_after(self.turn, need, gaps=0))
            return self._call("activate_plugin", {"module_name": need, "rounds": rounds})
        if self.scheduled and left == 1 and _run_after(self.turn, need, gaps=1) > 0:
            rounds = _run_after(self.turn, need, gaps=1)
            return self._call("extend_plugin_activation", {"module_name": need, "rounds": rounds})
        return self._use(need)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """The next step; the summarising call of the compression gets `SUMMARY`."""
        if not request.tools:
            yield TextDelta(SUMMARY)
            return
        self.requests.append((self.turn, request))
        for delta in self._decide(request):
            yield delta


@dataclass
class Session:
    """What one run of the session produced."""

    requests: list[tuple[int, ChatRequest]]
    events: dict[str, int]


def _skills_dir(root: Path) -> Path:
    for name, description in SKILLS.items():
        folder = root / name
        folder.mkdir(parents=True)
        steps = (f"Step {i}: gather, check and write up part {i} of the work." for i in range(20))
        body = " ".join(steps)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{body}\n"
        )
    return root


async def run_session(*, scheduled: bool) -> Session:
    """Play the 30 turns; return the requests and the count of plugin events."""
    plugins = [make_plugin(*d, sleeps=scheduled, tool_class=ResultTool) for d in DOMAINS]
    director = Director(scheduled=scheduled)
    events = {"woken": 0, "extended": 0, "expired": 0}
    with tempfile.TemporaryDirectory() as tmp:
        toolkit = Toolkit(plugins=plugins, skills_or_loaders=[str(_skills_dir(Path(tmp)))])
        agent = Agent("bench", SYSTEM, director, toolkit)
        director.agent = agent
        for turn in range(1, len(PLAN) + 1):
            director.turn = turn
            if turn == COMPRESS_AT:
                # keep ~4k tokens of recent turns verbatim, summarise the rest
                await agent.compress_context(ContextConfig(reserve_ratio=0.02))
            before = dict(agent.state.plugins)
            message = UserMsg("user", user_text(turn, PLAN[turn - 1]))
            async for event in agent.reply_stream(message):
                if isinstance(event, PluginActivatedEvent):
                    key = "extended" if before.get(event.module_name, 0) > 0 else "woken"
                    events[key] += 1
                elif isinstance(event, PluginSleptEvent):
                    events["expired"] += 1
    return Session(director.requests, events)


__all__ = ["COMPRESS_AT", "PLAN", "Session", "run_session"]
