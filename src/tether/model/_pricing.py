"""What a model call cost: a price table per model (USD per million tokens) and `cost()`.

The shipped prices are the list prices of each provider's default model, dated; they
change, and negotiated or regional prices differ, so every entry can be overridden with
`set_price` (or removed with `set_price(name, None)`). A model without a price costs
`None`, never a made-up 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from tether.message import ChatUsage

__all__ = ["DEFAULT_PRICES", "ModelPrice", "cost", "price_for", "reset_prices", "set_price"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """A model's list price in USD per million tokens."""

    input: float
    """Uncached input tokens."""
    output: float
    """Output tokens (reasoning tokens included)."""
    cached_input: float | None = None
    """Input tokens read from the provider's cache; `None`: billed as `input`."""
    cache_write: float | None = None
    """Input tokens written to the provider's cache (its default lifetime, Anthropic's 5
    minutes); `None`: billed as `input`."""
    as_of: str = ""
    """When the price was last checked (`YYYY-MM-DD`)."""
    note: str = ""
    """Where it comes from, and what it leaves out."""
    cache_write_1h: float | None = None
    """Input tokens written to a 1-hour cache (Anthropic `ttl="1h"`); `None`: `cache_write`."""


DEFAULT_PRICES = MappingProxyType(
    {
        "gpt-4o": ModelPrice(
            2.50, 10.00, cached_input=1.25, as_of="2025-06-01", note="OpenAI list price"
        ),
        "claude-sonnet-4-6": ModelPrice(
            3.00,
            15.00,
            cached_input=0.30,
            cache_write=3.75,
            as_of="2026-02-17",
            note="Anthropic list price; cache reads 0.1x input, writes 1.25x (5 minutes) "
            "or 2x (1 hour)",
            cache_write_1h=6.00,
        ),
        "gemini-2.5-flash": ModelPrice(
            0.30,
            2.50,
            cached_input=0.03,
            as_of="2026-02-17",
            note="Gemini API paid tier, text/image/video input; cached input at the context-"
            "caching rate (0.1x; explicit caches' storage per hour not included)",
        ),
        "qwen-max": ModelPrice(
            1.60,
            6.40,
            cached_input=0.32,
            cache_write=2.00,
            as_of="2026-02-17",
            note="Alibaba Cloud Model Studio, international deployment; implicit cache hits "
            "0.2x input, explicit cache writes 1.25x (hits on an explicit cache are 0.1x)",
        ),
        "llama3.1": ModelPrice(
            0.0, 0.0, as_of="2025-06-01", note="Ollama runs locally: no per-token price"
        ),
    }
)
"""The shipped prices: the default model of each of the five providers, dated."""

_overrides: dict[str, ModelPrice | None] = {}
_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")
"""A dated snapshot or alias of a priced model costs what the model costs."""


def set_price(model: str, price: ModelPrice | None) -> None:
    """Override the price of `model` for this process; `None` marks it as unpriced."""
    _overrides[model] = price


def reset_prices() -> None:
    """Forget every `set_price` override: back to the shipped prices."""
    _overrides.clear()


@lru_cache(maxsize=256)
def _undated(name: str) -> str:
    """`name` without a date or `-latest` suffix (looked up for every model call: cached)."""
    return _SUFFIX.sub("", name)


def price_for(model: str) -> ModelPrice | None:
    """The price of `model`: an override, a shipped price, or that of its undated name."""
    name = model.removeprefix("models/")  # Gemini's resource names
    for candidate in (name, _undated(name)):
        if candidate in _overrides:
            return _overrides[candidate]
        if candidate in DEFAULT_PRICES:
            return DEFAULT_PRICES[candidate]
    return None


def cost(
    usage: ChatUsage | None, model: str, *, cache_ttl: Literal["5m", "1h"] = "5m"
) -> float | None:
    """USD spent on `usage` by `model`, or `None` if there is no usage or no price.

    `usage.input_tokens` includes the cached tokens: cache reads and writes are billed at
    their own rates (or as input when the price has none), the rest as input. `cache_ttl`
    says which write rate applies (`1h`: `cache_write_1h`).
    """
    if usage is None:
        return None
    price = price_for(model)
    if price is None:
        return None
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    plain = max(usage.input_tokens - read - write, 0)
    read_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write is None else price.cache_write
    if cache_ttl == "1h" and price.cache_write_1h is not None:
        write_rate = price.cache_write_1h
    total = (
        plain * price.input
        + read * read_rate
        + write * write_rate
        + usage.output_tokens * price.output
    )
    return total / 1_000_000
