"""The estimator never counts more tokens than characters (fit_tool_result relies on it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.context import estimate_text_tokens


@settings(max_examples=2_000, deadline=None)
@given(st.text(max_size=300))
def test_estimate_is_at_most_the_length(text: str) -> None:
    assert estimate_text_tokens(text) <= len(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789aA.,{}[]\"':\n \t你好😀é", max_size=200))
def test_estimate_is_at_most_the_length_on_dense_text(text: str) -> None:
    assert estimate_text_tokens(text) <= len(text)
