"""States for storage tests: one that uses every field, and random edits of a context."""

from __future__ import annotations

import random

from tether.message import (
    AssistantMsg,
    Base64Source,
    ChatUsage,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.permission import PermissionContext, PermissionMode, PermissionRule
from tether.state import AgentState, ReplyCursor

__all__ = ["edit_randomly", "rich_state"]


def rich_state(messages: int = 6) -> AgentState:
    """A state with every field set and a paused reply whose message is the last one."""
    state = AgentState(
        summary="Earlier: the user asked to deploy; «prod» was chosen. 🚀",
        permission_context=PermissionContext(
            mode=PermissionMode.ACCEPT_EDITS,
            allow_rules=[PermissionRule.parse("Bash(git diff:*)")],
            deny_rules=[PermissionRule.parse("Read(secrets/**)")],
            working_directories=["/srv/app"],
        ),
        tool_state={"Bash": {"cwd": "/srv/app", "env": {"A": "1"}}},
        plugins={"git": 2, "search": 1},
        usage=ChatUsage(input_tokens=1200, output_tokens=340, reasoning_tokens=12),
        token_anchor=1540,
        tokens_since_anchor=37,
    )
    for i in range(max(0, messages - 1)):
        state.add_message(_plain(i))
    reply = AssistantMsg(
        "agent",
        [
            ThinkingBlock(thinking="I should check the diff first.", signature="sig=="),
            TextBlock(text="Let me look."),
            ToolCallBlock(
                id="call-1",
                name="Bash",
                input='{"command": "git diff"}',
                state=ToolCallState.FINISHED,
            ),
            ToolResultBlock(id="call-1", name="Bash", output="diff --git a b"),
            ToolCallBlock(
                id="call-2",
                name="Bash",
                input='{"command": "make deploy"}',
                state=ToolCallState.ASKING,
                suggested_rules=[PermissionRule.parse("Bash(make deploy)")],
            ),
        ],
        metadata={"awaiting": ["call-2"]},
        usage=ChatUsage(input_tokens=100, output_tokens=20),
    )
    state.add_message(reply)
    state.reply = ReplyCursor(reply_id=reply.id, iteration=2)
    return state


def _plain(i: int) -> Msg:
    msg: Msg
    if i % 3 == 0:
        msg = UserMsg("user", f'question {i}: ünïcode \u2028 and "quotes" \\ {{braces}}')
    elif i % 3 == 1:
        msg = AssistantMsg(
            "agent",
            [TextBlock(text=f"answer {i}"), HintBlock(hint="stay concise")],
            metadata={"i": i},
        )
    else:
        msg = UserMsg(
            "user",
            [
                TextBlock(text=f"see image {i}"),
                DataBlock(source=Base64Source(media_type="image/png", data="iVBORw0KGgo=")),
            ],
        )
    return msg


def edit_randomly(state: AgentState, rng: random.Random) -> str:
    """Apply one random edit of the kinds a real session sees; return its name."""
    kind = rng.choice(
        ["append", "append", "grow_last", "grow_last", "edit_middle", "head", "compress", "clear"]
        if state.context
        else ["append", "head"]
    )
    if kind == "append":
        for _ in range(rng.randint(1, 3)):
            state.add_message(_plain(rng.randint(0, 10_000)))
    elif kind == "grow_last":
        last = state.context[-1]
        last.content.append(
            ToolResultBlock(
                id=f"call-{rng.randint(0, 999)}",
                name="Bash",
                output="x" * rng.randint(0, 50),
                state=rng.choice(list(ToolResultState)),
            )
        )
    elif kind == "edit_middle":  # a saved message is changed by replacing it (DESIGN §14)
        position = rng.randrange(len(state.context))
        msg = state.context[position]
        metadata = {**msg.metadata, "edited": rng.randint(0, 10**6)}
        state.context[position] = msg.model_copy(update={"metadata": metadata})
    elif kind == "head":
        state.plugins[f"p{rng.randint(0, 5)}"] = rng.randint(1, 20)
        state.tool_state.setdefault("Bash", {})["cwd"] = f"/tmp/{rng.randint(0, 99)}"
    elif kind == "compress":
        keep = rng.randint(0, min(3, len(state.context)))
        state.replace_context(state.context[len(state.context) - keep :], f"summary {rng.random()}")
    else:
        state.replace_context([], None)
    return kind
