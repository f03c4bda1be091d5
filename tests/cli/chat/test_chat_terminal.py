"""`tether chat` driven as a person would: keystrokes in, the screen asserted."""

from __future__ import annotations

from pathlib import Path


def test_streamed_answer_with_thinking_folded(terminal, script) -> None:
    model = script(
        [{"thinking": "The user says hello; greet back.", "text": "Hello! I am **tether**."}]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("hi there")
    screen = term.wait_for(r"Hello! I am tether\.")
    assert "✻ thought for 6 words" in screen
    assert "The user says hello" not in screen  # folded away once it ended
    term.prompt_ready(2)
    assert term.leave() == 0


def test_always_allows_the_next_matching_call(terminal, script, project: Path) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch one.txt"}}]},
            {"text": "Made one."},
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch two.txt"}}]},
            {"text": "Made two."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make one")
    screen = term.wait_for(r"\[e\]dit")
    assert "Allow Bash touch one.txt? [y]es / [a]lways (Bash(touch:*))" in screen
    term.key("a")
    term.wait_for("Made one.")
    term.prompt_ready(2)
    term.type("make two")
    term.wait_for("Made two.")
    assert term.count(r"Allow Bash") == 1
    assert (project / "one.txt").exists() and (project / "two.txt").exists()
    assert term.leave() == 0
    # The accepted rule is part of the saved session: it still holds after -c.
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch three.txt"}}]},
            {"text": "Made three."},
        ]
    )
    again = terminal("-c", "--model", model)
    again.prompt_ready(1)
    again.type("make three")
    again.wait_for("Made three.")
    assert again.count("Allow Bash") == 0
    assert again.leave() == 0


def _saved_state(home: Path):
    import asyncio

    from tether.app.storage import SQLiteStorage

    async def load():
        async with SQLiteStorage(home / "tether" / "sessions.db") as storage:
            infos = await storage.list_sessions("local", "chat")
            record = await storage.get_session("local", "chat", infos[0].session_id)
            return record.state

    return asyncio.run(load())


def test_no_with_a_reason_reaches_the_model(terminal, script, home: Path, project: Path) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "rm -r build"}}]},
            {"text": "Understood, I will keep the build folder."},
        ]
    )
    (project / "build").mkdir()
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("clean up")
    term.wait_for(r"Allow Bash rm -r build\?")
    term.key("n")
    term.wait_for("Tell it why")
    term.type("the build folder is needed for the release")
    term.wait_for("I will keep the build folder")
    term.prompt_ready(2)
    assert term.leave() == 0
    assert (project / "build").is_dir()
    state = _saved_state(home)
    said = [m.get_text_content() or "" for m in state.context if m.role == "user"]
    assert any("the build folder is needed for the release" in s for s in said)
    results = [b for m in state.context for b in m.content if b.type == "tool_result"]
    assert [r.state.value for r in results] == ["denied"]


def test_edit_changes_the_command_before_it_runs(terminal, script, project: Path) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch wrong.txt"}}]},
            {"text": "Done."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make a file")
    term.wait_for(r"\[e\]dit")
    term.key("e")
    term.wait_for("Command: touch wrong.txt")
    term.ctrl("u")  # clear the pre-filled command
    term.type("touch right.txt")
    term.wait_for("Done.")
    assert (project / "right.txt").exists()
    assert not (project / "wrong.txt").exists()
    assert "Bash(touch right.txt)" in term.text()  # the edited call is shown
    assert term.leave() == 0


def test_ctrl_c_mid_tool_leaves_a_consistent_session(terminal, script, home: Path) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo started && sleep 60"}}]},
            {"text": "Still here."},
        ]
    )
    term = terminal("--model", model, "--allow", "Bash(echo:*)", "--allow", "Bash(sleep:*)")
    term.prompt_ready(1)
    term.type("wait a minute")
    term.wait_for("│ started")
    term.ctrl("c")
    term.wait_for("interrupted")
    term.prompt_ready(2)
    term.type("are you there?")
    term.wait_for("Still here.")
    term.prompt_ready(3)
    term.ctrl("c")
    term.wait_for(r"Ctrl\+C again")
    term.ctrl("c")
    assert term.wait_exit() == 0
    state = _saved_state(home)
    assert state.reply is None or state.reply.finished
    results = [b for m in state.context for b in m.content if b.type == "tool_result"]
    assert [r.state.value for r in results] == ["interrupted"]
    assert state.context[-1].get_text_content() == "Still here."


def test_continue_restores_the_conversation(terminal, script) -> None:
    first = terminal("--model", script([{"text": "The answer is 42."}]))
    first.prompt_ready(1)
    first.type("what is the answer?")
    first.wait_for("The answer is 42.")
    first.prompt_ready(2)
    first.type("/exit")
    assert first.wait_exit() == 0
    again = terminal("-c", "--model", script([{"text": "You asked about the answer."}]))
    screen = again.prompt_ready(1)
    assert "you: what is the answer?" in screen
    assert "tether: The answer is 42." in screen
    again.type("what did I ask?")
    again.wait_for("You asked about the answer.")
    assert again.leave() == 0


def test_killed_at_a_confirmation_resumes_at_the_same_prompt(
    terminal, script, project: Path
) -> None:
    steps = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "touch later.txt"}}]},
        {"text": "Created it."},
    ]
    first = terminal("--model", script(steps))
    first.prompt_ready(1)
    first.type("make later.txt")
    first.wait_for(r"Allow Bash touch later.txt\?")
    first.kill()
    again = terminal("-c", "--model", script(steps[1:]))
    again.wait_for(r"Allow Bash touch later.txt\?")
    again.type("y")
    again.wait_for("Created it.")
    assert (project / "later.txt").exists()
    assert again.leave() == 0


