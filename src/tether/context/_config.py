"""`ContextConfig`: when to compress, how much to keep, how long a tool result may be."""

from __future__ import annotations

from pydantic import ConfigDict, model_validator

from tether._settings import SettingsModel
from tether.errors import ConfigError

__all__ = ["ContextConfig"]


class ContextConfig(SettingsModel):
    """Context budget settings, as shares of the model's `context_length`.

    Defaults: compress when the context passes 80% of the window, keep the most recent
    20% verbatim, let the summary of the rest take at most 10%, and cut tool results
    longer than 5,000 tokens. `0 < reserve_ratio < trigger_ratio <= 1` is required.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    trigger_ratio: float = 0.8
    """Compress when the context passes this share of `model.context_length`."""
    reserve_ratio: float = 0.2
    """After compressing, keep this share of the window of recent messages verbatim."""
    tool_result_limit: int = 5_000
    """Tool results longer than this many tokens are truncated in the context."""
    summary_ratio: float = 0.1
    """The summary may take at most this share of the window (and never more than half
    of the room between `reserve_ratio` and `trigger_ratio`)."""

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
        if not 0 < self.summary_ratio < 1:
            raise ConfigError(
                f"ContextConfig.summary_ratio must be between 0 and 1, got {self.summary_ratio}"
            )
        return self

    def threshold(self, context_length: int) -> int:
        """Tokens above which the context is compressed."""
        return int(self.trigger_ratio * context_length)

    def reserve(self, context_length: int) -> int:
        """Tokens of recent messages kept verbatim by a compression."""
        return int(self.reserve_ratio * context_length)

    def summary_budget(self, context_length: int) -> int:
        """The most tokens a summary may take."""
        room = (self.trigger_ratio - self.reserve_ratio) / 2
        return max(round(min(self.summary_ratio, room) * context_length), 64)
