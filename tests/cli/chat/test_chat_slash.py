"""Slash commands, in the terminal."""

from __future__ import annotations


def _long(n: int) -> str:
    return " ".join(f"word{i}" for i in range(n))


def test_compact_shows_tokens_before_and_after(terminal, script, project) -> None:
    (project / ".tether").mkdir()
    (project / ".tether" / "config.toml").write_text("[context]\nreserve_ratio = 0.002\n")
    model = script(
        [
            {"text": "First answer. " + _long(120)},
            {"text": "Second answer. " + _long(120)},
            {"text": "Third answer. " + _long(120)},
            {"text": "Summary: three long answers about words."},
        ]
    )
    term = terminal("--model", model, "--trust-folder")
    for n, line in enumerate(["one", "two", "three"], 1):
        term.prompt_ready(n)
        term.type(line)
        term.wait_for(["First", "Second", "Third"][n - 1] + " answer")
    term.prompt_ready(4)
    term.type("/compact")
    screen = term.wait_for(r"compacted: \d+ → \d+ tokens")
    import re

    before, after = map(int, re.search(r"compacted: (\d+) → (\d+) tokens", screen).groups())
    assert after < before
    term.prompt_ready(5)
    term.type("/context")
    # The breakdown prints after the header line: wait for its last part, not the header.
    screen = term.wait_for(r"context: .* of 128\.0k tokens[\s\S]*summary")
    assert "system prompt" in screen
    assert term.leave() == 0


def test_permissions_list_add_remove_and_mode(terminal, script) -> None:
    term = terminal("--model", script([]), "--allow", "Bash(git status)", "--deny", "Bash(rm:*)")
    term.prompt_ready(1)
    term.type("/permissions")
    screen = term.wait_for("deny: Bash")
    assert "mode: default" in screen
    assert "allow: Bash(git status)  [flag]" in screen
    assert "deny: Bash(rm:*)  [flag]" in screen
    term.prompt_ready(2)
    term.type("/permissions allow Read(docs/**)")
    term.wait_for(r"added allow rule Read\(docs/\*\*\)")
    term.prompt_ready(3)
    term.type("/permissions remove Bash(git status)")
    term.wait_for(r"removed Bash\(git status\)")
    term.prompt_ready(4)
    term.type("/permissions mode accept_edits")
    term.wait_for("mode: accept_edits")
    term.prompt_ready(5)
    term.type("/permissions")
    term.wait_for(r"allow: Read\(docs/\*\*\)  \[session\]")
    screen = term.wait_for("mode accept_edits")  # the status line follows the mode
    listing = screen.rsplit("/permissions", 1)[1]
    assert "Bash(git status)" not in listing
    assert term.leave() == 0


def test_help_cost_model_and_unknown_command(terminal, script) -> None:
    term = terminal("--model", script([]))
    term.prompt_ready(1)
    term.type("/help")
    screen = term.wait_for("/exit")
    for name in (
        "/clear",
        "/compact",
        "/context",
        "/permissions",
        "/plugins",
        "/mcp",
        "/model",
        "/cost",
        "/resume",
    ):
        assert name in screen
    term.prompt_ready(2)
    term.type("/cost")
    term.wait_for("output tokens: 0")
    screen = term.wait_for(r"no price for 'scripted:script\d*\.\w+'")
    assert "cost:          unknown" in screen  # never a made-up $0
    term.prompt_ready(3)
    term.type("/model nowhere:thing")
    term.wait_for("unknown model provider 'nowhere'")
    term.prompt_ready(4)
    term.type("/frobnicate")
    term.wait_for("unknown command /frobnicate")
    term.prompt_ready(5)
    term.type("/plugins")
    term.wait_for("no plugins")
    term.prompt_ready(6)
    term.type("/mcp")
    term.wait_for("no MCP servers")
    assert term.leave() == 0


def test_clear_starts_a_new_session_and_resume_returns(terminal, script) -> None:
    term = terminal("--model", script([{"text": "Blue is the answer."}]))
    screen = term.prompt_ready(1)
    import re

    first_id = re.search(r"session (\w+)", screen).group(1)
    term.type("favourite colour?")
    term.wait_for("Blue is the answer.")
    term.prompt_ready(2)
    term.type("/clear")
    term.wait_for("new session")
    term.prompt_ready(3)
    term.type("/resume")
    term.wait_for("Resume which")
    assert first_id in term.text()
    term.type(first_id)
    term.wait_for(f"resumed session {first_id}")
    term.wait_for("tether: Blue is the answer.")
    assert term.leave() == 0
