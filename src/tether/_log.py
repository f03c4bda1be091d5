"""The `tether` logger hierarchy: structured records, secrets redacted, `TETHER_LOG=debug`.

Records carry their fields as attributes (`record.reply_id`, `record.session_id`,
`record.tool`, `record.decision`, ...) so handlers and `caplog` read them directly; the
formatter here prints them as `key=value` pairs or one JSON object per line. Every text
passes `redact` first: API keys (by shape, and every key `register_secret` was told
of) never reach a handler that goes through `record`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Mapping
from typing import Any, TextIO

__all__ = [
    "LEVELS",
    "RedactingFilter",
    "StructuredFormatter",
    "configure_logging",
    "fields_of",
    "get_logger",
    "record",
    "redact",
    "redact_repeated",
    "register_secret",
]

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
"""The values `TETHER_LOG` takes (anything else, or unset, leaves logging alone)."""

_HIDDEN = "***"
_MIN_SECRET = 8
_SHAPES = re.compile(
    r"sk-[A-Za-z0-9_\-]{12,}"  # OpenAI, Anthropic (sk-ant-...), DeepSeek, DashScope
    r"|AIza[0-9A-Za-z_\-]{20,}"  # Google
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{12,}=*"
)
_ASSIGNED = re.compile(
    r"(?i)\b(api[_-]?key|access[_-]?token|secret|password|x-api-key|x-goog-api-key)"
    r"(\"?\s*[:=]\s*\"?)([^\s\"',;&]{6,})"
)
_secrets: set[str] = set()
_longest_first: tuple[str, ...] = ()
"""`_secrets`, longest first: sorted when one is added, not at every `redact`."""
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
}


def register_secret(value: str | None) -> None:
    """Hide `value` (e.g. an API key) wherever it appears in a record or span from now on."""
    global _longest_first
    if value and len(value) >= _MIN_SECRET and value not in _secrets:
        _secrets.add(value)
        _longest_first = tuple(sorted(_secrets, key=len, reverse=True))
        _repeated.clear()  # redacted before this secret was known


def redact(text: str) -> str:
    """`text` with every registered secret and anything shaped like an API key hidden."""
    for secret in _longest_first:  # (a longer secret may contain a shorter one)
        if secret in text:
            text = text.replace(secret, _HIDDEN)
    lowered = text.lower()  # the patterns need one of these words: most texts have none
    if "sk-" in text or "AIza" in text or "bearer" in lowered:
        text = _SHAPES.sub(_HIDDEN, text)
    if "key" in lowered or "token" in lowered or "secret" in lowered or "password" in lowered:
        return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{_HIDDEN}", text)
    return text


def redact_repeated(text: str) -> str:
    """`redact(text)` for short texts that recur (permission reasons): remembered."""
    found = _repeated.get(text)
    if found is None:
        found = redact(text)
        if len(text) <= 512:
            if len(_repeated) >= 1024:
                _repeated.clear()
            _repeated[text] = found
    return found


_repeated: dict[str, str] = {}
"""Texts `redact_repeated` has redacted, and what they became (until a secret is added)."""


def get_logger(name: str = "") -> logging.Logger:
    """The `tether` logger, or its child `tether.<name>`."""
    return logging.getLogger(f"tether.{name}" if name else "tether")


def record(logger: logging.Logger, level: int, message: str, **fields: Any) -> None:
    """Log `message` with `fields` as record attributes, every text redacted.

    Cheap when `level` is off: nothing is formatted.
    """
    if not logger.isEnabledFor(level):
        return
    extra = {key: _clean(value) for key, value in fields.items() if value is not None}
    logger.log(level, redact(message), extra=extra, stacklevel=2)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bool | int | float):
        return value
    return redact(str(value))


def fields_of(log_record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields of a record (what `record(...)` or `extra=` put on it)."""
    return {k: v for k, v in log_record.__dict__.items() if k not in _STANDARD}


class RedactingFilter(logging.Filter):
    """Redacts each record's message and fields (for records not made by `record`)."""

    def filter(self, log_record: logging.LogRecord) -> bool:
        """Rewrite the record in place; never drops it."""
        log_record.msg = redact(log_record.getMessage())
        log_record.args = None
        for key, value in fields_of(log_record).items():
            if isinstance(value, str):
                setattr(log_record, key, redact(value))
        return True


class StructuredFormatter(logging.Formatter):
    """`time level logger message key=value ...`, or one JSON object per line."""

    def __init__(self, *, as_json: bool = False) -> None:
        super().__init__()
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        """The record's line."""
        fields = fields_of(record)
        message = record.getMessage()
        if record.exc_info:
            message = f"{message}\n{self.formatException(record.exc_info)}"
        if self.as_json:
            line: dict[str, Any] = {
                "time": self.formatTime(record),
                "level": record.levelname.lower(),
                "logger": record.name,
                "message": message,
                **fields,
            }
            return json.dumps(line, default=str, ensure_ascii=False)
        pairs = " ".join(f"{key}={_quoted(value)}" for key, value in fields.items())
        head = f"{self.formatTime(record)} {record.levelname.lower():<7} {record.name}: "
        return head + message + (f" {pairs}" if pairs else "")


def _quoted(value: Any) -> str:
    text = str(value)
    return json.dumps(text) if not text or any(c in text for c in ' "=') else text


def configure_logging(
    level: str | int | None = None,
    *,
    stream: TextIO | None = None,
    as_json: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> logging.Handler | None:
    """Send the `tether` logs to `stream` (stderr) at `level`, or at `TETHER_LOG`'s.

    `TETHER_LOG=debug|info|warning|error` turns it on; unset or `off` leaves logging as
    the application set it up (returns `None`). `TETHER_LOG_FORMAT=json` prints JSON
    lines. Calling it again replaces the handler it installed before.
    """
    env = os.environ if environ is None else environ
    if level is None:
        level = env.get("TETHER_LOG", "").strip().lower()
    if isinstance(level, str):
        if level not in LEVELS:
            return None
        level = LEVELS[level]
    if as_json is None:
        as_json = env.get("TETHER_LOG_FORMAT", "").strip().lower() == "json"
    root = get_logger()
    for old in [h for h in root.handlers if getattr(h, "tether_handler", False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.tether_handler = True  # type: ignore[attr-defined]  # marks the one we own
    handler.addFilter(RedactingFilter())
    handler.setFormatter(StructuredFormatter(as_json=as_json))
    root.addHandler(handler)
    root.setLevel(level)
    return handler
