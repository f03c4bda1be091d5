"""`ReActConfig` and `ModelConfig`: how the loop iterates and how model calls recover."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import ConfigDict, Field

from tether._settings import SettingsModel
from tether.errors import ConfigError
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
    on_missing_structured_output: Literal["raise", "return_text"] = "raise"
    """When a reply asked for a `structured_schema` ends without the structured answer
    (after one reminder step): raise `StructuredOutputError`, or return the text reply."""
    max_total_iters: int | None = Field(default=None, ge=1)
    """Reasoning steps one reply may take across this agent and all its sub-agents, at any
    depth (None: no limit beyond each agent's `max_iters` and the depth limit). Once they
    are used up, a sub-agent that would reason stops with `TotalIterationsError` as its
    result, and this agent takes one more step that must answer. Only the outermost
    agent's setting counts."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelConfig:
    """Retries with exponential backoff, then an optional fallback model.

    A plain frozen dataclass, not a pydantic model: so it has no pydantic `model_config`
    beside the agent's `model_config` (which is one of these), and holds a live model.
    """

    max_retries: int = 3
    """Retries of a transient failure (rate limit, 5xx, timeout) per model."""
    fallback_model: ChatModelBase | None = None
    """The model to use once the main model's retries run out."""
    initial_retry_delay: float = 1.0
    """Seconds before the first retry; doubled on every further one."""
    max_retry_delay: float = 30.0
    """The longest wait between two attempts (a provider's Retry-After may be longer)."""
    _policy: RetryPolicy = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("max_retries", "initial_retry_delay", "max_retry_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"ModelConfig({name}=...) must be a number >= 0, got {value!r}")
        if not isinstance(self.max_retries, int):
            raise ConfigError(
                f"ModelConfig(max_retries=...) must be a whole number, got {self.max_retries!r}"
            )
        if isinstance(self.fallback_model, str):
            raise ConfigError(
                f"ModelConfig(fallback_model=...) takes a model object, not "
                f"{self.fallback_model!r}; build one with "
                f"`tether.model.from_string({self.fallback_model!r})`"
            )
        if self.fallback_model is not None and not isinstance(self.fallback_model, ChatModelBase):
            raise ConfigError(
                "ModelConfig(fallback_model=...) must be a ChatModelBase such as "
                f"`ScriptedChatModel([...])`, got {type(self.fallback_model).__name__}"
            )
        policy = RetryPolicy(
            max_retries=self.max_retries,
            initial_delay=self.initial_retry_delay,
            max_delay=self.max_retry_delay,
            fallback=self.fallback_model,
        )
        object.__setattr__(self, "_policy", policy)  # derived once: both are frozen

    def policy(self) -> RetryPolicy:
        """The retry policy these settings describe (built with the config)."""
        return self._policy
