r"""What a server sends that the SDK cannot use, between the transport and the SDK.

The SDK drops a frame it cannot parse (after logging it with a traceback) and an answer
whose id matches no request (it logs that at DEBUG): the call waiting for that answer
then waits forever. `FrameGuard` sits on both streams of a session, knows which request
ids are in flight, and turns

- an answer that cannot be read (a lone `\ud800` escape, a frame that is not a valid
  message) into an error answer for its request, if its id can be found, else for every
  request in flight;
- an answer for an id that was never sent (or an error without an id) into error
  answers for every request in flight (nothing tells which one it was meant for, and
  that one's answer will not come);
- a line that is not JSON (a banner, a stray `print`) into one log line within the
  session's budget (`LogBudget`), and nothing else.

Answers that arrive late (for a request already answered or cancelled) are dropped, as
the SDK would drop them.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections import OrderedDict
from typing import Any

from tether.mcp._stderr import LINE_CHARS, LogBudget

__all__ = ["FrameGuard", "guarding", "install_sdk_log_filter", "unguard"]

stdout_logger = logging.getLogger("tether.mcp.stdout")

_UNREADABLE = -32700  # JSON-RPC "parse error"
_UNMATCHED = -32603  # JSON-RPC "internal error"
_FINISHED_KEPT = 4096
_GUARDED: contextvars.ContextVar[bool] = contextvars.ContextVar("tether_mcp_guarded", default=False)
_SDK_PARSE_LOG = "Failed to parse JSONRPC message from server"
_filter_installed = False


def guarding() -> contextvars.Token[bool]:
    """Mark the current context (and tasks started from it) as guarded by a `FrameGuard`.

    The SDK's stdio reader then leaves unparseable lines to the guard instead of logging
    each with a traceback. Reset the token when the session ends.
    """
    install_sdk_log_filter()
    return _GUARDED.set(True)


def unguard(token: contextvars.Token[bool]) -> None:
    """Undo `guarding()` (in the context that set it)."""
    try:
        _GUARDED.reset(token)
    except ValueError:  # exited in another context: that one was a copy anyway
        pass


def install_sdk_log_filter() -> None:
    """Once per process: drop the SDK's per-line parse tracebacks in guarded contexts."""
    global _filter_installed
    if not _filter_installed:
        logging.getLogger("mcp.client.stdio").addFilter(_drop_guarded_parse_logs)
        _filter_installed = True


def _drop_guarded_parse_logs(record: logging.LogRecord) -> bool:
    return not (_GUARDED.get() and record.msg == _SDK_PARSE_LOG)


class FrameGuard:
    """Tracks one session's requests in flight and repairs what the SDK would drop."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.noise = LogBudget(server, "stdout", stdout_logger)
        self._in_flight: dict[Any, Any] = {}  # coerced id -> id as sent
        self._finished: OrderedDict[Any, None] = OrderedDict()

    # -- outgoing ---------------------------------------------------------------------

    def sent(self, item: Any) -> None:
        """Note a request (or a cancellation) we are sending."""
        from mcp_types import JSONRPCNotification, JSONRPCRequest

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest):
            self._in_flight[_coerce(message.id)] = message.id
        elif isinstance(message, JSONRPCNotification):
            if message.method == "notifications/cancelled" and message.params:
                cancelled = message.params.get("requestId")
                if cancelled is not None:
                    self._finish(_coerce(cancelled))

    def _finish(self, key: Any) -> None:
        self._in_flight.pop(key, None)
        self._finished[key] = None
        if len(self._finished) > _FINISHED_KEPT:
            self._finished.popitem(last=False)

    # -- incoming ---------------------------------------------------------------------

    def received(self, item: Any) -> list[Any]:
        """What to hand the SDK instead of `item` (in order; maybe nothing)."""
        from mcp_types import JSONRPCError, JSONRPCResponse

        if isinstance(item, Exception):
            return self._unreadable(item)
        message = getattr(item, "message", None)
        if not isinstance(message, JSONRPCResponse | JSONRPCError):
            return [item]
        key = None if message.id is None else _coerce(message.id)
        if key is not None and key in self._in_flight:
            self._finish(key)
            return [item]
        if key is not None and key in self._finished:
            return []  # late: answered or cancelled already
        if key is None and isinstance(message, JSONRPCError):
            what = f"an error for no request id ({message.error.message[:200]})"
        else:
            what = f"an answer for request id {message.id!r}, which was never sent"
        why = (
            f"MCP server {self.server!r} sent {what}, so its answers cannot be matched to "
            "calls; the call may or may not have taken effect"
        )
        self.noise.log(self.noise.cut(f"{why}; failing {len(self._in_flight)} request(s)"))
        return self._fail_all(why)

    def _unreadable(self, exc: Exception) -> list[Any]:
        raw = _raw_frame(exc)
        frame: Any = raw
        if isinstance(raw, str):
            frame = _loads(raw)
            if frame is None:  # not JSON at all: noise
                self.noise.log(self.noise.cut(raw))
                return []
        detail = _first_line(exc)
        shown = str(raw)[: LINE_CHARS + 1]
        self.noise.log(self.noise.cut(f"unreadable MCP message ({detail}): {shown}"))
        if not isinstance(frame, dict) or "method" in frame or "id" not in frame:
            return []  # not an answer: no call waits for it
        why = (
            f"MCP server {self.server!r} sent an answer that could not be read ({detail}); "
            "the call may or may not have taken effect"
        )
        request_id = frame["id"]
        key = _coerce(request_id) if isinstance(request_id, str | int) else None
        if key is not None and key in self._in_flight:
            return [self._error(self._in_flight[key], _UNREADABLE, why)]
        if key is not None and key in self._finished:
            return []
        return self._fail_all(why)

    def _fail_all(self, why: str) -> list[Any]:
        return [self._error(sent, _UNMATCHED, why) for sent in list(self._in_flight.values())]

    def _error(self, request_id: Any, code: int, why: str) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError

        self._finish(_coerce(request_id))
        error = ErrorData(code=code, message=why)
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _coerce(request_id: Any) -> Any:
    """The id as the SDK correlates it ("7" and 7 are one id)."""
    if isinstance(request_id, str):
        try:
            return int(request_id)
        except ValueError:
            return request_id
    return request_id


def _raw_frame(exc: Exception) -> Any:
    """The line (str) or decoded object (dict) a parse failure was about, if it says."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        found = [e for e in errors() if isinstance(e, dict)]
    except Exception:
        return None
    for error in found:
        value = error.get("input")
        if error.get("type") == "json_invalid" and isinstance(value, str):
            return value
    for error in found:
        value = error.get("input")
        if isinstance(value, dict) and value.get("jsonrpc") is not None:
            return value
    return None


def _loads(raw: str) -> Any:
    """`raw` parsed leniently (lone surrogates allowed), or None if it is not JSON."""
    text = raw.strip()
    if not text.startswith("{"):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    detail = next((line.strip() for line in text[1:] if line.strip()), text[0] if text else "")
    detail = detail.split(" [type=", 1)[0]  # pydantic's details repeat the whole input
    return detail[:200] or type(exc).__name__
