r"""The git config file syntax, read as git reads it (`config.c`), keys and values only.

Sections `[core]`, `[remote "origin"]` and `[a.b]`; keys `name = value` or a bare `name`
(true); `#`/`;` comments; values with quotes, escapes and `\<newline>` continuations,
which is why a line is not simply a key: a continued value may look like a section.
Anything git would reject makes the whole file unreadable (`None`), so a caller asks.
"""

from __future__ import annotations

__all__ = ["config_entries"]

_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


class _Bad(Exception):
    pass


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text.removeprefix("\ufeff").replace("\r\n", "\n")
        self.i = 0

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def next(self) -> str:
        char = self.peek()
        self.i += 1
        return char

    def skip_line(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end + 1

    def header(self) -> str:
        end = self.text.find("]", self.i)
        if end < 0:
            raise _Bad
        raw = self.text[self.i : end]
        if '"' not in raw:
            self.i = end + 1
            if not raw or not all(c.isalnum() or c in "-." for c in raw):
                raise _Bad
            return raw.lower()
        name, quote, _ = raw.partition(' "')
        if not quote or not name or not all(c.isalnum() or c in "-." for c in name):
            raise _Bad
        self.i += len(name) + 2
        sub: list[str] = []
        while True:
            char = self.next()
            if char in ("", "\n"):
                raise _Bad
            if char == '"':
                break
            if char == "\\":
                char = self.next()
                if char in ("", "\n"):
                    raise _Bad
            sub.append(char)
        if self.next() != "]":
            raise _Bad
        return f"{name.lower()}.{''.join(sub).lower()}"

    def value(self) -> str:
        out: list[str] = []
        quoted = comment = False
        while True:
            char = self.next()
            if char in ("", "\n"):
                if quoted:
                    raise _Bad
                return "".join(out).strip()
            if comment:
                continue
            if not quoted and char in "#;":
                comment = True
            elif char == "\\":
                char = self.next()
                if char == "\n":
                    continue
                if char not in _ESCAPES:
                    raise _Bad
                out.append(_ESCAPES[char])
            elif char == '"':
                quoted = not quoted
            else:
                out.append(char)


def _entry(reader: _Reader, section: str | None) -> tuple[str, str]:
    start = reader.i
    while reader.peek().isalnum() or reader.peek() == "-":
        reader.i += 1
    name = reader.text[start : reader.i].lower()
    if section is None or not name[:1].isalpha():
        raise _Bad
    while reader.peek() in (" ", "\t"):
        reader.i += 1
    char = reader.peek()
    if char == "=":
        reader.i += 1
        return f"{section}.{name}", reader.value()
    if char in ("", "\n", "#", ";"):
        reader.skip_line()
        return f"{section}.{name}", "true"
    raise _Bad


def config_entries(text: str) -> list[tuple[str, str]] | None:
    """Every `(key, value)` of a git config file (keys lower-cased); `None` if git rejects it."""
    reader = _Reader(text)
    section: str | None = None
    entries: list[tuple[str, str]] = []
    try:
        while True:
            char = reader.peek()
            if char == "":
                return entries
            if char in " \t\n":
                reader.i += 1
            elif char in "#;":
                reader.skip_line()
            elif char == "[":
                reader.i += 1
                section = reader.header()
            else:
                entries.append(_entry(reader, section))
    except _Bad:
        return None
