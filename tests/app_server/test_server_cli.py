"""`tether serve` from the command line: defaults, refusals, keys kept out of the logs."""

from __future__ import annotations

import subprocess
import sys

import httpx
from svc_helpers import ProcessServer, server_env


def _serve(*args: str, cwd, env=None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "import sys; from tether.cli import main; sys.exit(main())"]
    return subprocess.run(
        [*cmd, "serve", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_serve_with_no_arguments_runs_the_offline_demo(tmp_path):
    server = ProcessServer([], server_env(tmp_path), tmp_path / "serve.log", cwd=tmp_path).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            assert [a["id"] for a in c.get("/v1/agents").json()["agents"]] == ["notes"]
            sid = c.post("/v1/sessions", json={"agent_id": "notes"}).json()["session_id"]
            r = c.post(
                f"/v1/sessions/{sid}/replies",
                json={"input": {"role": "user", "content": "save a note: buy milk"}},
            ).json()
            assert r["status"] == "awaiting_confirmation"
            pause = r["events"][0]
            confirm = {
                "type": "user_confirm_result",
                "reply_id": pause["reply_id"],
                "confirm_results": [
                    {"confirmed": True, "tool_call": t, "rules": t["suggested_rules"]}
                    for t in pause["tool_calls"]
                ],
            }
            done = c.post(f"/v1/sessions/{sid}/replies", json={"input": confirm}).json()
            assert done["status"] == "completed"
    finally:
        server.stop()
    assert (tmp_path / ".tether" / "sessions.db").is_file()
    assert (tmp_path / ".tether" / "notes" / "buy-milk.md").read_text() == "buy milk"
    assert "no API keys, so one local user only, bound to 127.0.0.1" in server.log_path.read_text()


def test_workers_need_redis(tmp_path):
    done = _serve("--workers", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert "--workers > 1 needs a Redis or PostgreSQL storage" in done.stderr


def test_no_keys_refuses_a_public_address(tmp_path):
    done = _serve("--host", "0.0.0.0", cwd=tmp_path)
    assert done.returncode == 2
    assert "no API keys: refusing to bind '0.0.0.0'" in done.stderr


def test_keys_from_the_environment_never_reach_the_logs(tmp_path):
    key = "sk-env-secret-31415926"
    env = server_env(tmp_path, TETHER_API_KEYS=f"{key}:carol")
    server = ProcessServer(
        ["--agents", "svc_agents:agents", "--storage", f"sqlite:///{tmp_path}/s.db"],
        env,
        tmp_path / "serve.log",
    ).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            assert c.get("/v1/sessions").status_code == 401
            wrong = c.get("/v1/sessions", headers={"authorization": f"Bearer {key}x"})
            assert wrong.status_code == 401 and key not in wrong.text
            auth = {"authorization": f"Bearer {key}"}
            made = c.post("/v1/sessions", json={"agent_id": "planner"}, headers=auth)
            assert made.status_code == 201 and key not in made.text
            sid = made.json()["session_id"]
            r = c.post(
                f"/v1/sessions/{sid}/replies",
                json={"input": {"role": "user", "content": key}},
                headers=auth,
            )
            assert r.status_code == 200
    finally:
        server.stop()
    assert key not in server.log_path.read_text()


_HIDE_SERVER_EXTRA = """
import sys
from importlib.abc import MetaPathFinder

class Hide(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("uvicorn", "fastapi", "sse_starlette"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
from tether.cli import main
sys.exit(main(["serve"]))
"""


def test_serve_without_the_server_extra_says_what_to_install(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", _HIDE_SERVER_EXTRA],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert "pip install 'tether[server]'" in out.stderr
    assert not (tmp_path / ".tether").exists()  # nothing was created before the refusal


def test_malformed_allowed_hosts_and_modes_are_refused_at_start(tmp_path):
    done = _serve("--allowed-hosts", "a*b", cwd=tmp_path)
    assert done.returncode == 2
    assert "allowed host 'a*b' is not" in done.stderr
    done = _serve("--max-permission-mode", "yolo", cwd=tmp_path)
    assert done.returncode == 2 and "invalid choice: 'yolo'" in done.stderr
