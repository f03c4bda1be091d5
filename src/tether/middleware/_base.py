"""`MiddlewareBase`: onion hooks around the reply, each step, each call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # the hooks' records load on first use (see `tether.middleware`)
    from tether.middleware._calls import (
        ActingCall,
        CompressCall,
        ModelCall,
        PermissionCall,
        ReasoningCall,
        ReplyCall,
        SystemPromptCall,
    )

__all__ = ["MiddlewareBase"]


class MiddlewareBase:
    """Override the hooks you need; the rest pass through.

    Iterator hooks (`on_reply`, `on_reasoning`, `on_acting`, `on_model_call`) get the
    call and `call_next`, and yield what `call_next(call)` yields — observed, changed,
    or replaced. Awaitable hooks (`on_check_permission`, `on_compress_context`) return
    what `call_next(call)` returns, or their own result. `on_system_prompt` transforms
    the prompt text. The first middleware listed is the outermost.

    Contracts the loop checks: a reply stream ends with REPLY_END or the pause events
    (else `reply()` raises `ConfigError`); a reasoning step runs `call_next` to the end
    or raises (a step that ends without the model's answer raises `ConfigError`, it
    never loops). `on_acting` may rewrite `tool_call.input` or `tool`; the result is
    still recorded under the call's own id and name, and the context keeps the model's
    input. When a reply stops early, the chain closes every `call_next` stream at once.
    """

    watches_all_events: ClassVar[bool] = True
    """False: the iterator hooks need only the events `reply()` always builds (REPLY_END,
    tool results, pauses, retries, compression, plugin events), so `reply()` skips the
    others; `reply_stream()` builds every event regardless."""

    passes_through: ClassVar[bool] = False
    """True: the iterator hooks pass `call` on unchanged, yield exactly what
    `call_next(call)` yields (nothing added, dropped or changed) and close that stream
    when they end early. The chain then nests them directly (no closing layer), and a
    tool call's result event is known to be the tool's own (the loop does not record
    it separately). An observer such as `TracingMiddleware` is one."""

    @property
    def is_active(self) -> bool:
        """False skips every hook of this middleware for now (asked at each call).

        E.g. tracing while no tracer provider is set up.
        """
        return True

    async def on_reply(
        self, call: ReplyCall, call_next: Callable[[ReplyCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Wrap a whole `reply_stream` call; yields `AgentEvent`s."""
        async for event in call_next(call):
            yield event

    async def on_reasoning(
        self,
        call: ReasoningCall,
        call_next: Callable[[ReasoningCall], AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """Wrap one reasoning step; yields `AgentEvent`s."""
        async for event in call_next(call):
            yield event

    async def on_model_call(
        self, call: ModelCall, call_next: Callable[[ModelCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Wrap one model call; yields `ModelDelta`s (and retry notices)."""
        async for delta in call_next(call):
            yield delta

    async def on_acting(
        self, call: ActingCall, call_next: Callable[[ActingCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Wrap one tool call; yields its `AgentEvent`s (ending with TOOL_RESULT_END)."""
        async for event in call_next(call):
            yield event

    async def on_check_permission(
        self,
        call: PermissionCall,
        call_next: Callable[[PermissionCall], Awaitable[Any]],
    ) -> Any:
        """Wrap one permission check; returns a `PermissionDecision`."""
        return await call_next(call)

    async def on_compress_context(
        self, call: CompressCall, call_next: Callable[[CompressCall], Awaitable[Any]]
    ) -> Any:
        """Wrap one context compression; returns its result."""
        return await call_next(call)

    async def on_system_prompt(self, prompt: str, call: SystemPromptCall) -> str:
        """Transform the system prompt of one reasoning step."""
        return prompt
