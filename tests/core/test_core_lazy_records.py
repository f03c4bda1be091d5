"""The middleware hooks' records load on first use: an agent without hooks never needs them."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

import tether.middleware
from tether.middleware import _calls

RECORDS = sorted(tether.middleware._CALLS)


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in sys.modules if m.startswith('tether')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_middleware_package_and_its_base_do_not_load_the_records() -> None:
    loaded = _loaded_after("import tether.middleware\nfrom tether.middleware import MiddlewareBase")
    assert "tether.middleware" in loaded
    assert "tether.middleware._calls" not in loaded


def test_naming_a_record_loads_it() -> None:
    loaded = _loaded_after("from tether.middleware import ReplyCall")
    assert "tether.middleware._calls" in loaded


@pytest.mark.parametrize("name", RECORDS)
def test_each_record_is_the_frozen_dataclass_of_calls(name: str) -> None:
    record = getattr(tether.middleware, name)
    assert record is getattr(_calls, name)
    assert record.__module__ == "tether.middleware._calls"
    assert dataclasses.is_dataclass(record) and record.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert name in tether.middleware.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchCall'"):
        tether.middleware.NoSuchCall  # noqa: B018


def test_from_tether_import_agent_loads_no_records() -> None:
    # The loop builds a record only for a hook that is there (as `middleware.X`).
    assert "tether.middleware._calls" not in _loaded_after("from tether import Agent")


def test_a_reply_without_hooks_loads_no_records_and_with_one_does() -> None:
    run = (
        "import asyncio\n"
        "from tether import Agent\n"
        "from tether.message import AssistantMsg, UserMsg\n"
        "from tether.model import ScriptedChatModel\n"
        "from tether.middleware import MiddlewareBase\n"
        "class Hook(MiddlewareBase):\n"
        "    async def on_reasoning(self, call, call_next):\n"
        "        async for event in call_next(call):\n"
        "            yield event\n"
        "def reply(middlewares):\n"
        "    model = ScriptedChatModel([AssistantMsg('m', 'hi')])\n"
        "    agent = Agent(name='a', system_prompt='s', model=model, middlewares=middlewares)\n"
        "    asyncio.run(agent.reply(UserMsg('u', 'go')))\n"
        "reply([])\n"
        "assert 'tether.middleware._calls' not in sys.modules\n"
        "reply([Hook()])\n"
    )
    assert "tether.middleware._calls" in _loaded_after(run)


def test_the_lazy_names_are_exactly_the_records_of_calls() -> None:
    # `_CALLS` is read off `tether.middleware.__all__`: a record added to `_calls` only fails here.
    assert set(tether.middleware._CALLS) == set(_calls.__all__)
