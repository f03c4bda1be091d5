"""Provider finish reasons in tether's words, and a warning when an answer was cut short."""

from __future__ import annotations

import logging

from tether.model._types import StopDelta, StopReason

__all__ = ["stop_delta"]

logger = logging.getLogger("tether.model")

_REASONS: dict[str, StopReason] = {
    # OpenAI-compatible, DashScope, Ollama
    "stop": "stop",
    "tool_calls": "stop",
    "function_call": "stop",
    "length": "length",
    "content_filter": "content_filter",
    # Anthropic
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    # Gemini
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
}


def stop_delta(raw: str, *, provider: str, model: str, limit_hint: str) -> StopDelta:
    """The `StopDelta` for a provider's finish reason; warns when the answer is incomplete."""
    reason = _REASONS.get(raw, "other")
    if reason == "length":
        logger.warning(
            "%s model %r stopped at its output token limit (%s): the answer is cut short; "
            "raise the limit (%s)",
            provider,
            model,
            raw,
            limit_hint,
        )
    elif reason != "stop":
        logger.warning(
            "%s model %r stopped early (%s): the answer may be missing or incomplete",
            provider,
            model,
            raw,
        )
    return StopDelta(reason, raw)
