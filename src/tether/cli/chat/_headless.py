"""Headless `-p`: one reply, no questions; text, one JSON result, or JSON lines of events.

A call that would ask is rejected (the model sees it denied) and reported in `denied`,
unless `--permission-mode` or `--allow` lets it run.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tether.cli._sanitize import json_visible, visible
from tether.cli.chat._chat import Chat, Inputs, is_asking
from tether.event import (
    AgentEvent,
    ConfirmResult,
    ModelCallEndEvent,
    ReplyEndEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
    event_adapter,
)
from tether.message import Msg, TextBlock, ToolCallBlock, ToolResultBlock, UserMsg

__all__ = ["run_headless"]


class _Run:
    """What the stream showed: the final message, the steps, the last stop reason."""

    def __init__(self, output_format: str) -> None:
        self.output_format = output_format
        self.final: Msg | None = None
        self.num_iters = 0
        self.stop_reason: str | None = None

    def __call__(self, event: AgentEvent) -> None:
        if self.output_format == "stream-json":
            sys.stdout.write(json_visible(event_adapter.dump_json(event).decode()) + "\n")
            sys.stdout.flush()
        if isinstance(event, ModelCallEndEvent):
            self.num_iters += 1
            self.stop_reason = event.stop_reason
        elif isinstance(event, ReplyEndEvent):
            self.final = event.msg


async def run_headless(chat: Chat, prompt: str, output_format: str) -> int:
    """Run one reply to the end; print the result; return the exit status."""
    state = chat.agent.state
    before = state.usage.model_copy()
    run = _Run(output_format)
    denied: list[dict[str, Any]] = []
    error: BaseException | None = None
    inputs: Inputs = UserMsg("user", prompt)
    try:
        cursor = state.reply
        if is_asking(state) and cursor is not None:  # nobody can answer: end that reply
            await chat.stream(UserInterruptEvent(reply_id=cursor.reply_id), lambda _: None)
        while inputs is not None:
            pause = await chat.stream(inputs, run)
            inputs = None
            if pause is not None:
                denied += [{"name": c.name, "input": _input(c.input)} for c in pause.tool_calls]
                inputs = UserConfirmResultEvent(
                    reply_id=pause.reply_id,
                    confirm_results=[
                        ConfirmResult(confirmed=False, tool_call=c) for c in pause.tool_calls
                    ],
                )
    except Exception as exc:  # a model or tool-source failure: reported, exit 1
        error = exc
    usage = chat.agent.state.usage
    text = _final_text(run.final)
    result = {
        "type": "result",
        "result": f"{type(error).__name__}: {error}" if error is not None else text,
        "session_id": chat.agent.state.session_id,
        "usage": {
            "input_tokens": usage.input_tokens - before.input_tokens,
            "output_tokens": usage.output_tokens - before.output_tokens,
        },
        "total_cost_usd": _spent(before.cost, usage.cost),
        "num_iters": run.num_iters,
        "is_error": error is not None,
        "stop_reason": "error" if error is not None else (run.stop_reason or "stop"),
        "denied": denied,
    }
    _print(output_format, result, text, error)
    return 1 if error is not None else 0


def _spent(before: float | None, after: float | None) -> float | None:
    """What this run cost (`None`: no call had a price)."""
    if after is None:
        return None
    return after - (before or 0.0)


def _final_text(msg: Msg | None) -> str:
    """The text after the reply's last tool call (the answer), else its last text."""
    if msg is None:
        return ""
    texts: list[str] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolCallBlock | ToolResultBlock):
            texts = []
    if texts:
        return "\n".join(texts)
    last = msg.get_content_blocks(TextBlock)
    return last[-1].text if last else ""


def _input(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _print(
    output_format: str, result: dict[str, Any], text: str, error: BaseException | None
) -> None:
    if output_format == "text":
        if error is not None:
            print(f"tether chat: {visible(result['result'])}", file=sys.stderr)
        else:
            print(visible(text))
        return
    print(json_visible(json.dumps(result, ensure_ascii=False)))
