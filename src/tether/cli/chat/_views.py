"""What `/context`, `/cost`, `/mcp` and `/plugins` show, and the status line."""

from __future__ import annotations

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
    """`openai:gpt-4o · 1.2k/128.0k tokens · mode default`."""
    state = chat.agent.state
    window = chat.agent.model.context_length
    mode = state.permission_context.mode.value
    used = f"{_k(state.estimated_tokens)}/{_k(window)} tokens"
    return f"{model_label(chat.model_spec)} · {used} · mode {mode}"


async def context_lines(chat: Chat) -> list[str]:
    """The window split by what fills it (estimates)."""
    state = chat.agent.state
    parts = {"system prompt": estimate_text_tokens(chat.agent.system_prompt)}
    parts["summary"] = estimate_text_tokens(state.summary or "")
    kinds = {"user messages": 0, "text": 0, "thinking": 0, "tool calls": 0, "tool results": 0}
    for msg in state.context:
        for block in msg.content:
            tokens = estimate_block_tokens(block)
            if msg.role == "user" and isinstance(block, TextBlock):
                kinds["user messages"] += tokens
            elif isinstance(block, TextBlock):
                kinds["text"] += tokens
            elif isinstance(block, ThinkingBlock):
                kinds["thinking"] += tokens
            elif isinstance(block, ToolCallBlock):
                kinds["tool calls"] += tokens
            elif isinstance(block, ToolResultBlock):
                kinds["tool results"] += tokens
    parts.update(kinds)
    window = chat.agent.model.context_length
    lines = [
        f"context: {_k(state.estimated_tokens)} of {_k(window)} tokens "
        f"({100 * state.estimated_tokens / max(window, 1):.1f}%), {len(state.context)} messages"
    ]
    lines += [f"  {name:<14} {_k(tokens):>7}" for name, tokens in parts.items()]
    if chat.instructions:
        lines.insert(2, "    of which instructions:")
        for n, found in enumerate(chat.instructions, 3):
            lines.insert(n, f"      {found.label}  {_k(estimate_text_tokens(found.text))} tokens")
    return lines


def cost_lines(chat: Chat) -> list[str]:
    """The session's tokens as the providers reported them, and what they cost.

    The cost is the state's running total of each model call's cost (from the price
    table, `tether.model.price_for`); calls of a model without a price add nothing, and a
    session with none priced says so rather than show $0.
    """
    usage = chat.agent.state.usage
    lines = [
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
