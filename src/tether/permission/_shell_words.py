"""Turning tree-sitter word nodes into the strings bash would pass, or `None` if unknowable."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ShellWord", "decode_word"]

_GLOB_CHARS = frozenset("*?[")
_C_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_C_NUMERIC = re.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.")
_DQ_ESCAPABLE = frozenset('$`"\\\n')


@dataclass(frozen=True, slots=True)
class ShellWord:
    """One word of a simple command."""

    text: str
    """The word as written."""
    value: str | None
    """What bash passes to the command; `None` when it depends on the run (expansions)."""
    glob: bool = False
    """True if the word has unquoted glob characters (`*`, `?`, `[`), so it may expand."""
    tilde: bool = False
    """True if the word starts with an unquoted `~` (bash expands it to a home dir)."""

    @property
    def static(self) -> bool:
        """True if bash passes exactly `value`, as one argument."""
        return self.value is not None and not self.glob


class _Builder:
    """Collects characters with whether each was quoted."""

    __slots__ = ("chars", "quoted")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.quoted: list[bool] = []

    def add(self, text: str, quoted: bool) -> None:
        self.chars.extend(text)
        self.quoted.extend([quoted] * len(text))


def _add_unquoted(builder: _Builder, raw: str) -> None:
    i, n = 0, len(raw)
    while i < n:
        char = raw[i]
        if char == "\\" and i + 1 < n:
            if raw[i + 1] != "\n":
                builder.add(raw[i + 1], True)
            i += 2
            continue
        builder.add(char, False)
        i += 1


def _add_double_quoted(builder: _Builder, raw: str) -> None:
    i, n = 0, len(raw)
    while i < n:
        char = raw[i]
        if char == "\\" and i + 1 < n and raw[i + 1] in _DQ_ESCAPABLE:
            if raw[i + 1] != "\n":
                builder.add(raw[i + 1], True)
            i += 2
            continue
        builder.add(char, True)
        i += 1


def _decode_c(raw: str) -> str | None:
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        char = raw[i]
        if char != "\\" or i + 1 >= n:
            out.append(char)
            i += 1
            continue
        nxt = raw[i + 1]
        if nxt in _C_ESCAPES:
            out.append(_C_ESCAPES[nxt])
            i += 2
            continue
        match = _C_NUMERIC.match(raw, i + 1)
        if match is None:
            out.append(char + nxt)
            i += 2
            continue
        code = match.group()
        if code[0] == "c":
            out.append(chr(ord(code[1]) & 0x1F))
        elif code[0] in "xuU":
            value = int(code[1:], 16)
            if value > 0x10FFFF:
                return None
            out.append(chr(value))
        else:
            out.append(chr(int(code, 8) & 0xFF))
        i = match.end()
    return "".join(out)


def _text(node: Any, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _add_node(builder: _Builder, node: Any, src: bytes) -> bool:
    """Append the node's value; False if it is dynamic or unknown."""
    kind = node.type
    raw = _text(node, src)
    if kind in ("word", "number"):
        _add_unquoted(builder, raw)
        return True
    if kind == "raw_string":
        builder.add(raw[1:-1], True)
        return True
    if kind == "ansi_c_string":
        decoded = _decode_c(raw[2:-1])
        if decoded is None:
            return False
        builder.add(decoded, True)
        return True
    if kind in ("string", "translated_string"):
        if any(c.is_named and c.type != "string_content" for c in node.children):
            return False
        start = 2 if kind == "translated_string" else 1
        _add_double_quoted(builder, raw[start:-1])
        return True
    if kind == "concatenation":
        end = node.start_byte
        for child in node.children:
            if child.start_byte != end or not _add_node(builder, child, src):
                return False
            end = child.end_byte
        return bool(end == node.end_byte)
    return False


def _has_brace(chars: list[str], quoted: list[bool]) -> bool:
    opened = False
    for char, q in zip(chars, quoted, strict=True):
        if q:
            continue
        if char == "{":
            opened = True
        elif char == "}" and opened:
            return True
    return False


def decode_word(node: Any, src: bytes) -> ShellWord:
    """Decode a tree-sitter argument node the way bash quote removal would.

    Unquoted brace expansions (`{a,b}`) and any expansion or substitution make the value
    `None`; unquoted glob characters keep the value (the pattern) and set `glob`.
    """
    text = _text(node, src)
    builder = _Builder()
    if not _add_node(builder, node, src):
        return ShellWord(text=text, value=None)
    chars, quoted = builder.chars, builder.quoted
    if _has_brace(chars, quoted):
        return ShellWord(text=text, value=None, glob=True)
    glob = any(c in _GLOB_CHARS and not q for c, q in zip(chars, quoted, strict=True))
    tilde = bool(chars) and chars[0] == "~" and not quoted[0]
    return ShellWord(text=text, value="".join(chars), glob=glob, tilde=tilde)
