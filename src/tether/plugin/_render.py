"""The texts the model reads: the catalogue of briefs, plugin blocks, activation outcomes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from tether.plugin._plugin import Plugin
from tether.plugin._strategy import MAX_ACTIVE_ROUNDS, PluginVisibility
from tether.tool import ToolBase

__all__ = [
    "CATALOGUE_INTRO",
    "activated_text",
    "already_active_text",
    "always_awake_text",
    "clash_text",
    "disabled_text",
    "disabled_tool_hint",
    "extend_sleeping_text",
    "extended_text",
    "last_round_hint",
    "render_block",
    "render_catalogue",
    "render_status",
    "same_step_tool_hint",
    "sleeping_tool_hint",
    "unknown_text",
]

CATALOGUE_INTRO = (
    "Some plugins sleep to save context: only their brief is listed here and their tools "
    "are hidden. When a request needs one, call activate_plugin('<module_name>') (optionally "
    "with rounds=N) and continue in your next step, where its tools and full block appear. "
    "A plugin stays awake for a few replies, then sleeps again. A plugin that is awake now "
    "also has its full <plugin> block below."
)


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def render_catalogue(sleepable: Sequence[Plugin]) -> str:
    """The briefs of every plugin that may sleep, sorted: the same text whatever is awake."""
    if not sleepable:
        return ""
    lines = ["<plugin_catalogue>", CATALOGUE_INTRO]
    for p in sorted(sleepable, key=lambda p: p.module_name):
        lines.append(
            f'<plugin_brief module_name="{_attr(p.module_name)}" name="{_attr(p.name)}">'
            f"{p.sleep_brief.strip()}</plugin_brief>"
        )
    lines.append("</plugin_catalogue>")
    return "\n".join(lines)


def last_round_hint(module_name: str) -> str:
    """The hint an active plugin's block carries in its last visible reply."""
    return (
        f"Last visible run. Call extend_plugin_activation('{module_name}') now if you still "
        "need it next run."
    )


def _tool_line(tool: ToolBase) -> str:
    params = tool.input_schema.get("properties", {})
    args = ", ".join(params) if isinstance(params, dict) else ""
    summary = (tool.description or "").strip().splitlines()
    first = summary[0] if summary else ""
    return f"- {tool.name}({args}): {first}" if first else f"- {tool.name}({args})"


def render_block(
    plugin: Plugin,
    visibility: PluginVisibility,
    tools: Sequence[ToolBase],
    *,
    rounds_left: int | None = None,
    injected: str | None = None,
    hint: bool = False,
) -> str:
    """A plugin's full block: state, rounds left, prompt, injected text, tools, hint."""
    rounds = f' rounds_left="{rounds_left}"' if rounds_left is not None else ""
    lines = [
        f'<plugin name="{_attr(plugin.name)}" module_name="{_attr(plugin.module_name)}" '
        f'state="{visibility}"{rounds}>'
    ]
    if plugin.description.strip():
        lines.append(f"<description>{plugin.description.strip()}</description>")
    if plugin.prompt.strip():
        lines.append(f"<prompt>\n{plugin.prompt.strip()}\n</prompt>")
    if injected:
        lines.append(f"<injected_prompt>\n{injected.strip()}\n</injected_prompt>")
    if tools:
        lines.append("<tools>")
        lines.extend(_tool_line(t) for t in tools)
        lines.append("</tools>")
    if hint:
        lines.append(f"<activation_hint>{last_round_hint(plugin.module_name)}</activation_hint>")
    lines.append("</plugin>")
    return "\n".join(lines)


def render_status(
    plugin: Plugin, *, rounds_left: int | None, injected: str | None = None, hint: bool = False
) -> str:
    """An awake plugin's status, for requests that already hold its block (its wake's answer).

    What changes while it is awake: rounds left, the injected text, the last-run hint.
    """
    rounds = f' rounds_left="{rounds_left}"' if rounds_left is not None else ""
    lines = [
        f'<plugin_status module_name="{_attr(plugin.module_name)}" state="active"{rounds}>'
        "Its full block and tools are in the answer that woke it."
    ]
    if injected:
        lines.append(f"<injected_prompt>\n{injected.strip()}\n</injected_prompt>")
    if hint:
        lines.append(f"<activation_hint>{last_round_hint(plugin.module_name)}</activation_hint>")
    lines.append("</plugin_status>")
    return "\n".join(lines)


