"""A short plugin conversation whose requests are rendered by the caching providers.

    python cache_render_turn.py

Prints one JSON line: per provider, the SHA-256 of each request body (driven by
`test_plugin_cache_prefix.py`, which runs it in two processes and compares).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from plugin_helpers import Notes, said, weather_plugin

from tether import ScriptedChatModel, Toolkit, UserMsg
from tether.credential import AnthropicCredential, DashScopeCredential, OpenAICredential
from tether.model import AnthropicChatModel, ChatRequest, DashScopeChatModel, OpenAIChatModel
from tether.testing import scripted_agent

MODELS = {
    "anthropic": AnthropicChatModel(AnthropicCredential(api_key="x")),
    "openai": OpenAIChatModel(OpenAICredential(api_key="x")),
    "dashscope": DashScopeChatModel(DashScopeCredential(api_key="x"), "qwen3-max"),
}


async def requests() -> list[ChatRequest]:
    """Turn 1: a plain answer. Turn 2: wake `note`, add a note, answer."""
    model = ScriptedChatModel(
        [
            said("hello"),
            said(ScriptedChatModel.tool_call("activate_plugin", {"module_name": "note"}, id="c1")),
            said(ScriptedChatModel.tool_call("add_note", {"title": "a", "content": "b"}, id="c2")),
            said("saved"),
        ]
    )
    toolkit = Toolkit(plugins=[Notes().plugin(), weather_plugin()])
    agent = scripted_agent(model=model, toolkit=toolkit)
    await agent.reply(UserMsg("user", "hi"))
    await agent.reply(UserMsg("user", "note that a is b"))
    model.assert_complete()
    return model.calls


def bodies(calls: list[ChatRequest]) -> dict[str, list[dict[str, Any]]]:
    """Each request as each provider's body."""
    return {name: [m.build_params(r) for r in calls] for name, m in MODELS.items()}


def digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, ensure_ascii=False).encode()).hexdigest()


async def main() -> None:
    rendered = bodies(await requests())
    print(json.dumps({name: [digest(b) for b in bs] for name, bs in rendered.items()}))


if __name__ == "__main__":
    asyncio.run(main())
