"""Token estimates without a tokenizer: cheap, and honest about CJK, digits and JSON.

The estimate mimics how byte-level BPE tokenizers pre-split text: a word of up to 8
letters is one token, longer runs of letters (identifiers, hashes) cost more, a
camelCase boundary starts a new token, every digit is a token (Qwen and Llama split
numbers digit by digit; GPT tokenizers group three, so digits are over-counted for
them), a run of punctuation costs about one token per two marks (JSON's `": "` and `",`
are single tokens), a line break with its indentation costs one, a CJK character costs
one, and other non-ASCII characters by their UTF-8 length (see `_non_ascii_sixths`:
Cyrillic 2/3, Greek 1, Devanagari 3/2, an emoji 2). It errs on the high side: an undercount delays compression until the provider rejects the
request, an overcount only compresses a little early. `benchmarks/context.py` prints
its error against real tokenizers.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

from tether.message._blocks import (
    ContentBlock,
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from tether.message._msg import Msg

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "count_text_tokens",
    "estimate_block_tokens",
    "estimate_msg_tokens",
    "estimate_text_tokens",
]

_IMAGE_TOKENS = 1_000
_MSG_OVERHEAD = 4
BLOCK_OVERHEAD_TOKENS = 4
"""What the estimate adds for a block beyond its text (its framing)."""
_BLOCK_OVERHEAD = BLOCK_OVERHEAD_TOKENS

_CJK_RANGES = "\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# Two-byte letters BPE vocabularies barely merge: combining marks, Greek, Armenian.
_DENSE_TWO_BYTE = re.compile("[\u0300-\u036f\u0370-\u03ff\u0530-\u058f]")
# Three-byte characters vocabularies merge well: typographic punctuation, Thai.
_LIGHT_THREE_BYTE = re.compile("[\u2000-\u206f\u0e00-\u0e7f]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # emoji, math letters, rare ideographs
_RARE_CJK = re.compile("[\U00020000-\U0003ffff]")  # CJK extensions B-H: ~3 tokens each
_SAMPLE_ABOVE = 65_536  # longer texts are estimated from evenly spaced slices
_SLICES = 16
_SLICE = 4_096
_SHORT = 12  # texts up to this long (names, ids, numbers) are memoised


def _table(classes: dict[str, bytes], default: bytes) -> bytes:
    table = bytearray(default * 256)
    for chars, cls in classes.items():
        for ch in chars.encode("ascii"):
            table[ch] = cls[0]
    return bytes(table)


# Each ASCII character becomes its class: a lower, A upper, 0 digit, . punctuation. The
# text is counted as bytes: `bytes.translate` with a table is a third of the cost of
# `str.translate` with a mapping for the short texts most blocks hold.
_CLASSES = _table(
    {
        string.ascii_lowercase: b"a",
        string.ascii_uppercase: b"A",
        string.digits: b"0",
        string.punctuation: b".",
        "\n": b"\n",
    },
    b" ",
)
_LETTER_RUNS = _table({"aA": b"a"}, b" ")
_PUNCT_RUNS = _table({".": b"."}, b" ")
_WORD_START, _LONG_WORD, _ID_WORD = b" a", b"a" * 9, b"a" * 12


def _ascii_tokens(text: str) -> int:
    """Tokens of ASCII text, counted with `bytes.translate`/`bytes.count` (all in C).

    A leading space makes a run at the start count like any other; a count that cannot
    be above zero (no mark it needs was found) is not made.
    """
    classes = (" " + text).encode("ascii").translate(_CLASSES)
    letters = classes.translate(_LETTER_RUNS)
    # one token per word of up to 8 letters, a second from 9, a third from 12 (ids)
    tokens = letters.count(_WORD_START)
    long_words = letters.count(_LONG_WORD)
    if long_words:
        tokens += long_words + letters.count(_ID_WORD)
    tokens += classes.count(b"aA") + classes.count(b"0")  # camelCase parts; digits one by one
    marks = classes.count(b".")
    if marks:  # about one token per two marks in a run
        tokens += (marks + classes.translate(_PUNCT_RUNS).count(b" .") + 1) // 2
    breaks = classes.count(b"\n")
    if breaks:  # a line break and its indent
        tokens += breaks - classes.count(b"\n\n")
    return tokens


def _non_ascii_sixths(text: str) -> int:
    """Sixths of a token spent on the non-ASCII characters of `text`, by UTF-8 length.

    CJK one token each; other two-byte characters (Cyrillic, Arabic, accents) 2/3, the
    dense ones 1; typographic punctuation and Thai 1, other three-byte characters (Indic
    and South-East Asian scripts, symbols) 3/2; four-byte ones (emoji) 2, rare
    ideographs 3.
    Each stays under its byte count, as every byte-level BPE token holds a byte or more.
    """
    chars = len(text) - len(text.encode("ascii", "ignore"))
    extra = len(text.encode("utf-8", "surrogatepass")) - len(text)  # n2 + 2*n3 + 3*n4
    four = len(_ASTRAL.findall(text))
    rare = len(_RARE_CJK.findall(text)) if four else 0
    three = extra - chars - 2 * four
    two = chars - three - four
    cjk = len(_CJK.findall(text))
    dense = len(_DENSE_TWO_BYTE.findall(text)) if two else 0
    light = len(_LIGHT_THREE_BYTE.findall(text)) if three > cjk else 0
    sixths = 6 * cjk + 4 * (two - dense) + 6 * dense + 9 * (three - cjk - light) + 6 * light
    return sixths + 12 * four + 6 * rare


def _direct_tokens(text: str) -> int:
    if text.isascii():
        return _ascii_tokens(text)
    return (_non_ascii_sixths(text) + 5) // 6 + _ascii_tokens(_NON_ASCII.sub(" ", text))


def estimate_text_tokens(text: str) -> int:
    """Estimate the tokens of `text` (see the module docstring for the rules).

    Counting runs in C over character classes; texts over 64 KiB are estimated from
    16 evenly spaced 4 KiB slices, so one call costs at most ~64 KiB of work.
    """
    if not text:
        return 0
    length = len(text)
    if length <= _SHORT:
        tokens = _SHORT_TOKENS.get(text)
        return _short_tokens(text) if tokens is None else tokens
    if length <= _SAMPLE_ABOVE:
        return max(_direct_tokens(text), 1)
    step = length // _SLICES
    sampled = sum(_direct_tokens(text[i * step : i * step + _SLICE]) for i in range(_SLICES))
    return max(sampled * length // (_SLICES * _SLICE), 1)


_SHORT_TOKENS: dict[str, int] = {}
"""Estimates of short texts: they recur (tool names, small arguments, ids), and a lookup
beats counting. Emptied when it holds `_SHORT_KEPT` of them."""
_SHORT_KEPT = 4096


def _short_tokens(text: str) -> int:
    tokens = max(_direct_tokens(text), 1)
    if len(_SHORT_TOKENS) >= _SHORT_KEPT:
        _SHORT_TOKENS.clear()
    _SHORT_TOKENS[text] = tokens
    return tokens


@lru_cache(maxsize=16)
def _cached_estimate(text: str) -> int:
    return estimate_text_tokens(text)


def count_text_tokens(text: str, counter: object | None = None) -> int:
    """Tokens of a text that recurs every step (the system prompt): exact if possible.

    `counter` is anything with a `count_tokens(text) -> int | None` method (a
    `ChatModelBase`); when it returns `None` the (memoised) estimate is used.
    """
    count_tokens = getattr(counter, "count_tokens", None)
    if count_tokens is not None:
        exact = count_tokens(text)
        if isinstance(exact, int):
            return exact
    return _cached_estimate(text)


def _output_tokens(output: str | list[TextBlock | DataBlock]) -> int:
    if isinstance(output, str):
        return estimate_text_tokens(output)
    return sum(estimate_block_tokens(b) for b in output)


def estimate_block_tokens(block: ContentBlock) -> int:
    """Estimate the tokens of one block (text plus a little framing)."""
    kind = type(block)  # the common blocks first, by their exact class
    if kind is ToolCallBlock:
        values = block.__dict__
        return (
            estimate_text_tokens(values["name"])
            + estimate_text_tokens(values["input"])
            + _BLOCK_OVERHEAD
        )
    if kind is ToolResultBlock:
        output = block.output  # type: ignore[union-attr]  # the class was checked
        if type(output) is str:
            return estimate_text_tokens(output) + _BLOCK_OVERHEAD
        return _output_tokens(output) + _BLOCK_OVERHEAD
    if kind is TextBlock:
        return estimate_text_tokens(block.text)  # type: ignore[union-attr]  # checked
    if isinstance(block, TextBlock):
        return estimate_text_tokens(block.text)
    if isinstance(block, ThinkingBlock):
        return estimate_text_tokens(block.thinking)
    if isinstance(block, HintBlock):
        return estimate_text_tokens(block.hint)
    if isinstance(block, ToolCallBlock):
        return (
            estimate_text_tokens(block.name) + estimate_text_tokens(block.input) + _BLOCK_OVERHEAD
        )
    if isinstance(block, ToolResultBlock):
        return _output_tokens(block.output) + _BLOCK_OVERHEAD
    if isinstance(block, DataBlock):
        return _IMAGE_TOKENS
    return 0


def estimate_msg_tokens(msg: Msg) -> int:
    """Estimate the tokens of a whole message."""
    tokens = _MSG_OVERHEAD
    for block in msg.content:
        tokens += estimate_block_tokens(block)
    return tokens
