"""What a headless `tether chat -p` on SQLite imports: none of the backends it does not use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from terminal import chat_env

# Runs the command in-process, then prints the modules it loaded.
RUN_AND_LIST = (
    "import json, sys; from tether.cli import main; status = main(sys.argv[1:]);"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr); sys.exit(status)"
)
NOT_LOADED = [
    "tether.app.storage._redis",  # the Redis backends and the service's event logs
    "tether.app.storage._events_redis",
    "tether.app.storage._events_sqlite",
    "tether.app.server",
    "tether.mcp",
    "redis",
    "yaml",  # a JSON script needs no YAML parser
    "rich",
    "prompt_toolkit",
]


def test_a_headless_chat_loads_only_what_it_uses(home: Path, project: Path, tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "Hello from tether."}]))
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, "chat", "-p", "hi", "--model", f"scripted:{script}"],
        cwd=project,
        env=chat_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from tether.\n"
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "tether.app.storage._sqlite" in loaded
    assert [m for m in NOT_LOADED if m in loaded] == []


def test_storage_names_load_on_first_use_and_show_the_package():
    code = (
        "import sys, tether.app.storage as s;"
        "assert 'tether.app.storage._redis' not in sys.modules;"
        "print(s.RedisStorage.__module__, s.SessionRecord.__module__, s.DEFAULT_SQLITE_PATH,"
        " 'tether.app.storage._redis' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "tether.app.storage",
        "tether.app.storage",
        ".tether/sessions.db",
        "True",
    ]
