"""The estimate's shortcuts (skipped counts, the short-text memo) change no estimate."""

from __future__ import annotations

import random

from tether.message import _estimate
from tether.message._estimate import (
    _CLASSES,
    _ID_WORD,
    _LETTER_RUNS,
    _LONG_WORD,
    _PUNCT_RUNS,
    _WORD_START,
    _ascii_tokens,
    estimate_text_tokens,
)


def _reference(text: str) -> int:
    """Every count made, as the estimate was first written."""
    classes = text.encode("ascii").translate(_CLASSES)
    letters = classes.translate(_LETTER_RUNS)
    tokens = letters.count(_WORD_START) + letters.startswith(b"a")
    tokens += letters.count(_LONG_WORD) + letters.count(_ID_WORD)
    tokens += classes.count(b"aA") + classes.count(b"0")
    punct = classes.translate(_PUNCT_RUNS)
    runs = punct.count(b" .") + punct.startswith(b".")
    tokens += (classes.count(b".") + runs + 1) // 2
    tokens += classes.count(b"\n") - classes.count(b"\n\n")
    return tokens


def test_ascii_counts_equal_the_reference() -> None:
    rnd = random.Random(7)
    alphabets = ["aZ09 .,{}\"':\n\t_-xyzABCabcdefghijklmnop  ", "aaaaaaaaaaaaaaAb\n. ", "\n\n. 0"]
    samples = ["", "\n", "\n\n\n", "a" * 30, "." * 5, "x.y", "aA" * 10, "0", " ", "\t\n  \n"]
    for _ in range(20_000):
        alphabet = rnd.choice(alphabets)
        samples.append("".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 80))))
    for text in samples:
        assert _ascii_tokens(text) == _reference(text), repr(text)


def test_the_short_text_memo_is_bounded_and_changes_nothing() -> None:
    memo = _estimate._SHORT_TOKENS
    for i in range(_estimate._SHORT_KEPT + 10):
        text = f"w{i}"
        assert estimate_text_tokens(text) == max(_reference(text), 1)
        assert len(memo) <= _estimate._SHORT_KEPT
    assert estimate_text_tokens("w1") == estimate_text_tokens("w1")
