"""`/context` parts add up to its total and the status line; `/cost` matches the status line."""

from __future__ import annotations

import re

import pytest

PART = re.compile(r"^  (\S.*?)\s+(-?\d+)$")


def _context(screen: str) -> tuple[int, dict[str, int]]:
    block = screen.rsplit("/context", 1)[1]
    lines = block.splitlines()
    parts = {m.group(1): int(m.group(2)) for m in map(PART.match, lines) if m}
    header = next(line for line in lines if line.startswith("context: "))
    return parts.pop("total"), parts | {"header": header}  # type: ignore[dict-item]


@pytest.mark.parametrize("reported", [False, True])
def test_context_parts_sum_to_the_total_and_the_status_line(terminal, script, reported) -> None:
    step: dict = {"text": "Hello there, " + "word " * 40}
    if reported:
        step["usage"] = {"input_tokens": 300, "output_tokens": 56}
    term = terminal("--model", script([step]))
    term.prompt_ready(1)
    term.type("say hello " * 20)
    term.wait_for("Hello there")
    status = re.findall(r"context (\S+)/128\.0k", term.prompt_ready(2))[-1]
    term.type("/context")
    screen = term.wait_for(r"(?m)^  total\s+\d+$")
    total, parts = _context(screen)
    header = parts.pop("header")
    assert sum(parts.values()) == total  # type: ignore[arg-type]
    shown = f"{total / 1000:.1f}k" if total >= 1000 else str(total)
    assert header.startswith(f"context: {shown} of 128.0k tokens")
    assert status == shown
    assert {"system prompt", "tools", "user messages", "text"} <= set(parts)
    assert ("model's count - estimates" in parts) is reported
    assert term.leave() == 0


def test_cost_matches_the_status_line(terminal, script) -> None:
    steps = [
        {"text": "One.", "usage": {"input_tokens": 300, "output_tokens": 56}},
        {"text": "Two.", "usage": {"input_tokens": 400, "output_tokens": 44}},
    ]
    term = terminal("--model", script(steps))
    term.prompt_ready(1)
    term.type("first")
    term.wait_for("One.")
    term.prompt_ready(2)
    term.type("second")
    term.wait_for("Two.")
    screen = term.prompt_ready(3)
    assert re.findall(r"· (\S+) tokens this session", screen)[-1] == "800"
    term.type("/cost")
    screen = term.wait_for(r"cost: +unknown")
    assert "this session:  800 tokens" in screen
    assert "input tokens:  700" in screen and "output tokens: 100" in screen
    assert term.leave() == 0
