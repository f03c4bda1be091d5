"""The operands of a command as GNU getopt hands them to it (the words that are not options).

Used to find the directories a recursive reader walks: `grep -r -m 5 src` searches `.`
(`5` is the value of `-m`, `src` the pattern), `grep -r -e x src` searches `src`. When in
doubt a word is taken for an option's value, which leaves fewer operands and makes the
walk start at `.` as well: the cautious side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ArgGrammar", "GRAMMARS", "operands"]


@dataclass(frozen=True, slots=True)
class ArgGrammar:
    """How a program reads its arguments (from its `--help`)."""

    value_shorts: str = ""
    """Short options that take a value (glued, or the next word, even `--`)."""
    value_longs: frozenset[str] = frozenset()
    """Long options that take a value (`--x=v`, or the next word)."""
    pattern_options: frozenset[str] = frozenset()
    """Options whose value is the pattern (`-e`, `--regexp`, `-f`, `--file`): then no
    operand is the pattern."""
    takes_pattern: bool = False
    """True if the first operand is a pattern unless a pattern option is given."""


def _longs(text: str) -> frozenset[str]:
    return frozenset("--" + name for name in text.split())


GRAMMARS: dict[str, ArgGrammar] = {
    "grep": ArgGrammar(
        value_shorts="ABCDdefm",
        value_longs=_longs(
            "regexp file max-count label after-context before-context context devices "
            "directories binary-files include exclude exclude-from exclude-dir group-separator"
        ),
        pattern_options=frozenset({"-e", "-f", "--regexp", "--file"}),
        takes_pattern=True,
    ),
    "rg": ArgGrammar(
        value_shorts="ABCEMTdefgjmrt",
        value_longs=_longs(
            "regexp file pre pre-glob dfa-size-limit encoding engine max-count "
            "regex-size-limit threads glob iglob ignore-file max-depth max-filesize type "
            "type-not type-add type-clear after-context before-context color colors context "
            "context-separator field-context-separator field-match-separator hostname-bin "
            "hyperlink-format max-columns path-separator replace sort sortr generate"
        ),
        pattern_options=frozenset({"-e", "-f", "--regexp", "--file", "--files"}),
        takes_pattern=True,
    ),
    "du": ArgGrammar(
        value_shorts="BdtX",
        value_longs=_longs(
            "block-size max-depth threshold time-style exclude exclude-from files0-from time"
        ),
    ),
    "ls": ArgGrammar(
        value_shorts="ITw",
        value_longs=_longs(
            "ignore hide tabsize width block-size format indicator-style quoting-style sort "
            "time time-style"
        ),
    ),
    "tree": ArgGrammar(
        value_shorts="LPIoHT",
        value_longs=_longs("charset filelimit timefmt sort infile fromfile gitfile"),
    ),
    "diff": ArgGrammar(
        value_shorts="CDFILSUWXx",
        value_longs=_longs(
            "context unified ifdef show-function-line ignore-matching-lines label "
            "starting-file width exclude-from exclude from-file to-file line-format "
            "old-line-format new-line-format unchanged-line-format old-group-format "
            "new-group-format unchanged-group-format changed-group-format horizontal-lines "
            "tabsize color palette"
        ),
    ),
}
for _alias in ("egrep", "fgrep"):
    GRAMMARS[_alias] = GRAMMARS["grep"]


def _long_takes_value(word: str, grammar: ArgGrammar) -> bool:
    """Whether `--name` (no `=`) takes the next word; an abbreviation counts (getopt)."""
    return any(option.startswith(word) for option in grammar.value_longs) and len(word) > 2


def operands(words: Sequence[str], grammar: ArgGrammar) -> list[str] | None:
    """The words after the command name that are operands, the pattern left out.

    `None` if there is no operand besides the pattern (the program then reads `.` or its
    standard input).
    """
    found: list[str] = []
    pattern_given = False
    consume = False
    done = False
    for word in words[1:]:
        if consume:
            consume = False
        elif done or word == "-" or not word.startswith("-"):
            found.append(word)
        elif word == "--":
            done = True
        elif word.startswith("--"):
            name = word.split("=", 1)[0]
            pattern_given = pattern_given or name in grammar.pattern_options
            consume = "=" not in word and _long_takes_value(word, grammar)
        else:
            for index, char in enumerate(word[1:], start=1):
                if char in grammar.value_shorts:
                    pattern_given = pattern_given or f"-{char}" in grammar.pattern_options
                    consume = index == len(word) - 1
                    break
    if grammar.takes_pattern and not pattern_given:
        found = found[1:]
    return found or None
