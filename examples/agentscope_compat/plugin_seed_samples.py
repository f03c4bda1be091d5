"""What it shows: every code sample of the plugin-activation specification.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

Those samples come from NekroAgent (a chat-bot framework whose `NekroPlugin` is
`tether.plugin.Plugin` here): a plugin definition, two `sleep_brief` values, and the calls
the model makes. In tether the model calls `activate_plugin` and `extend_plugin_activation`
as tools, so those sample lines build the scripted model's tool calls. The sample output
and hint text are checked word for word.

The names and briefs stay in Chinese, as written in the specification: 笔记插件 "notes
plugin" (管理用户笔记 "manages the user's notes"), 天气插件 "weather plugin"; the two
`sleep_brief` values contrast a brief that is too terse (❌) with one that says when to
wake the plugin (✅).

Run it: `python examples/agentscope_compat/plugin_seed_samples.py` (no network needed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tether import Agent, AssistantMsg, ScriptedChatModel, Toolkit, UserMsg
from tether.message import ToolCallBlock
from tether.plugin import Plugin as NekroPlugin

# fmt: off
# --- seed sample 1: configuring the sleep strategy (verbatim) ---------------------------
plugin = NekroPlugin(
    name="笔记插件",
    module_name="note",
    description="管理用户笔记",
    # ...
    allow_sleep=True,
    sleep_brief="管理用户笔记，当用户明确需要记录、查阅或修改笔记时激活。",
)

# --- seed sample 2: writing a good sleep_brief (verbatim) --------------------------------
# ❌ 过于简略，AI 难以判断激活时机
sleep_brief="笔记功能。"

# ✅ 清晰说明用途和激活场景
sleep_brief="管理用户笔记，支持创建、查阅、修改和删除笔记条目。当用户明确提到需要记笔记、查看笔记或整理信息时激活。"
# fmt: on


def get_weather(city: str) -> str:
    """Current weather of a city.

    Args:
        city: The city's name.
    """
    return f"{city}: sunny, 21°C"


weather = NekroPlugin(
    name="天气插件",
    module_name="weather",
    description="查询天气",
    tools=[get_weather],
    allow_sleep=True,
    sleep_brief="查询天气预报；当用户询问天气时激活。",
)

# The model's side: each sandbox call of the seed becomes one tool call of its next answer.
AI_CALLS: list[ToolCallBlock] = []


def activate_plugin(module_name: str, **kwargs: Any) -> None:
    """What the model does when it calls the `activate_plugin` tool."""
    args = {"module_name": module_name, **kwargs}
    AI_CALLS.append(ScriptedChatModel.tool_call("activate_plugin", args))


def extend_plugin_activation(module_name: str, **kwargs: Any) -> None:
    """What the model does when it calls the `extend_plugin_activation` tool."""
    args = {"module_name": module_name, **kwargs}
    AI_CALLS.append(ScriptedChatModel.tool_call("extend_plugin_activation", args))


def answer_with_calls() -> AssistantMsg:
    calls, AI_CALLS[:] = list(AI_CALLS), []
    return AssistantMsg("assistant", list(calls))


# fmt: off
# --- seed sample 3: activate_plugin (verbatim) -------------------------------------------
# AI 在沙盒中调用：
activate_plugin("note")           # 唤醒笔记插件，默认激活 3 轮
activate_plugin("weather", rounds=5)  # 唤醒天气插件，指定激活 5 轮
REPLY_1 = answer_with_calls()

# --- seed sample 5: extend_plugin_activation (verbatim) ----------------------------------
# AI 在沙盒中调用（通常在某插件只剩 1 轮时）：
extend_plugin_activation("note", rounds=3)  # 为笔记插件追加 3 轮
REPLY_4 = answer_with_calls()
# fmt: on

# --- seed sample 4: the activation result (its first lines and block header) ------------
SEED_RESULT_HEAD = (
    "Plugin `note` is now activated for the next 3 runs.\n"
    "The full plugin block is returned below and is now the source of truth for this "
    "capability.\n"
    "Stop here and continue in the next agent step.\n"
    "\n"
    '<plugin name="笔记插件" module_name="note" state="active" rounds_left="3">'
)

# --- seed sample 6: the activation hint (verbatim) ----------------------------------------
SEED_HINT = (
    "Last visible run. Call extend_plugin_activation('note') now if you still need it next run."
)


async def main() -> None:
    """Four replies: wake both plugins, use them, and extend the note plugin in its last run."""
    model = ScriptedChatModel(
        [
            REPLY_1,
            AssistantMsg(
                "assistant", [ScriptedChatModel.tool_call("get_weather", {"city": "杭州"})]
            ),
            AssistantMsg("assistant", "杭州今天晴。"),
            AssistantMsg("assistant", "好的。"),
            AssistantMsg("assistant", "好的。"),
            REPLY_4,
            AssistantMsg("assistant", "笔记插件已续期。"),
        ]
    )
    agent = Agent(
        name="assistant",
        system_prompt="You are a helpful assistant.",
        model=model,
        toolkit=Toolkit(plugins=[plugin, weather]),
    )
    for text in ["记一下笔记，顺便看看杭州天气", "谢谢", "嗯", "还在吗"]:
        await agent.reply(UserMsg("user", text))
    model.assert_complete()

    prompts = [call.messages[0].get_text_content() or "" for call in model.calls]
    tools = [[t["name"] for t in call.tools] for call in model.calls]
    assert plugin.sleep_brief in prompts[0] and "<plugin name=" not in prompts[0]
    assert tools[0] == ["activate_plugin", "extend_plugin_activation"]
    note_result, weather_result = model.calls[1].messages[-1].tool_results
    assert note_result.get_text().startswith(SEED_RESULT_HEAD)
    assert "activated for the next 5 runs" in weather_result.get_text()
    assert "get_weather" in tools[1]
    assert [SEED_HINT in p for p in prompts] == [False, False, False, False, False, True, False]
    assert agent.state.plugins == {"note": 3, "weather": 2}

    print(note_result.get_text().split("\n\n", 1)[0])
    print(f"hint in reply 4: {SEED_HINT}")
    print(f"after 4 replies: {agent.state.plugins}")


if __name__ == "__main__":
    asyncio.run(main())
