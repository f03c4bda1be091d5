r"""Where the tree-sitter bash grammar reads a command unlike bash does.

Each function here finds one such place, so the walker (`_parse`) can read the
command as bash does or, where that is not certain, ask. Found by running the same
commands through bash: words after a redirect (`cat 2>/dev/null x`), a line starting with
a backslash (`ls<newline>\rm x` became one command), `r\<newline>m` (one word to bash),
`{\x` and `{ {` (split and joined unlike bash), a `#` inside a word, and here-documents
whose end bash finds elsewhere (`<<$'EOF'`).
"""

from __future__ import annotations

import re
from typing import Any

from tether.shell._words import ShellWord, tilde_known_when_run

__all__ = [
    "ESCAPED_BLANK",
    "FOREIGN_BLANK",
    "FOREIGN_BLANKS",
    "JOINED",
    "SKIPPED",
    "SPLIT",
    "UNESCAPED_NEWLINE",
    "comment_in_word",
    "gap_problem",
    "heredoc_problems",
    "join_words",
    "leading_blanks",
    "raw_blank",
    "redirect_owner",
    "redirect_words",
    "skips_text",
    "target_parts",
]

UNESCAPED_NEWLINE = re.compile(rb"(?<!\\)\n")
ESCAPED_BLANK = re.compile(rb"\\[^\n]")
r"""A backslash between two words the grammar split: `a\<tab>b` is one word to bash."""
JOINED = re.compile(rb"(?:\\\n)*")
"""A gap of line continuations only: bash joins the words on both sides."""
_BLANKS = re.compile(rb"(?:[ \t\r\n]|\\\n)*")
_RAW_BLANK = re.compile(rb"(?<!\\)[ \t]")
_BLANK = frozenset(b" \t\r\n")
_WORD_ENDS = frozenset(b" \t\n;&|()<>")
"""Bytes after which a `#` starts a comment in bash."""
_REDIRECT_OWNERS = frozenset({"pipeline", "list", "negated_command"})

SPLIT = "the parser splits words unlike bash"
FOREIGN_BLANKS = re.compile("[\r\v\f]")
r"""Bytes the grammar takes for blanks and bash does not: `ls<CR>rm` is one word to bash.

Found by parsing `ls<c>rm` for every ASCII byte and the Unicode spaces: only these three
split. A command holding one asks wherever it is (quoted ones too: the grammar's idea of
quoting is what is in doubt, and a real command rarely needs one).
"""
FOREIGN_BLANK = "it contains a carriage return, vertical tab or form feed (bash reads words there unlike the parser)"
SKIPPED = "the parser skipped part of the command"


def leading_blanks(src: bytes, start: int, end: int) -> int:
    r"""How many blank bytes a node starts with (`ls<newline>\rm`: the word `<newline>\rm`)."""
    i = start
    while i < end and src[i] in _BLANK:
        i += 1
    return i - start


def gap_problem(gap: bytes, after_word: bool, own_child: bool) -> str | None:
    r"""What is wrong with the bytes between two parts of a command, if anything.

    Between two words there must be blanks: none (`{\x` split in two) or an escaped
    blank (`a\<tab>b`, one word to bash) mean the grammar split words unlike bash, and
    anything else is text it dropped (`cd - 2>x` lost the `-`).
    """
    if not gap:
        return SPLIT if after_word else None
    if b"\\" in gap and ESCAPED_BLANK.search(gap):
        return SPLIT
    if own_child and gap.strip(b" \t\r\n") and not _BLANKS.fullmatch(gap):
        return SKIPPED
    return None


def raw_blank(node: Any, src: bytes, skip: int) -> bool:
    """Whether an unquoted word part holds a blank that bash would split at (`{ {`)."""
    if not _RAW_BLANK.search(src, node.start_byte + skip, node.end_byte):
        return False  # the common case, without looking at the parts
    kind = node.type
    if kind in ("word", "command_name"):
        return kind == "word" or bool(node.named_children[0].type == "word")
    if kind != "concatenation":
        return False
    return any(
        part.type == "word"
        and _RAW_BLANK.search(src, max(part.start_byte, node.start_byte + skip), part.end_byte)
        for part in node.children
    )


def join_words(first: ShellWord, gap: bytes, second: ShellWord) -> ShellWord:
    r"""Two words the grammar split at a line continuation, joined as bash joins them."""
    text = first.text + gap.decode("utf-8", "replace") + second.text
    if first.value is None or second.value is None or first.glob or second.glob:
        return ShellWord(text=text, value=None)
    value = first.value + second.value
    if first.tilde and tilde_known_when_run(value):
        return ShellWord(text=text, value=None)
    return ShellWord(text=text, value=value, tilde=first.tilde)


