"""An MCP server's questions in `tether chat` under a pty: an elicitation filled in as a
terminal form, a sampling request confirmed before the model answers, and a refused one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

FEATURES = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "features_server.py"


@pytest.fixture
def features(project: Path) -> None:
    servers = {"feat": {"command": sys.executable, "args": [str(FEATURES)]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def _call(name: str, args: dict[str, str]) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "input": args}]}


def test_an_elicitation_is_a_terminal_form(terminal, script, features) -> None:
    model = script([_call("mcp__feat__ask", {}), {"text": "Greeted."}])
    term = terminal("--model", model, "--trust-folder", "--allow", "mcp__feat__ask")
    term.prompt_ready(1)
    term.type("greet me")
    term.wait_for(r"\? MCP server feat asks: What is your name\?")
    term.wait_for(r"Answer\? \[y\]es / \[n\]o, decline / \[c\]ancel")
    term.type("y")
    term.wait_for(r"Name\*:")
    term.type("")  # required: asked again
    term.wait_for(r"Name is required")
    term.type("Ada")
    term.wait_for(r"Count: +3")  # the schema's default, pre-filled
    term.type("")
    screen = term.wait_for("Greeted.")
    assert "hello Ada x3" in screen
    assert term.leave() == 0


def test_sampling_asks_then_the_model_answers(terminal, script, features) -> None:
    model = script(
        [
            _call("mcp__feat__sample", {"question": "What is 6*7?"}),
            {"text": "42"},  # the model's answer to the server
            {"text": "Sampled."},
            _call("mcp__feat__sample", {"question": "Again?"}),
            {"text": "Refused."},
        ]
    )
    term = terminal("--model", model, "--trust-folder", "--allow", "mcp__feat__sample")
    term.prompt_ready(1)
    term.type("think")
    term.wait_for(r"\? MCP server feat wants the model to answer:")
    term.wait_for(r"user: What is 6\*7\?")
    term.wait_for(r"Let the model answer\? \[y\]es / \[n\]o")
    term.type("y")
    screen = term.wait_for("Sampled.")
    assert "model said: 42" in screen
    term.prompt_ready(2)
    term.type("again")
    term.wait_for(r"Let the model answer\? \[y\]es / \[n\]o", count=2)
    term.type("n")
    screen = term.wait_for("Refused.")
    assert "declined" in screen
    assert term.leave() == 0


def test_a_resource_mention_is_attached(terminal, script, features, home) -> None:
    model = script([{"text": "Read it."}])
    term = terminal("--model", model, "--trust-folder")
    term.prompt_ready(1)
    term.type("summarise @feat:note://greeting and @feat:note://missing please")
    term.wait_for(r"attached @feat:note://greeting \(\d+ characters\)")
    term.wait_for(r"@feat:note://missing not attached:")
    term.wait_for("Read it.")
    assert term.leave() == 0
    saved = b"".join(p.read_bytes() for p in (home / "tether").rglob("sessions.db*"))
    assert b"Hello from a resource." in saved  # the model got the resource's text


BIN = Path(__file__).resolve().parents[3] / ".ci" / ".mcp-conformance" / "node_modules" / ".bin"


def test_an_everything_server_prompt_as_a_slash_command(terminal, script, project, home) -> None:
    import os

    if not (BIN / "mcp-server-everything").exists():
        if os.environ.get("TETHER_REQUIRE_NODE"):
            pytest.fail("the everything-server is not installed: run tests/conformance/run.sh")
        pytest.skip("the everything-server is not installed (tests/conformance/run.sh)")
    every = {
        "command": str(BIN / "node"),
        "args": [str(BIN / "mcp-server-everything"), "stdio"],
        "env": {"PATH": f"{BIN}:/usr/bin:/bin"},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"every": every}}))
    term = terminal("--trust-folder", "--model", script([{"text": "Sunny, probably."}]))
    term.prompt_ready(1)
    term.type("/mcp__every__args-prompt Paris")
    term.wait_for("Sunny, probably.")
    assert term.leave() == 0
    saved = b"".join(p.read_bytes() for p in (home / "tether").rglob("sessions.db*"))
    assert b"Paris" in saved  # the filled prompt reached the model


def test_a_prompt_and_its_argument_complete_on_tab(terminal, script, features, home) -> None:
    model = script([{"text": "Reviewed."}])
    term = terminal("--model", model, "--trust-folder")
    term.prompt_ready(1)
    term.key("/mcp__feat__rev")
    term.wait_for(r"/mcp__feat__review")  # offered while typing: the server's prompt list
    term.key("\t")
    term.wait_for(r"(?m)^> /mcp__feat__review")
    term.key(" ru")
    term.wait_for(r"(?m)^ *rust")  # offered: the server's completion/complete for `language`
    term.key("\t")
    term.wait_for(r"(?m)^> /mcp__feat__review rust")
    term.type(" focus=speed")
    term.wait_for("Reviewed.")
    assert term.leave() == 0
    saved = b"".join(p.read_bytes() for p in (home / "tether").rglob("sessions.db*"))
    assert b"Review this rust code for speed." in saved
