"""What `/context`, `/cost`, `/mcp` and `/plugins` show, and the status line."""

from __future__ import annotations

import json
from pathlib import Path

from tether.cli.chat._chat import Chat
from tether.context import estimate_block_tokens, estimate_text_tokens
from tether.message import TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tether.model import price_for

__all__ = [
    "context_lines",
    "cost_lines",
    "model_label",
    "plugin_lines",
    "status_line",
]


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def model_label(spec: str) -> str:
    """The model spec, with a script file shown by its name only."""
    if spec.startswith("scripted:"):
        return "scripted:" + Path(spec.removeprefix("scripted:")).name
    return spec


def status_line(chat: Chat) -> str:
    """`openai:gpt-4o · context 1.2k/128.0k · 2.5k tokens this session · mode default`.

    The context figure is `/context`'s total, the session figure `/cost`'s.
    """
    state = chat.agent.state
    window = _k(chat.agent.model.context_length)
    mode = state.permission_context.mode.value
    used = _k(sum(context_parts(chat).values()))
    spent = _k(state.usage.input_tokens + state.usage.output_tokens)
    return f"{model_label(chat.model_spec)} · context {used}/{window} · {spent} tokens this session · mode {mode}"


def context_parts(chat: Chat) -> dict[str, int]:
    """The context split by what fills it; the parts sum to the context's size.

    Before the model reports a count, every part is an estimate. Once it has, the size is
    its count plus estimates of what came after (`AgentState.estimated_tokens`), and the
    difference from the estimated parts (tool definitions, framing, estimate error) is a
    part of its own.
    """
    state = chat.agent.state
    parts = {"system prompt": estimate_text_tokens(chat.agent.system_prompt)}
    parts["tools"] = sum(
        estimate_text_tokens(json.dumps(tool.json_schema()))
        for tool in chat.agent.toolkit.tools.values()
    )
    parts["summary"] = estimate_text_tokens(state.summary or "")
    kinds = {"user messages": 0, "text": 0, "thinking": 0, "tool calls": 0, "tool results": 0}
    for msg in state.context:
        for block in msg.content:
            kinds[_kind(msg.role, block)] += estimate_block_tokens(block)
    parts.update(kinds)
    if state.token_anchor:
        parts["model's count - estimates"] = state.estimated_tokens - sum(parts.values())
    return parts


def _kind(role: str, block: object) -> str:
    if isinstance(block, TextBlock):
        return "user messages" if role == "user" else "text"
    if isinstance(block, ThinkingBlock):
        return "thinking"
    if isinstance(block, ToolCallBlock):
        return "tool calls"
    return "tool results" if isinstance(block, ToolResultBlock) else "text"


async def context_lines(chat: Chat) -> list[str]:
    """The window split by what fills it; the parts add up to the total shown."""
    state = chat.agent.state
    parts = context_parts(chat)
    total = sum(parts.values())
    window = chat.agent.model.context_length
    lines = [
        f"context: {_k(total)} of {_k(window)} tokens "
        f"({100 * total / max(window, 1):.1f}%), {len(state.context)} messages"
    ]
    lines += [f"  {name:<26} {tokens:>7}" for name, tokens in parts.items()]
    lines.append(f"  {'total':<26} {total:>7}")
    if chat.instructions:
        lines.insert(2, "    of which instructions:")
        for n, found in enumerate(chat.instructions, 3):
            lines.insert(n, f"      {found.label}  {_k(estimate_text_tokens(found.text))} tokens")
    return lines


def cost_lines(chat: Chat) -> list[str]:
    """The session's tokens as the providers reported them, and what they cost.

    The cost is the state's running total of each model call's cost (from the price
    table, `tether.model.price_for`); calls of a model without a price add nothing, and a
    session with none priced says so rather than show $0. The first line's total is the
    status line's "tokens this session".
    """
    usage = chat.agent.state.usage
    total = usage.input_tokens + usage.output_tokens
    lines = [
        f"this session:  {_k(total)} tokens (input + output, as the models reported them)",
        f"input tokens:  {usage.input_tokens}",
        f"output tokens: {usage.output_tokens}",
        f"cache read:    {usage.cache_read_tokens}",
        f"cache write:   {usage.cache_write_tokens}",
        f"cost:          {_usd(usage.cost) if usage.cost is not None else 'unknown'}",
    ]
    model = chat.agent.model.model_name
    price = price_for(model)
    if price is None:
        lines.append(
            f"  no price for {model_label(model)!r} (set one with `tether.model.set_price`)"
        )
        return lines
    cached = f", cached input ${price.cached_input:.2f}" if price.cached_input is not None else ""
    dated = f", as of {price.as_of}" if price.as_of else ""
    lines.append(
        f"  {model}: ${price.input:.2f} input / ${price.output:.2f} output per million "
        f"tokens{cached}{dated}"
    )
    return lines


def _usd(value: float) -> str:
    if value >= 1 or value == 0:
        return f"${value:,.2f}"
    return f"${value:.6f}".rstrip("0")


def plugin_lines(chat: Chat) -> list[str]:
    """Configured plugins, awake (with rounds left) or asleep."""
    awake = chat.agent.state.plugins
    if not chat.plugin_names and not awake:
        return ['no plugins (add `plugins = ["module:attribute"]` to .tether/config.toml)']
    lines = []
    for name in dict.fromkeys([*chat.plugin_names, *awake]):
        rounds = awake.get(name)
        lines.append(f"{name}: awake, {rounds} rounds left" if rounds else f"{name}: asleep")
    return lines