def test_write_and_edit_show_a_diff(terminal, script, project: Path) -> None:
    (project / "notes.md").write_text("alpha\nbeta\n")
    model = script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.md"}}]},
            {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {
                            "file_path": "notes.md",
                            "old_string": "beta",
                            "new_string": "gamma",
                        },
                    }
                ]
            },
            {
                "tool_calls": [
                    {"name": "Write", "input": {"file_path": "new.md", "content": "fresh\n"}}
                ]
            },
            {"text": "Edited and written."},
        ]
    )
    term = terminal("--model", model, "--permission-mode", "accept_edits")
    term.prompt_ready(1)
    term.type("edit it")
    screen = term.wait_for("Edited and written.")
    assert "● Read(notes.md)" in screen and "⎿ success 2 lines" in screen
    assert "● Edit(notes.md)\n    1   alpha\n    2 - beta\n    2 + gamma" in screen
    assert "● Write(new.md)\n    1 + fresh" in screen
    assert (project / "notes.md").read_text() == "alpha\ngamma\n"
    row = screen.splitlines().index("    2 - beta")
    cells = term.screen.buffer
    assert cells[row][4].fg == "red" and cells[row + 1][4].fg == "green"
    assert term.leave() == 0


def test_multi_line_message_and_history(terminal, script, home: Path) -> None:
    term = terminal("--model", script([{"text": "Two lines received."}]))
    term.prompt_ready(1)
    term.child.send("first line\x1b\rsecond line\r")  # Esc Enter: a new line in the message
    term.wait_for("Two lines received.")
    assert term.leave() == 0
    state = _saved_state(home)
    assert state.context[0].get_text_content() == "first line\nsecond line"
    assert "second line" in (home / "tether" / "history").read_text()


def test_ctrl_c_at_a_confirmation_interrupts_the_reply(terminal, script, project, home) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch never.txt"}}]},
            {"text": "Fresh start."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make never.txt")
    term.wait_for(r"Allow Bash touch never.txt\?")
    term.ctrl("c")
    term.wait_for("⎿ interrupted The user interrupted the reply.")
    term.prompt_ready(2)
    term.type("hello again")
    term.wait_for("Fresh start.")
    assert term.leave() == 0
    assert not (project / "never.txt").exists()
    assert _saved_state(home).context[-1].get_text_content() == "Fresh start."


def test_killed_mid_tool_continues_with_the_outcome_unknown(terminal, script, home: Path) -> None:
    import os
    import re
    import signal

    model = script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": "echo started $$ && sleep 60"}}]}]
    )
    first = terminal("--model", model)
    first.prompt_ready(1)
    first.type("wait")
    first.wait_for(r"\[e\]dit")  # `$$` is an expansion: the engine asks
    first.type("y")
    shell = int(re.search(r"started (\d+)", first.wait_for(r"started \d+")).group(1))
    first.kill()  # the checkpoint saved the call as running before it started
    try:
        os.killpg(os.getpgid(shell), signal.SIGKILL)  # what the dead process left running
    except ProcessLookupError:
        pass
    again = terminal("-c", "--model", script([{"text": "The sleep was cut short."}]))
    again.prompt_ready(1)
    again.type("what happened?")
    again.wait_for("The sleep was cut short.")
    assert again.leave() == 0
    state = _saved_state(home)
    results = [b for m in state.context for b in m.content if b.type == "tool_result"]
    assert [r.state.value for r in results] == ["interrupted"]
    assert state.context[-1].get_text_content() == "The sleep was cut short."


def test_an_answer_taller_than_the_screen_is_printed_once(home, project, script) -> None:
    from terminal import Terminal, chat_env

    items = "\n".join(f"{i}. item number {i}" for i in range(1, 61))
    model = script([{"text": f"A long list:\n\n{items}\n\nEnd of list."}])
    term = Terminal(["--model", model], project, chat_env(home), rows=20, cols=80)
    try:
        term.prompt_ready(1)
        term.type("list")
        term.wait_for("End of list.")
        term.wait_idle()
        lines = [line for line in term.transcript() if "item number" in line]
        assert len(lines) == 60 and len(set(lines)) == 60
        assert term.leave() == 0
    finally:
        term.close()


def test_a_model_error_is_one_line_and_the_chat_goes_on(terminal, script) -> None:
    model = script(
        [{"error": "ModelResponseError: model 'x' does not exist"}, {"text": "Back again."}]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("hi")
    term.wait_for(r"error: ModelResponseError: model 'x' does not exist")
    term.prompt_ready(2)
    term.type("hi again")
    term.wait_for("Back again.")
    assert term.leave() == 0


def test_a_second_writer_is_a_conflict_not_a_lost_update(
    terminal, script, home: Path, project: Path
) -> None:
    import json
    import subprocess
    import sys

    from terminal import LAUNCH, chat_env

    def headless(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", LAUNCH, "chat", "-p", *args, "--output-format", "json"],
            cwd=project, env=chat_env(home), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return json.loads(done.stdout)

    session = headless("start", "--model", script([{"text": "Started."}]))["session_id"]
    term = terminal("-r", session, "--model", script([{"text": "Never saved."}]))
    term.prompt_ready(1)
    assert (
        headless("meanwhile", "-r", session, "--model", script([{"text": "Other."}]))["result"]
        == "Other."
    )
    term.type("from the terminal")
    term.wait_for("error: SessionConflictError")
    assert term.leave() == 0
    texts = [m.get_text_content() for m in _saved_state(home).context]
    assert texts == ["start", "Started.", "meanwhile", "Other."]
