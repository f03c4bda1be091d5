"""Headless `tether chat -p`: every output format parsed, stdin, exit codes, denials."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from terminal import LAUNCH, chat_env

from tether.event import EventType, event_adapter


def chat(home: Path, cwd: Path, *args: str, stdin: str = "", **env: str):
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, "chat", *args],
        cwd=cwd,
        env=chat_env(home, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


ASKING = [
    {
        "text": "Let me create it.",
        "tool_calls": [{"name": "Bash", "input": {"command": "touch x.txt"}}],
    },
    {"text": "I could not create x.txt."},
]


def test_text_prints_the_final_answer(home, project, script) -> None:
    done = chat(home, project, "-p", "hi", "--model", script([{"text": "Hello from tether."}]))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from tether.\n"


def test_json_reports_denied_calls_and_the_session(home, project, script) -> None:
    done = chat(home, project, "-p", "make x", "--model", script(ASKING), "--output-format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "I could not create x.txt."
    assert result["is_error"] is False
    assert result["num_iters"] == 2
    assert result["stop_reason"] == "stop"
    assert result["usage"] == {"input_tokens": 0, "output_tokens": 0}
    assert result["total_cost_usd"] is None  # the scripted model has no price
    assert result["denied"] == [{"name": "Bash", "input": {"command": "touch x.txt"}}]
    assert not (project / "x.txt").exists()
    assert (home / "tether" / "sessions.db").exists()
    again = chat(
        home, project, "-p", "and?", "-r", result["session_id"], "--output-format", "json",
        "--model", script([{"text": "Still no x.txt."}]),
    )  # fmt: skip
    assert json.loads(again.stdout)["session_id"] == result["session_id"]


def test_allow_rule_lets_the_call_run(home, project, script) -> None:
    done = chat(
        home, project, "-p", "make x", "--model", script(ASKING), "--output-format", "json",
        "--allow", "Bash(touch:*)",
    )  # fmt: skip
    assert json.loads(done.stdout)["denied"] == []
    assert (project / "x.txt").exists()


def test_permission_mode_lets_the_call_run(home, project, script) -> None:
    done = chat(
        home, project, "-p", "make x", "--model", script(ASKING), "--permission-mode", "bypass"
    )
    assert done.returncode == 0
    assert (project / "x.txt").exists()


def test_stream_json_is_the_event_stream_then_the_result(home, project, script) -> None:
    done = chat(
        home, project, "-p", "make x", "--model", script(ASKING), "--output-format", "stream-json"
    )
    assert done.returncode == 0, done.stderr
    *events, last = done.stdout.splitlines()
    parsed = [event_adapter.validate_json(line) for line in events]
    types = [e.type for e in parsed]
    assert types[0] is EventType.REPLY_START and types[-1] is EventType.REPLY_END
    assert EventType.REQUIRE_USER_CONFIRM in types and EventType.TOOL_RESULT_END in types
    result = json.loads(last)
    assert result["type"] == "result"
    assert result["denied"][0]["name"] == "Bash"
    assert result["result"] == "I could not create x.txt."


def test_prompt_from_stdin(home, project, script) -> None:
    done = chat(home, project, "-p", "--model", script([{"text": "Got it."}]), stdin="from a pipe")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Got it.\n"


def test_model_error_exits_non_zero(home, project, script) -> None:
    model = script([{"error": "ModelResponseError: the model rejected the request"}])
    done = chat(home, project, "-p", "hi", "--model", model, "--output-format", "json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["is_error"] is True and result["stop_reason"] == "error"
    assert "ModelResponseError: the model rejected the request" in result["result"]
    text = chat(home, project, "-p", "hi", "--model", model)
    assert text.returncode == 1 and "rejected the request" in text.stderr


def test_no_model_is_one_line_naming_the_flag_and_variable(home, project) -> None:
    done = chat(home, project, "-p", "hi")
    assert done.returncode == 2
    assert done.stdout == ""
    line = done.stderr.strip()
    assert "\n" not in line and "--model" in line and "TETHER_MODEL" in line


def test_missing_api_key_names_the_variable(home, project) -> None:
    done = chat(home, project, "-p", "hi", "--model", "openai:gpt-4o")
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr and "\n" not in done.stderr.strip()


def test_model_from_environment_then_config(home, project, script) -> None:
    by_env = chat(home, project, "-p", "hi", TETHER_MODEL=script([{"text": "env model"}]))
    assert by_env.stdout == "env model\n"
    (project / ".tether").mkdir()
    configured = script([{"text": "config model"}])
    (project / ".tether" / "config.toml").write_text(f'model = "{configured}"\n')
    ignored = chat(home, project, "-p", "hi")  # an untrusted folder cannot choose the model
    assert ignored.returncode == 2 and "no model chosen" in ignored.stderr
    assert f"ignored: model {configured!r}" in ignored.stderr
    assert chat(home, project, "-p", "hi", "--trust-folder").stdout == "config model\n"


def test_bad_flags_and_config_exit_non_zero(home, project, script) -> None:
    model = script([{"text": "never"}])
    assert chat(home, project, "-p", "hi", "--model", model, "--max-iters", "0").returncode == 2
    assert chat(home, project, "-p", "hi", "--model", model, "--allow", "Bash(").returncode == 2
    missing = chat(home, project, "-p", "hi", "--model", model, "-r", "nope")
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr
    (project / ".tether").mkdir()
    (project / ".tether" / "config.toml").write_text("colour = 'blue'\n")
    bad = chat(home, project, "-p", "hi", "--model", model)
    assert bad.returncode == 2 and "unknown keys ['colour']" in bad.stderr


def test_script_past_its_end_is_an_error(home, project, script) -> None:
    done = chat(home, project, "-p", "hi", "--model", script([]), "--output-format", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["result"].startswith("ScriptExhaustedError")


def test_headless_on_a_paused_session_ends_that_reply_first(
    home, project, script, terminal
) -> None:
    first = terminal("--model", script(ASKING))
    first.prompt_ready(1)
    first.type("make x")
    first.wait_for(r"Allow Bash touch x.txt\?")
    first.kill()
    done = chat(
        home, project, "-p", "something else", "-c", "--output-format", "json",
        "--model", script([{"text": "Doing something else."}]),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "Doing something else." and result["denied"] == []
    assert not (project / "x.txt").exists()


def test_add_dir_extends_the_work_dirs(home, project, script, tmp_path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("remember the milk\n")
    steps = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": str(other / "notes.txt")}}]},
        {"text": "Read it."},
    ]
    outside = chat(home, project, "-p", "read", "--model", script(steps), "--output-format", "json")
    assert json.loads(outside.stdout)["denied"][0]["name"] == "Read"
    inside = chat(
        home, project, "-p", "read", "--model", script(steps), "--output-format", "stream-json",
        "--add-dir", str(other),
    )  # fmt: skip
    *events, last = inside.stdout.splitlines()
    assert json.loads(last)["denied"] == []
    ends = [json.loads(e) for e in events if '"tool_result_end"' in e]
    assert "remember the milk" in json.dumps(ends[0]["tool_result"]["output"])
    missing = chat(home, project, "-p", "x", "--model", script(steps), "--add-dir", "/no/such")
    assert missing.returncode == 2 and "is not a folder" in missing.stderr


def test_max_iters_bounds_the_tool_steps(home, project, script) -> None:
    glob = {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}
    steps = [glob, glob, {"text": "done"}]
    for flag, iters in (("1", 2), ("5", 3)):
        done = chat(
            home, project, "-p", "look", "--model", script(steps), "--output-format", "json",
            "--max-iters", flag,
        )  # fmt: skip
        assert json.loads(done.stdout)["num_iters"] == iters
