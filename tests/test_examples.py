"""Every example runs, in a temporary folder, with the scripted model (or a local fake server).

Examples write only where they are told (`TETHER_EXAMPLE_DIR`, the working directory, the
suite's Redis database via `REDIS_PORT`/`REDIS_DB`), so a run leaves `examples/` and Redis db 0 as they were.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import pytest_asyncio

from tether.app.storage import RedisStorage

EXAMPLES = Path(__file__).parent.parent / "examples"
REDIS_URL = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")  # as conftest
sys.path.insert(0, str(Path(__file__).parent / "model_providers"))
from provider_replay import ReplayServer  # noqa: E402
from provider_wire import stream_reply  # noqa: E402

COMPAT = "agentscope_compat/"
EXPECTED = {
    "quickstart.py": ["2 + 3 = 5"],
    "custom_tools.py": [
        '"description": "The amount in euros."',
        "convert [success]: 13.5",
        "count_down [success]: 3... 2... 1...",
        "divide [error]: Error: tool 'divide' raised ZeroDivisionError",
        "Coffee costs 12.50 EUR",
    ],
    "confirm_and_resume.py": [
        "Sent your edited greeting.",
        "Understood, I did not send it.",
        "allowed from now on: ['send_email']",
        "Sent without asking",
        "sent: ['bob@example.com: Hello Bob', 'bob@example.com: Bye', 'bob@example.com: PS']",
    ],
    "external_tool.py": ["the client runs: ['get_location']", "You are in Lisbon"],
    "resume_in_another_process.py": [
        'first process: paused, asking about deploy{"version": "1.4"}',
        "second process: deployed 1.4 from process",
        "Version 1.4 is live.",
    ],
    "structured_output.py": [
        "Forecast(city='Bergen', temperature_c=14.0, umbrella=True)",
        "['weather', 'generate_response']",
    ],
    "retries_and_fallback.py": [
        "attempt 1 on main-model failed (ConnectionError: reset by peer); next: main-model",
        "attempt 3 on main-model failed (ConnectionError: reset by peer); next: backup",
        "Answer from the backup.",
    ],
    "middleware_logging.py": [
        "example.agent: tool list_files({})",
        "system prompt sent: 'You tidy folders.\\nAnswer in one sentence.'",
        "delete_file result: Permission denied: deletes are off.",
    ],
    "compression_and_offload.py": [
        "full text at read_log-",
        "compressed 6 messages",
        "originals in context.jsonl",
        "summary: ## Goal",
    ],
    "plugins.py": [
        "plugin_activated: finance",
        "plugin_slept: finance",
        "model call 0: tools offered = ['activate_plugin', 'extend_plugin_activation']",
        "model call 1: tools offered = ['activate_plugin', 'extend_plugin_activation', "
        "'convert_currency']",
    ],
    "mcp_servers.py": ["tools offered: ['mcp__clock__city_time']", "It is 09:30 in Tokyo."],
    "a2a/serve_agent.py": [
        "card: notes ['JSONRPC', 'HTTP+JSON']",
        "state: TASK_STATE_INPUT_REQUIRED",
        'question: Allow the call to save_note with {"name": "todo", "text": "buy milk"}?',
        "answer: Saved your note `todo`.",
        "notes: {'todo': 'buy milk'}",
    ],
    "skills.py": ["skill listed in the system prompt: True", "Group the changes under Added"],
    COMPAT + "seed_minimal_agent.py": ["Hello! How can I help you today?"],
    COMPAT + "seed_reply.py": ["There are three entries"],
    COMPAT + "seed_reply_stream.py": ["[calling read_readme]", "The README says tether"],
    COMPAT + "seed_observe.py": [
        "context has 1 message(s); the model was called 0 time(s)",
        "Bob said",
    ],
    COMPAT + "seed_hitl_confirm.py": [
        'Tool: write_note, input: {"path": "todo.md", "text": "buy milk"}',
        "Suggested rules: [PermissionRule(tool_name='write_note'",
        "Saved your note.",
        "without asking",
    ],
    COMPAT + "seed_hitl_external.py": [
        "External execution: get_browser_location({})",
        "You are in Hangzhou.",
    ],
    COMPAT + "seed_context.py": ["compressed: ", "summary: ## Goal"],
    COMPAT + "seed_tools.py": [
        "[calling Read]",
        "[calling Grep]",
        "[calling Edit]",
        "[calling Bash]",
        "Done. The script now prints: Hi, world",
    ],
    COMPAT + "plugin_seed_samples.py": [
        "Plugin `note` is now activated for the next 3 runs.",
        "hint in reply 4: Last visible run. Call extend_plugin_activation('note') now "
        "if you still need it next run.",
        "after 4 replies: {'note': 3, 'weather': 2}",
    ],
    COMPAT + "plugin_strategies.py": [
        "basic: allow_sleep=False, allow_sleep -> always_awake",
        "legacy: allow_sleep=None, allow_sleep -> sleeping",
        "nobrief: allow_sleep=None, allow_sleep -> always_awake",
    ],
    COMPAT + "seed_plugin.py": ["notes: {'milk': 'buy milk'} | state.plugins: {}"],
    COMPAT + "seed_sqlite.py": ["Continuing the previous task.", "saved 2 messages"],
    COMPAT + "seed_redis.py": ["Continuing the previous task.", "saved 2 messages"],
    COMPAT + "seed_toolkit.py": ["sunny"],
    "a2a/two_services.py": [
        "lead: awaiting_confirmation",
        'cleaner asks: Allow the call to delete_old_reports with {"folder": "/srv/reports"}?',
        "lead: completed - The old reports are gone.",
        "deleted in: ['/srv/reports']",
    ],
}
PROVIDERS = {  # example → (wire format, base-URL variable, path prefix the SDK adds)
    "openai_example.py": ("openai", "OPENAI_BASE_URL", "/v1"),
    "anthropic_example.py": ("anthropic", "ANTHROPIC_BASE_URL", ""),
    "dashscope_example.py": ("dashscope", "DASHSCOPE_BASE_URL", "/api/v1"),
    "gemini_example.py": ("gemini", "GOOGLE_GEMINI_BASE_URL", ""),
    "ollama_example.py": ("ollama", "OLLAMA_HOST", ""),
}
KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "dashscope": "DASHSCOPE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "ollama": "OLLAMA_HOST",
}
SEED_IDS = ("user_123", "agent_456", "session_789")


TESTED_ELSEWHERE = {"worker_checkpoint.py", "otel/otlp_tracing.py"}
"""Examples whose own tests run them (they need the setup those tests make)."""


def scripted_examples() -> list[str]:
    found = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.py"))
    return [n for n in found if not n.startswith("providers/") and n not in TESTED_ELSEWHERE]


def env_for(tmp_path: Path) -> dict[str, str]:
    src = str(EXAMPLES.parent / "src")
    redis = urlsplit(REDIS_URL)
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        "TETHER_EXAMPLE_DIR": str(tmp_path),
        "REDIS_PORT": str(redis.port or 6379),
        "REDIS_DB": redis.path.strip("/") or "0",
        "COLUMNS": "200",
    }


@pytest_asyncio.fixture
async def seed_redis_db13(redis_url: str) -> AsyncIterator[None]:
    """`seed_redis.py` writes the seed's ids to the suite's database: clear them around it."""
    async with RedisStorage(url=redis_url) as storage:
        await storage.delete_session(*SEED_IDS)
        yield
        await storage.delete_session(*SEED_IDS)


def test_every_example_has_expectations() -> None:
    assert sorted(EXPECTED) == scripted_examples()
    assert sorted(PROVIDERS) == sorted(p.name for p in (EXAMPLES / "providers").glob("*.py"))


@pytest.mark.parametrize("name", [n for n in scripted_examples() if "redis" not in n])
def test_example_runs(name: str, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env_for(tmp_path),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    for expected in EXPECTED[name]:
        assert expected in out.stdout, out.stdout


@pytest.mark.redis
def test_the_redis_example_runs(seed_redis_db13: None, tmp_path: Path) -> None:
    test_example_runs(COMPAT + "seed_redis.py", tmp_path)


async def run_provider_example(name: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / "providers" / name),
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_provider_example_against_a_local_server(name: str, tmp_path: Path) -> None:
    wire, base_env, prefix = PROVIDERS[name]
    server = ReplayServer()
    await server.start()
    try:
        server.add(
            stream_reply(
                wire,
                [
                    ("call", 0, "call_w", "get_weather"),
                    ("args", 0, '{"city": "Paris"}'),
                    ("usage", 40, 8),
                ],
            ),
            stream_reply(wire, [("text", "It is sunny in Paris."), ("usage", 60, 6)]),
        )
        env = {**env_for(tmp_path), base_env: server.url + prefix, KEYS[wire]: "test-key"}
        if wire == "ollama":
            env[base_env] = server.url
        status, out, err = await run_provider_example(name, env, tmp_path)
        assert status == 0, err[-3000:]
        assert '[calling get_weather({"city": "Paris"})]' in out
        assert "It is sunny in Paris." in out
        server.assert_done()
    finally:
        await server.stop()


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_provider_example_with_a_real_key(name: str, tmp_path: Path) -> None:
    key = KEYS[PROVIDERS[name][0]]
    if os.environ.get("TETHER_LIVE_PROVIDERS") != "1" or not os.environ.get(key):
        pytest.skip(f"talks to the real API: set TETHER_LIVE_PROVIDERS=1 and {key} to run it")
    status, out, err = await run_provider_example(name, env_for(tmp_path), tmp_path)
    assert status == 0, err[-3000:]
    assert "[calling get_weather(" in out


@pytest.mark.parametrize("name", ["openai_example.py", "anthropic_example.py"])
async def test_a_provider_example_without_a_key_says_which_variable(
    name: str, tmp_path: Path
) -> None:
    wire, base_env, _ = PROVIDERS[name]
    env = {k: v for k, v in env_for(tmp_path).items() if k not in (KEYS[wire], base_env)}
    status, out, err = await run_provider_example(name, env, tmp_path)
    assert status == 1
    assert KEYS[wire] in err and "Traceback" not in err


def test_readme_example_is_the_quickstart() -> None:
    readme = (EXAMPLES.parent / "README.md").read_text()
    code = readme.split("## Example", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    body = (EXAMPLES / "quickstart.py").read_text().split('"""', 2)[2]
    assert code.strip() == body.strip()
