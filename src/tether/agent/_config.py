"""`ReActConfig` and `ModelConfig`: how the loop iterates and how model calls recover."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from tether._settings import SettingsModel
from tether.model import ChatModelBase, RetryPolicy

__all__ = ["ModelConfig", "ReActConfig"]


class ReActConfig(SettingsModel):
    """How the reason-act loop iterates."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    max_iters: int = Field(default=20, ge=1)
    """Reasoning steps that may end in tool calls; then one more step must answer."""
    on_rejection: Literal["continue", "end_reply"] = "continue"
    """When the user rejects a call: let the model continue (it sees a denied result), or
    end the reply right there."""


class ModelConfig(SettingsModel):
    """Retries with exponential backoff, then an optional fallback model."""

    model_config = ConfigDict(
        defer_build=True, extra="forbid", frozen=True, arbitrary_types_allowed=True
    )

    max_retries: int = Field(default=3, ge=0)
    """Retries of a transient failure (rate limit, 5xx, timeout) per model."""
    fallback_model: ChatModelBase | None = None
    """The model to use once the main model's retries run out."""
    initial_retry_delay: float = Field(default=1.0, ge=0)
    """Seconds before the first retry; doubled on every further one."""
    max_retry_delay: float = Field(default=30.0, ge=0)
    """The longest wait between two attempts (a provider's Retry-After may be longer)."""

    def policy(self) -> RetryPolicy:
        """The retry policy these settings describe."""
        return RetryPolicy(
            max_retries=self.max_retries,
            initial_delay=self.initial_retry_delay,
            max_delay=self.max_retry_delay,
            fallback=self.fallback_model,
        )
