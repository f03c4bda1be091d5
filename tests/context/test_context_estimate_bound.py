"""The estimator never counts more tokens than UTF-8 bytes, nor than three per character.

Every byte-level BPE token holds at least one byte; `fit_tool_result` skips counting a
short output on the three-per-character bound (one per character for ASCII).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.context import estimate_text_tokens


@settings(max_examples=2_000, deadline=None)
@given(st.text(max_size=300))
def test_estimate_is_at_most_the_length(text: str) -> None:
    tokens = estimate_text_tokens(text)
    assert tokens <= len(text.encode("utf-8", "surrogatepass"))
    assert tokens <= (len(text) if text.isascii() else 3 * len(text))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789aA.,{}[]\"':\n \t你好😀é𠀀ा—α\u0301", max_size=200))
def test_estimate_is_at_most_the_length_on_dense_text(text: str) -> None:
    tokens = estimate_text_tokens(text)
    assert tokens <= len(text.encode("utf-8", "surrogatepass"))
    assert tokens <= (len(text) if text.isascii() else 3 * len(text))
