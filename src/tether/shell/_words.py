"""Turning tree-sitter word nodes into the strings bash would pass, or `None` if unknowable."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ShellWord", "decode_word", "tilde_known_when_run"]

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
_DIR_STACK = re.compile(r"[+-][0-9]*|[0-9]+")
"""Tilde prefixes bash takes from the directory stack: `~+` ($PWD), `~-` ($OLDPWD), `~2`."""


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
    pattern: str | None = None
    """For a glob, the pattern in Python's `glob` syntax: quoted `*?[]` made literal and
    `[^...]` written `[!...]`. `None` if not a glob or not expressible."""

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
    decoded = "".join(out)
    # Bash's string ends at a NUL: `$'.env\x00x'` is `.env`.
    return decoded.split("\x00", 1)[0]


def _text(node: Any, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _add_node(builder: _Builder, node: Any, src: bytes, skip: int = 0) -> bool:
    """Append the node's value (without its first `skip` bytes); False if dynamic or unknown."""
    kind = node.type
    raw = _text(node, src)
    if kind in ("word", "number"):
        _add_unquoted(builder, raw[skip:])
        return True
    if skip and kind != "concatenation":
        return False
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
            if child.start_byte != end or not _add_node(builder, child, src, skip):
                return False
            end, skip = child.end_byte, 0
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


def decode_word(node: Any, src: bytes, skip: int = 0) -> ShellWord:
    """Decode a tree-sitter argument node the way bash quote removal would.

    Unquoted brace expansions (`{a,b}`) and any expansion or substitution make the value
    `None`; unquoted glob characters keep the value (the pattern) and set `glob`. `skip`
    leading bytes (blanks the grammar put into the word) are left out.
    """
    text = _text(node, src)[skip:]
    builder = _Builder()
    if not _add_node(builder, node, src, skip):
        return ShellWord(text=text, value=None)
    chars, quoted = builder.chars, builder.quoted
    if _has_brace(chars, quoted):
        return ShellWord(text=text, value=None, glob=True)
    glob = any(c in _GLOB_CHARS and not q for c, q in zip(chars, quoted, strict=True))
    tilde = bool(chars) and chars[0] == "~" and not quoted[0]
    value = "".join(chars)
    if tilde and tilde_known_when_run(value):
        return ShellWord(text=text, value=None)  # `~+/..` is `$PWD/..`
    pattern = _glob_pattern(chars, quoted) if glob else None
    return ShellWord(text=text, value=value, glob=glob, tilde=tilde, pattern=pattern)


def _glob_pattern(chars: list[str], quoted: list[bool]) -> str | None:
    """The bash glob as Python's `glob` reads it, or `None` if that is unsure.

    Python ignores quoting (`"[a]"*` would match `a...`, bash matches `[a]...`) and reads
    `[^x]` as "`^` or `x`" (bash: "not `x`").
    """
    out: list[str] = []
    bracket = -1  # index in `chars` where an open bracket expression started
    for i, (char, q) in enumerate(zip(chars, quoted, strict=True)):
        if bracket >= 0:
            if q:
                return None  # a quoted character inside brackets: not worth modelling
            first = i == bracket + 1 or (i == bracket + 2 and chars[bracket + 1] in "!^")
            if char == "]" and not first:
                bracket = -1
            out.append("!" if char == "^" and i == bracket + 1 else char)
        elif q and char in "*?[]":
            out.append(f"[{char}]")
        else:
            if char == "[" and not q:
                bracket = i
            out.append(char)
    return None if bracket >= 0 else "".join(out)


def tilde_known_when_run(value: str) -> bool:
    """Whether bash expands a word's leading `~` to something only the run knows.

    `~+` is `$PWD`, `~-` `$OLDPWD`, `~2` an entry of the directory stack; a `:` ends the
    tilde prefix in bash (`~:/x` is `$HOME:/x`) but not in `os.path.expanduser`.
    """
    prefix = value[1:].split("/", 1)[0]
    return ":" in prefix or bool(_DIR_STACK.fullmatch(prefix))
