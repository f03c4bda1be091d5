"""`ModelSampler`: answer a server's sampling requests with a tether model, if approved."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tether.mcp._requests import SamplingRequest, SamplingResponse
from tether.mcp._sampling_msgs import to_messages, tool_calls_of, tool_schemas

if TYPE_CHECKING:
    from tether.model import ChatModelBase

__all__ = ["ModelSampler", "SamplingApproval"]

_CHOICES = ("auto", "required", "none")

SamplingApproval = Callable[[SamplingRequest], Awaitable[bool]]
"""Decides one sampling request (e.g. shows it to the user and asks)."""


class ModelSampler:
    """A `SamplingHandler` that asks `approve`, then answers with `model`.

    Without `approve` every request is refused: a server only reaches the model when
    someone said yes; at most `max_requests` are answered and at most `max_tokens` tokens
    (input and output, as the model reports them) spent on them (give each server its
    own sampler for per-server limits). Tools the server offers in the request (MCP
    2025-11-25) go to the model; its calls of them go back for the server to run.

    Args:
        model: The model that answers (e.g. the agent's).
        approve: Says yes or no to each request (default: no to all).
        max_requests: How many requests this sampler answers in all (None: no limit).
        max_tokens: How many tokens its answers may use in all; a request that comes once
            they are spent is refused (None: no limit).
    """

    def __init__(
        self,
        model: ChatModelBase,
        approve: SamplingApproval | None = None,
        *,
        max_requests: int | None = 20,
        max_tokens: int | None = 50_000,
    ) -> None:
        self.model = model
        self.approve = approve
        self.max_requests = max_requests
        self.max_tokens = max_tokens
        self.answered = 0
        """How many requests were answered."""
        self.tokens = 0
        """How many tokens the answers used."""

    async def __call__(self, request: SamplingRequest) -> SamplingResponse | None:
        """The model's answer, or None (refused: not approved, or over the limit)."""
        if (
            self.approve is None
            or (self.max_requests is not None and self.answered >= self.max_requests)
            or (self.max_tokens is not None and self.tokens >= self.max_tokens)
        ):
            return None
        if not await self.approve(request):
            return None
        from tether.message import TextBlock
        from tether.model import ChatRequest

        messages = to_messages(request)
        tools = tool_schemas(request)
        choice: Any = request.tool_choice if request.tool_choice in _CHOICES else "auto"
        chat = ChatRequest(messages=messages, tools=tools, tool_choice=choice if tools else "auto")
        response = await self.model.generate(chat)
        self.answered += 1
        if response.usage is not None:
            self.tokens += response.usage.input_tokens + response.usage.output_tokens
        text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
        stop = "maxTokens" if response.stop_reason == "length" else "endTurn"
        calls = tool_calls_of(response.content) if tools else []
        return SamplingResponse(
            text=text,
            model=response.model_name or self.model.model_name,
            stop_reason="toolUse" if calls else stop,
            tool_calls=calls,
        )
