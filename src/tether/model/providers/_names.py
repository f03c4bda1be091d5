"""Tool names and call ids as each API accepts them, and the way back.

A conversation can hold names and ids no API would take: a tool named `web.search`, a
call id from vLLM (`chatcmpl-tool-` + 32 hex digits: too long for OpenAI's 40) or Kimi
(`functions.get_weather:0`: Anthropic allows only `[A-Za-z0-9_-]`). Such a value is sent
as a safe, stable stand-in: the allowed characters of the original, `_`, and 8 hex digits
of its SHA-256, so two originals never share a stand-in and every request of a
conversation uses the same one. Names the model calls are mapped back to the original.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

__all__ = ["ANTHROPIC_NAMES", "ANY_NAMES", "CHAT_NAMES", "GEMINI_NAMES", "NameRule", "ToolNames"]

_DIGEST = 8


@dataclass(frozen=True, slots=True)
class NameRule:
    """What one API accepts as a tool name and as a call id."""

    name_ok: re.Pattern[str]
    name_bad_char: re.Pattern[str]
    name_limit: int
    id_limit: int | None
    """The longest call id; `None` when ids are not rewritten."""
    name_first: str = ""
    """Characters a name may start with (any allowed character if empty)."""


_ID_OK = re.compile(r"[A-Za-z0-9_-]+")
_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")

CHAT_NAMES = NameRule(re.compile(r"[A-Za-z0-9_-]{1,64}"), _ID_BAD, 64, 40)
"""OpenAI chat completions (and DashScope): names `^[a-zA-Z0-9_-]{1,64}$`, ids at most 40."""
ANTHROPIC_NAMES = NameRule(re.compile(r"[A-Za-z0-9_-]{1,64}"), _ID_BAD, 64, 40)
"""Anthropic: names `^[a-zA-Z0-9_-]{1,64}$`, ids `^[a-zA-Z0-9_-]+$`."""
GEMINI_NAMES = NameRule(
    re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"),
    re.compile(r"[^A-Za-z0-9_.:-]"),
    64,
    None,
    name_first="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_",
)
"""Gemini: names start with a letter or `_`, then letters, digits, `_ . : -`, at most 64."""
ANY_NAMES = NameRule(re.compile(r".+", re.DOTALL), _ID_BAD, 64, None)
"""Ollama: any non-empty name (the model reads it in its template); no call ids."""


def _stand_in(value: str, bad: re.Pattern[str], limit: int, first: str = "") -> str:
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST]
    head = bad.sub("_", value)
    if first and head[:1] not in tuple(first):
        head = "_" + head
    return f"{head[: limit - 1 - _DIGEST]}_{digest}"


@dataclass(slots=True)
class ToolNames:
    """The names and ids of one request as `rule` allows them, remembering the way back."""

    rule: NameRule
    _back: dict[str, str] = field(default_factory=dict)

    def name(self, name: str) -> str:
        """`name` as the API accepts it."""
        if self.rule.name_ok.fullmatch(name):
            return name
        sent = _stand_in(name, self.rule.name_bad_char, self.rule.name_limit, self.rule.name_first)
        self._back[sent] = name
        return sent

    def original(self, sent: str) -> str:
        """The tool name the model meant by `sent`."""
        return self._back.get(sent, sent) if self._back else sent

    def call_id(self, call_id: str) -> str:
        """A call id as the API accepts it (the same stand-in for a call and its result)."""
        limit = self.rule.id_limit
        if limit is None or (len(call_id) <= limit and _ID_OK.fullmatch(call_id)):
            return call_id
        return _stand_in(call_id, _ID_BAD, limit)