def comment_in_word(node: Any, src: bytes) -> bool:
    r"""Whether the grammar took a `#` in the middle of a word for a comment.

    Bash joins lines at `\<newline>` before it splits words, so in `echo a\<newline>#x`
    the `#` is inside the word `a#x`, and a substitution after it runs; so is a `#`
    after an escaped blank (`a\<tab>#x`).
    """
    start = node.start_byte
    while start >= 2 and src[start - 2 : start] == b"\\\n":
        start -= 2
    if start == 0:
        return False
    escapes = len(src[: start - 1]) - len(src[: start - 1].rstrip(b"\\"))
    return src[start - 1] not in _WORD_ENDS or escapes % 2 == 1


def heredoc_problems(node: Any, src: bytes) -> list[str]:
    """Why a here-document is read unlike bash reads it, if it is.

    The grammar ends `<<$'EOF'` at a line `$'EOF'`, bash at `EOF`: the lines between are
    commands bash runs that the parser filed as text. Backticks in an unquoted body are
    command substitutions the grammar does not see.
    """
    parts = {
        c.type: src[c.start_byte : c.end_byte].decode("utf-8", "replace")
        for c in node.children
        if c.type.startswith("heredoc_")
    }
    start = parts.get("heredoc_start")
    if start is None:
        return []
    problems = []
    delimiter, quoted = _heredoc_delimiter(start)
    end = parts.get("heredoc_end")
    if delimiter is None or (end is not None and end != delimiter):
        problems.append("bash may end a here-document elsewhere than the parser does")
    if not quoted and "`" in parts.get("heredoc_body", ""):
        problems.append("a here-document runs a backtick substitution")
    return problems


def _heredoc_delimiter(word: str) -> tuple[str | None, bool]:
    """The line that ends a here-document started with `word`, and whether it is quoted.

    Bash removes quotes and backslashes from the word; `None` when that is not certain.
    """
    if "$'" in word or '$"' in word:
        return None, True
    out: list[str] = []
    quoted = False
    i, n = 0, len(word)
    while i < n:
        char = word[i]
        if char == "\\" and i + 1 < n:
            out.append(word[i + 1])
            i += 2
        elif char in "'\"":
            close = word.find(char, i + 1)
            if close < 0 or (char == '"' and "\\" in word[i:close]):
                return None, True
            out.append(word[i + 1 : close])
            i = close + 1
        else:
            out.append(char)
            i += 1
            continue
        quoted = True
    return "".join(out), quoted


def skips_text(node: Any, src: bytes) -> bool:
    """Whether the grammar left text between the parts of a node out of the tree."""
    end = node.start_byte
    for child in node.children:
        if not _BLANKS.fullmatch(src, end, child.start_byte):
            return True
        end = child.end_byte
    return False


def redirect_owner(node: Any) -> Any | None:
    """The simple command a `redirected_statement`'s redirects belong to, if there is one.

    The grammar wraps `a | b 2>x` and `a && b 2>x` whole; bash gives the redirect to `b`.
    """
    body = node.child_by_field_name("body")
    while body is not None and body.type in _REDIRECT_OWNERS and body.named_children:
        body = body.named_children[-1]
    return body if body is not None and body.type == "command" else None


def redirect_words(parent: Any, redirect: Any, src: bytes) -> list[Any]:
    """The argument words the grammar hung on one redirect of `parent`.

    `cat 2>/dev/null x` parses as a redirect with two destinations, `/dev/null` and `x`;
    bash runs `cat x`. Likewise `cat <<EOF x`.
    """
    if parent.type == "redirected_statement" and redirect.type not in (
        "file_redirect",
        "heredoc_redirect",
    ):
        return []
    words: list[Any] = list(target_parts(redirect, src)[1])
    for index, child in enumerate(redirect.children):
        if redirect.field_name_for_child(index) == "argument":
            words.append(child)  # `cat <<EOF x`
        elif child.type == "file_redirect":
            words.extend(redirect_words(redirect, child, src))  # `cat <<EOF 2>/dev/null x`
    return sorted(words, key=lambda w: w.start_byte)


def target_parts(redirect: Any, src: bytes) -> tuple[list[Any], list[Any]]:
    r"""A redirect's destinations: those that make up its target, and the words after it.

    The grammar splits `>x\<newline>y` into two destinations, bash writes `xy`; the
    following destinations (`2>/dev/null x`) are the command's arguments.
    """
    dests = [
        child
        for index, child in enumerate(redirect.children)
        if redirect.field_name_for_child(index) == "destination"
    ]
    count = 1
    while count < len(dests) and JOINED.fullmatch(
        src, dests[count - 1].end_byte, dests[count].start_byte
    ):
        count += 1
    return dests[:count], dests[count:]