def activated_text(module_name: str, rounds: int, block: str) -> str:
    """The tool result of a successful activation (the seed's wording)."""
    runs = "run" if rounds == 1 else "runs"
    return (
        f"Plugin `{module_name}` is now activated for the next {rounds} {runs}.\n"
        "The full plugin block is returned below and is now the source of truth for this "
        "capability.\n"
        "Stop here and continue in the next agent step.\n\n"
        f"{block}"
    )


def already_active_text(module_name: str, runs_after_this: int, *, next_step: bool) -> str:
    """The answer to activating a plugin that is already awake for some replies.

    `next_step`: it was woken in this same step, so its tools come in the next one.
    """
    when = (
        "it was woken in this same step, so its tools are callable from your next step"
        if next_step
        else "its tools are available now"
    )
    return (
        f"Plugin `{module_name}` is already active, with {runs_after_this} more run(s) after "
        f"this one; {when}. To keep it awake longer, call "
        f"extend_plugin_activation('{module_name}', rounds=N) instead."
    )


def clash_text(module_name: str, clashes: Mapping[str, str]) -> str:
    """The error for waking a plugin whose tool names an awake plugin already uses."""
    names = ", ".join(f"`{n}`" for n in sorted(clashes))
    owners = ", ".join(f"`{m}`" for m in sorted(set(clashes.values())))
    return (
        f"Error: plugin `{module_name}` was not activated: its tool(s) {names} have the same "
        f"name as tools of the awake plugin(s) {owners}. Use those tools instead; "
        f"`{module_name}` can be activated once they are asleep."
    )


def always_awake_text(module_name: str) -> str:
    """The answer to activating or extending a plugin that never sleeps."""
    return (
        f"Plugin `{module_name}` is always awake and needs no activation; use its tools directly."
    )


def unknown_text(module_name: str, activatable: Sequence[str], close: str | None) -> str:
    """The error for a module name no enabled plugin has."""
    did_you_mean = f" Did you mean '{close}'?" if close else ""
    names = ", ".join(activatable) if activatable else "(none)"
    return (
        f"Error: there is no plugin `{module_name}`.{did_you_mean} Plugins you can "
        f"activate: {names}."
    )


def disabled_text(module_name: str) -> str:
    """The error for a plugin the operator disabled."""
    return (
        f"Error: plugin `{module_name}` is disabled in this deployment and cannot be "
        "activated. Do without it, or tell the user it is unavailable."
    )


def extended_text(module_name: str, added: int, runs_after_this: int, capped: bool) -> str:
    """The answer to a successful extension."""
    cap = f" (capped at {MAX_ACTIVE_ROUNDS} runs)" if capped else ""
    return (
        f"Plugin `{module_name}` extended by {added} run(s){cap}: it stays awake for the "
        f"next {runs_after_this} run(s) after this one."
    )


def extend_sleeping_text(module_name: str) -> str:
    """The error for extending a plugin that is asleep."""
    return (
        f"Error: plugin `{module_name}` is asleep, so there is nothing to extend. Call "
        f"activate_plugin('{module_name}') to wake it."
    )


def sleeping_tool_hint(tool_name: str, module_name: str) -> str:
    """The error result for a call to a tool of a sleeping plugin (the call did not run)."""
    return (
        f"Error: `{tool_name}` belongs to the plugin `{module_name}`, which is asleep, so the "
        f"call was not run. Call activate_plugin('{module_name}') first; its tools become "
        "callable in your next step."
    )


def same_step_tool_hint(tool_name: str, module_name: str) -> str:
    """The error for a call made in the same step that activated its plugin (not run)."""
    return (
        f"Error: the plugin `{module_name}` was activated in this same step, so `{tool_name}` "
        "did not run. Its tools and full block are available from your next step: check the "
        "block, then call the tool again."
    )


def disabled_tool_hint(tool_name: str, module_name: str) -> str:
    """The error for a call to a tool of a disabled plugin (not run)."""
    return (
        f"Error: `{tool_name}` belongs to the plugin `{module_name}`, which is disabled in "
        "this deployment; the call was not run and cannot be."
    )
