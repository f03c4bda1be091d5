from pydantic import BaseModel, ConfigDict

__all__ = ["ChatUsage"]


class ChatUsage(BaseModel):
    """Token usage of one model call, or a running total of several."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    input_tokens: int = 0
    """Prompt tokens, including cached ones."""
    output_tokens: int = 0
    """Completion tokens, including reasoning tokens."""
    cache_read_tokens: int = 0
    """Prompt tokens served from the provider's cache."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache."""
    reasoning_tokens: int = 0
    """Completion tokens spent on thinking."""
    cost: float | None = None
    """USD, from the price table (`tether.model.cost`); `None` when no price is known (a
    total adds up the calls that have one)."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: "ChatUsage") -> "ChatUsage":
        return ChatUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost=_add_costs(self.cost, other.cost),
        )


def _add_costs(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else a + b
