"""The seed's context samples run (examples/agentscope_compat/seed_context.py), with a scripted model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from context_helpers import is_summary_request

from tether.event import ContextCompressedEvent

EXAMPLE = Path(__file__).parents[2] / "examples" / "agentscope_compat" / "seed_context.py"


def test_seed_context_sample_runs_as_a_script() -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("compressed: ") and int(lines[0].split()[1]) > 0
    assert "summary: ## Goal" in out.stdout and "context.jsonl" in out.stdout


async def test_seed_context_sample_does_what_it_says(tmp_path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("seed_context_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    agent = module.build_agent(str(tmp_path))
    assert agent.context_config.trigger_ratio == 0.7
    assert agent.context_config.tool_result_limit == 1000
    from tether.agent import ContextConfig
    from tether.message import UserMsg

    for day in range(6):
        await agent.reply(UserMsg(name="user", content=f"day {day}"))
    event = await agent.compress_context(ContextConfig(trigger_ratio=0.6, reserve_ratio=0.2))
    assert isinstance(event, ContextCompressedEvent) and event.reply_id == ""
    assert sum(is_summary_request(c) for c in agent.model.calls) == 1
    assert agent.state.summary is not None and agent.state.summary.startswith("## Goal")
