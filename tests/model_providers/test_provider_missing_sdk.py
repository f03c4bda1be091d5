"""A newcomer's path: `pip install tether` without extras, then a provider model.

The SDK is hidden from a fresh interpreter (a `sys.meta_path` finder that refuses it), as
on a machine where the extra was never installed. The reply must fail with
`MissingProviderError` (a `MissingDependencyError` and a `ModelError`) naming the extra,
never a bare `ModuleNotFoundError` from the error mapper importing the SDK again.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, stream_reply

HERE = Path(__file__).parent

SDK = {
    "openai": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "gemini": ("google.genai", "gemini"),
    "dashscope": ("dashscope", "dashscope"),
    "ollama": ("ollama", "ollama"),
}

SCRIPT = """
import asyncio, importlib.abc, json, sys

hidden, provider, url = sys.argv[1], sys.argv[2], sys.argv[3]


class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if hidden and (name == hidden or name.startswith(hidden + ".")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Hide())
from provider_wire import make_model

from tether.agent import Agent
from tether.errors import MissingDependencyError, ModelError
from tether.message import UserMsg


async def main():
    agent = Agent(name="a", system_prompt="Be brief.", model=make_model(provider, url))
    try:
        msg = await agent.reply(UserMsg("user", "Hi"))
    except ModelError as error:
        out = {
            "type": type(error).__name__,
            "message": str(error),
            "missing_dependency": isinstance(error, MissingDependencyError),
            "extra": getattr(error, "extra", None),
        }
    else:
        out = {"type": None, "text": msg.get_text_content()}
    print(json.dumps(out))


asyncio.run(main())
"""


async def run(tmp_path: Path, hidden: str, provider: str, url: str) -> dict:
    script = tmp_path / "newcomer.py"
    script.write_text(SCRIPT)
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        hidden,
        provider,
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": path},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()[-3000:]
    return json.loads(out.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_missing_sdk_is_a_model_error_naming_the_extra(
    server: ReplayServer, tmp_path: Path, provider: str
) -> None:
    module, extra = SDK[provider]
    result = await run(tmp_path, module, provider, server.url)
    assert result["type"] == "MissingProviderError", result
    assert result["missing_dependency"] is True
    assert result["extra"] == extra
    assert f"pip install 'tether[{extra}]'" in result["message"]
    assert server.requests == []  # nothing was sent


async def test_the_same_agent_works_once_the_sdk_is_there(
    server: ReplayServer, tmp_path: Path
) -> None:
    server.add(stream_reply("openai", [("text", "Hello there."), ("usage", 5, 3)]))
    result = await run(tmp_path, "", "openai", server.url)
    assert result == {"type": None, "text": "Hello there."}
    server.assert_done()
