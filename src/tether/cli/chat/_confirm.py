"""The permission prompt: a pause becomes questions, the answers a resume event."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tether.cli._sanitize import visible
from tether.cli.chat._calls import call_arguments, call_summary, rule_label
from tether.event import (
    ConfirmResult,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import ToolCallBlock

__all__ = ["Announce", "Answers", "Ask", "Choose", "ask_confirmation", "choices", "question"]

Ask = Callable[[str, str], Awaitable[str]]
"""Reads one line: `await ask(message, default)`; raises `KeyboardInterrupt`/`EOFError`."""
Choose = Callable[[str, list[tuple[str, str]]], Awaitable[str]]
"""Shows a question with `(key, label)` answers; the key chosen (a single-key menu)."""
Announce = Callable[[ToolCallBlock], None]
"""Draws the header of a question (after all output, in a style output cannot take)."""


@dataclass
class Answers:
    """What the user said about one pause."""

    event: UserConfirmResultEvent | UserInterruptEvent
    """The resume event to send."""
    reasons: list[str] = field(default_factory=list)
    """Why calls were rejected, for the model to read next."""


def question(call: ToolCallBlock) -> str:
    """`Allow Bash git status? [y]es / [a]lways (Bash(git status)) / [n]o, tell it why / [e]dit`.

    A sub-agent's call names who asks and offers `always here and in [p]arent` too.
    """
    rules = visible(", ".join(rule_label(r) for r in call.suggested_rules))
    path = call.metadata.get("agent_path")  # a sub-agent's call: name who asks
    always = f" / [a]lways ({rules})" if rules else ""
    if rules and path:
        always += " / always here and in [p]arent"
    who = f"{' › '.join(visible(str(n)) for n in path)} asks: " if path else ""
    return (
        f"{who}Allow {visible(call.name)} {visible(call_summary(call, width=200))}?"
        f" [y]es{always} / [n]o, tell it why / [e]dit "
    )


def choices(call: ToolCallBlock) -> list[tuple[str, str]]:
    """The menu's answers: yes, always (when a rule is suggested), no, edit.

    A sub-agent's call with a suggested rule also gets "always, here and in the parent".
    """
    rules = visible(", ".join(rule_label(r) for r in call.suggested_rules))
    always = [("a", f"Yes, and always allow {rules}")] if rules else []
    if rules and call.metadata.get("agent_path"):
        always.append(("p", f"Yes, and always allow {rules} here and in the parent agents"))
    return [
        ("y", "Yes"),
        *always,
        ("n", "No, and tell it why"),
        ("e", "Edit the call, then run it"),
    ]


async def ask_confirmation(
    pause: RequireUserConfirmEvent,
    ask: Ask,
    announce: Announce | None = None,
    choose: Choose | None = None,
) -> Answers:
    """Ask about each call of `pause`; Ctrl+C interrupts the paused reply instead.

    With `choose`, each call is a single-key menu; without, a typed line (`y`, `a`, ...).
    """
    results: list[ConfirmResult] = []
    reasons: list[str] = []
    try:
        for call in pause.tool_calls:
            if announce is not None:
                announce(call)
            result, reason = await _one(call, ask, choose)
            results.append(result)
            if reason:
                reasons.append(f"I declined the {call.name} call ({call_summary(call)}): {reason}")
    except KeyboardInterrupt:
        return Answers(UserInterruptEvent(reply_id=pause.reply_id))
    return Answers(
        UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=results), reasons
    )


async def _one(call: ToolCallBlock, ask: Ask, choose: Choose | None) -> tuple[ConfirmResult, str]:
    while True:
        if choose is not None:
            answer = await choose(question(call).rstrip(), choices(call))
        else:
            answer = (await ask(question(call), "")).strip().lower()
        if answer in ("y", "yes"):
            return ConfirmResult(confirmed=True, tool_call=call), ""
        if answer in ("a", "always") and call.suggested_rules:
            return ConfirmResult(confirmed=True, tool_call=call, rules=call.suggested_rules), ""
        if answer in ("p", "parent") and call.suggested_rules and call.metadata.get("agent_path"):
            scoped = ConfirmResult(
                confirmed=True,
                tool_call=call,
                rules=call.suggested_rules,
                rules_scope="agent_and_parents",
            )
            return scoped, ""
        if answer in ("n", "no"):
            reason = (await ask("Tell it why (Enter to just say no): ", "")).strip()
            return ConfirmResult(confirmed=False, tool_call=call), reason
        if answer in ("e", "edit"):
            edited = await _edit(call, ask)
            if edited is not None:
                return ConfirmResult(confirmed=True, tool_call=edited), ""


async def _edit(call: ToolCallBlock, ask: Ask) -> ToolCallBlock | None:
    """The call with the input the user typed (Bash: the command; others: the JSON)."""
    args = call_arguments(call)
    if call.name == "Bash" and isinstance(args.get("command"), str):
        command = (await ask("Command: ", str(args["command"]))).strip()
        if not command:
            return None
        return call.model_copy(update={"input": json.dumps({**args, "command": command})})
    text = (await ask("Input (JSON): ", call.input)).strip()
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return call.model_copy(update={"input": json.dumps(value)})
