"""The `tether` loggers: structured records, redaction, `TETHER_LOG`."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from tether._log import (
    RedactingFilter,
    configure_logging,
    fields_of,
    get_logger,
    record,
    redact,
    redact_repeated,
    register_secret,
)
from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit, tool
from tether.tracing import TracingMiddleware


@pytest.fixture
def clean_tether_logger() -> Iterator[logging.Logger]:
    root = get_logger()
    before = (list(root.handlers), root.level)
    yield root
    root.handlers[:] = before[0]
    root.setLevel(before[1])


@pytest.mark.parametrize(
    "text",
    [
        "key sk-proj-abcdefghijklmnop1234 leaked",
        "Authorization: Bearer abcdefghijklmnop.qrstu",
        "https://host/x?api_key=abcdef123456&q=1",
        "google AIzaSyA1234567890abcdefghijklmnopq",
        '{"password": "hunter2hunter2"}',
    ],
)
def test_redact_hides_key_shapes(text: str) -> None:
    hidden = redact(text)
    assert "***" in hidden
    for secret in ("abcdefghijklmnop", "abcdef123456", "AIzaSyA123", "hunter2"):
        assert secret not in hidden


def test_registered_secrets_are_hidden_whatever_their_shape() -> None:
    register_secret("plainvalue-9f8e7d6c")
    assert redact("the key plainvalue-9f8e7d6c!") == "the key ***!"
    register_secret("short")  # too short to hunt for in free text
    assert redact("a short word") == "a short word"


def test_a_remembered_redaction_forgets_itself_when_a_secret_is_added() -> None:
    reason = "allowed: token-like value remembered-7a6b5c4d in the rule"
    assert redact_repeated(reason) == reason  # nothing to hide yet; now remembered
    assert redact_repeated(reason) == reason
    register_secret("remembered-7a6b5c4d")
    assert redact_repeated(reason) == "allowed: token-like value *** in the rule"
    assert redact_repeated(reason) == redact(reason)


def test_records_carry_their_fields_and_skip_work_when_off(clean_tether_logger, caplog) -> None:
    log = get_logger("tool")
    caplog.set_level(logging.INFO, logger="tether")
    record(log, logging.DEBUG, "not logged", tool="x")
    record(log, logging.INFO, "tool ran", tool="Bash", reply_id="r1", decision="allow", cost=None)
    assert [r.getMessage() for r in caplog.records] == ["tool ran"]
    fields = fields_of(caplog.records[0])
    assert fields == {"tool": "Bash", "reply_id": "r1", "decision": "allow"}


def test_tether_log_env_turns_logging_on_as_text_or_json(clean_tether_logger) -> None:
    assert configure_logging(environ={}) is None
    assert configure_logging(environ={"TETHER_LOG": "off"}) is None
    out = io.StringIO()
    handler = configure_logging(stream=out, environ={"TETHER_LOG": "debug"})
    assert handler is not None and clean_tether_logger.level == logging.DEBUG
    record(get_logger("reply"), logging.DEBUG, "reply finished", reply_id="r1", session_id="s 1")
    line = out.getvalue().strip()
    assert line.endswith('tether.reply: reply finished reply_id=r1 session_id="s 1"')
    out2 = io.StringIO()
    configure_logging(stream=out2, environ={"TETHER_LOG": "info", "TETHER_LOG_FORMAT": "json"})
    assert [h for h in clean_tether_logger.handlers if getattr(h, "tether_handler", False)] != [
        handler
    ]
    get_logger("mcp").info("server %s said sk-abcdefghijklmnop123", "git", extra={"tool": "status"})
    data = json.loads(out2.getvalue())
    assert data["logger"] == "tether.mcp" and data["level"] == "info" and data["tool"] == "status"
    assert data["message"] == "server git said ***"  # records not made by `record` are redacted too
    assert out.getvalue().count("\n") == 1  # the first handler was replaced, not kept


def test_the_filter_redacts_fields_of_foreign_records() -> None:
    rec = logging.LogRecord("tether.x", logging.INFO, "f", 1, "api_key=%s", ("abcdefghijkl",), None)
    rec.header = "Bearer abcdefghijklmnopqrs"
    assert RedactingFilter().filter(rec) is True
    assert rec.getMessage() == "api_key=***"
    assert rec.header == "***"


async def test_tracing_middleware_logs_reply_tool_and_decision(clean_tether_logger, caplog) -> None:
    """With only the loggers on (no SDK), the middleware is active and logs structured records."""
    caplog.set_level(logging.DEBUG, logger="tether")

    @tool
    def remove(path: str) -> str:
        """Remove a file."""
        return "removed"

    @tool(is_read_only=True)
    def look(path: str) -> str:
        """Look."""
        return "seen"

    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [
                    ScriptedChatModel.tool_call("look", {"path": "a"}, id="c1"),
                    ScriptedChatModel.tool_call("remove", {"path": "a"}, id="c2"),
                ],
            ),
            AssistantMsg("a", "done"),
        ]
    )
    state = AgentState(
        permission_context=PermissionContext(deny_rules=[PermissionRule.parse("remove", "deny")])
    )
    middleware = TracingMiddleware()
    assert middleware.is_active  # the loggers are on
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[look, remove]),
        state=state,
        middlewares=[middleware],
    )
    msg = await agent.reply(UserMsg("user", "go"))
    by_message = {r.getMessage(): fields_of(r) for r in caplog.records}
    assert by_message["reply finished"]["reply_id"] == msg.id
    assert by_message["reply finished"]["session_id"] == state.session_id
    assert by_message["permission deny"]["tool"] == "remove"
    assert by_message["permission deny"]["decision"] == "deny"
    assert by_message["tool call ended"] == {
        "reply_id": msg.id,
        "tool": "look",
        "tool_call_id": "c1",
        "decision": "allow",
        "outcome": "success",
    }


def test_tether_log_turns_the_loggers_on_for_the_cli(tmp_path) -> None:
    import os
    import subprocess
    import sys

    code = (
        "import logging, sys\n"
        "from tether.cli import main\n"
        f"code = main(['demo', '--db', {str(tmp_path / 'demo.db')!r}, '--workdir', {str(tmp_path)!r}])\n"
        "root = logging.getLogger('tether')\n"
        "print(code, root.level, any(getattr(h, 'tether_handler', False) for h in root.handlers))\n"
        "logging.getLogger('tether.cli').debug('from the cli api_key=abcdefghij')\n"
    )
    env = {**os.environ, "TETHER_LOG": "debug"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip().splitlines()[-1] == f"0 {logging.DEBUG} True"
    assert "tether.cli: from the cli api_key=***" in out.stderr
