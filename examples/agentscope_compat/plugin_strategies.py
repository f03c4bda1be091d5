"""What it shows: the operator's plugin strategies and their priority.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

NekroAgent reads an operator's overrides from `PLUGIN_ACTIVATION_STRATEGIES`; in tether the
same mapping (module name → "auto" | "allow_sleep" | "forbid_sleep") is passed as
`Toolkit(plugins=..., plugin_strategies=...)`. The script builds one plugin per row of the
priority list and prints which ones sleep.

Run it: `python examples/agentscope_compat/plugin_strategies.py` (no network needed).
"""

from __future__ import annotations

import asyncio

from tether.plugin import Plugin, PluginScheduler
from tether.state import AgentState
from tether.tool import Toolkit


def ping() -> str:
    """Answer "pong"."""
    return "pong"


def make(module_name: str, allow_sleep: bool | None, sleep_brief: str = "") -> Plugin:
    """A plugin with the given sleep declaration (`basic` offers one tool)."""
    return Plugin(
        name=module_name,
        module_name=module_name,
        description=f"The {module_name} plugin",
        tools=[ping] if module_name == "basic" else [],
        allow_sleep=allow_sleep,
        sleep_brief=sleep_brief,
    )


BRIEF = "Does one thing; activate when the user asks for it."

PLUGINS = [
    make("basic", allow_sleep=False, sleep_brief=BRIEF),  # 1. protected by its developer
    make("chat", allow_sleep=True, sleep_brief=BRIEF),  # 2. the operator forbids sleep
    make("legacy", allow_sleep=None, sleep_brief=BRIEF),  # 3. the operator allows sleep
    make("nobrief", allow_sleep=None),  # 3. ... but without a brief it cannot
    make("note", allow_sleep=True, sleep_brief=BRIEF),  # 4. auto: its own declaration
    make("tool", allow_sleep=None, sleep_brief=BRIEF),  # 4. auto: undeclared, resident
]

PLUGIN_ACTIVATION_STRATEGIES = {
    "basic": "allow_sleep",  # ignored: allow_sleep=False ranks above the operator
    "chat": "forbid_sleep",
    "legacy": "allow_sleep",
    "nobrief": "allow_sleep",
}

EXPECTED = {
    "basic": "always_awake",
    "chat": "always_awake",
    "legacy": "sleeping",
    "nobrief": "always_awake",
    "note": "sleeping",
    "tool": "always_awake",
}


async def main() -> None:
    """Print each plugin's visibility in a new session."""
    toolkit = Toolkit(plugins=PLUGINS, plugin_strategies=PLUGIN_ACTIVATION_STRATEGIES)
    (scheduler,) = toolkit.sources
    assert isinstance(scheduler, PluginScheduler)
    state = AgentState()
    seen = {p.module_name: scheduler.visibility(p.module_name, state) for p in PLUGINS}
    for p in PLUGINS:
        strategy = PLUGIN_ACTIVATION_STRATEGIES.get(p.module_name, "auto")
        print(f"{p.module_name}: allow_sleep={p.allow_sleep}, {strategy} -> {seen[p.module_name]}")
    assert seen == EXPECTED, seen
    view = await toolkit.view(state)
    assert "ping" in view.tools  # a resident plugin's tools are always offered
    assert view.prompt.count("<plugin_brief ") == 2  # legacy and note show only a brief


if __name__ == "__main__":
    asyncio.run(main())
