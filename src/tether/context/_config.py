"""`ContextConfig`: when to compress, how much to keep, how long a tool result may be."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

from tether.errors import ConfigError

__all__ = ["ContextConfig"]


class ContextConfig(BaseModel):
    """Context budget settings.

    Defaults: compress at 80% of the model's context window, keep the most recent 20%
    verbatim, cut tool results longer than 5,000 tokens.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    trigger_ratio: float = 0.8
    """Compress when the context passes this share of `model.context_length`."""
    reserve_ratio: float = 0.2
    """After compressing, keep this share of the window of recent messages verbatim."""
    tool_result_limit: int = 5_000
    """Tool results longer than this many tokens are truncated in the context."""

    @model_validator(mode="after")
    def _check(self) -> ContextConfig:
        if not 0 < self.reserve_ratio < self.trigger_ratio <= 1:
            raise ConfigError(
                f"ContextConfig needs 0 < reserve_ratio < trigger_ratio <= 1, got "
                f"reserve_ratio={self.reserve_ratio}, trigger_ratio={self.trigger_ratio}"
            )
        if self.tool_result_limit < 1:
            raise ConfigError(
                f"ContextConfig.tool_result_limit must be at least 1, got {self.tool_result_limit}"
            )
        return self
