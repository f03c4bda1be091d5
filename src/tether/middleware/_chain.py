"""The one chain helper per hook shape: first middleware listed is the outermost.

An iterator chain owns every stream it opens: closing the outermost one (a consumer
that stops reading and closes, or `aclosing`) closes the inner ones at once, innermost
first, even when a middleware stopped iterating its `call_next` stream without closing
it. Otherwise their `finally` blocks would run later, from the garbage collector, and
change the state after the caller saved it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from tether._streams import close_stream
from tether.errors import ConfigError
from tether.middleware._base import MiddlewareBase

__all__ = [
    "chain_awaitable",
    "chain_iterator",
    "close_stream",
    "contract_error",
    "has_hook",
    "has_rewriting_hook",
    "overrides",
    "overrides_any",
    "own_hooks",
]

C = TypeVar("C")


_HOOKS = (
    "on_reply",
    "on_reasoning",
    "on_model_call",
    "on_acting",
    "on_check_permission",
    "on_compress_context",
    "on_system_prompt",
)
_OWN_HOOKS: dict[type[MiddlewareBase], frozenset[str]] = {}
"""Per middleware class, the hooks it implements itself (worked out on first use)."""


def own_hooks(kind: type[MiddlewareBase]) -> frozenset[str]:
    """The hooks `kind` implements itself (not `MiddlewareBase`'s pass-through ones)."""
    hooks = _OWN_HOOKS.get(kind)
    if hooks is None:
        hooks = _OWN_HOOKS[kind] = frozenset(
            h for h in _HOOKS if getattr(kind, h) is not getattr(MiddlewareBase, h)
        )
    return hooks


def overrides(middleware: MiddlewareBase, hook: str) -> bool:
    """Whether `middleware` implements `hook` itself and is active (checked per call).

    A middleware that implements none of the hooks costs a dictionary lookup per hook:
    its `is_active` is not even asked.
    """
    hooks = _OWN_HOOKS.get(type(middleware)) or own_hooks(type(middleware))
    return hook in hooks and middleware.is_active


def has_hook(middlewares: Sequence[MiddlewareBase], hook: str) -> bool:
    """Whether any of `middlewares` implements `hook` and is active.

    Without one, the caller skips the hook's call record and chain altogether.
    """
    for mw in middlewares:  # (own_hooks inlined: this is asked ~20 times a reply)
        if hook in (_OWN_HOOKS.get(type(mw)) or own_hooks(type(mw))) and mw.is_active:
            return True
    return False


def has_rewriting_hook(middlewares: Sequence[MiddlewareBase], hook: str) -> bool:
    """Whether any active middleware implementing `hook` may change what passes it."""
    for mw in middlewares:
        if (
            not mw.passes_through
            and hook in (_OWN_HOOKS.get(type(mw)) or own_hooks(type(mw)))
            and mw.is_active
        ):
            return True
    return False


def overrides_any(middlewares: Sequence[MiddlewareBase], hooks: Sequence[str]) -> bool:
    """Whether any of `middlewares` that watches all events implements any of `hooks`."""
    return any(overrides(mw, hook) for mw in middlewares if mw.watches_all_events for hook in hooks)


def chain_iterator(
    middlewares: Sequence[MiddlewareBase],
    hook: str,
    call: C,
    handler: Callable[[C], AsyncIterator[Any]],
) -> AsyncIterator[Any]:
    """Run `handler(call)` inside every middleware's iterator `hook`.

    The caller asked `has_hook` first: a lone middleware is known to have the hook (its
    `is_active` is not asked twice per call).
    """
    if not middlewares:
        return handler(call)
    if len(middlewares) == 1:  # the common case, without the lists
        mw = middlewares[0]
        if mw.passes_through:
            return getattr(mw, hook)(call, handler)  # type: ignore[no-any-return]
        return _layers([getattr(mw, hook)], call, handler)
    active = [mw for mw in middlewares if overrides(mw, hook)]
    if not active:  # none implements it (or none is active): no layer at all
        return handler(call)
    methods = [getattr(mw, hook) for mw in active]
    if all(mw.passes_through for mw in active):  # each closes its own inner stream
        current = handler
        for method in reversed(methods):
            current = _wrap_iter(method, current)
        return current(call)
    return _layers(methods, call, handler)


async def _layers(
    methods: list[Callable[[Any, Callable[[Any], AsyncIterator[Any]]], AsyncIterator[Any]]],
    call: Any,
    handler: Callable[[Any], AsyncIterator[Any]],
) -> AsyncGenerator[Any, None]:
    opened: list[AsyncIterator[Any]] = []  # outermost first

    def tracked(
        start: Callable[[Any], AsyncIterator[Any]],
    ) -> Callable[[Any], AsyncIterator[Any]]:
        def open_stream(c: Any) -> AsyncIterator[Any]:
            stream = start(c)
            opened.append(stream)
            return stream

        return open_stream

    current = tracked(handler)
    for method in reversed(methods):
        current = tracked(_wrap_iter(method, current))
    try:
        async for item in current(call):
            yield item
    finally:
        for stream in reversed(opened):
            await close_stream(stream)


def _wrap_iter(
    method: Callable[[Any, Callable[[Any], AsyncIterator[Any]]], AsyncIterator[Any]],
    inner: Callable[[Any], AsyncIterator[Any]],
) -> Callable[[Any], AsyncIterator[Any]]:
    return lambda c: method(c, inner)


def chain_awaitable(
    middlewares: Sequence[MiddlewareBase],
    hook: str,
    call: C,
    handler: Callable[[C], Awaitable[Any]],
) -> Awaitable[Any]:
    """Run `handler(call)` inside every middleware's awaitable `hook`."""
    current = handler
    if not middlewares:
        return current(call)
    if len(middlewares) == 1:  # the common case, without the closures
        mw = middlewares[0]
        if not overrides(mw, hook):
            return handler(call)
        method: Callable[[C, Callable[[C], Awaitable[Any]]], Awaitable[Any]] = getattr(mw, hook)
        return method(call, handler)
    for mw in reversed(middlewares):
        if overrides(mw, hook):
            current = _wrap_await(getattr(mw, hook), current)
    return current(call)


def _wrap_await(
    method: Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]],
    inner: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    return lambda c: method(c, inner)


_CONTRACTS = {
    "on_reply": "ended the stream without the reply's REPLY_END or pause event; "
    "yield what `call_next(call)` yields, or re-raise its error",
    "on_reasoning": "ended a reasoning step without the model's answer; "
    "run `call_next(call)` to the end, or re-raise its error",
}


def contract_error(middlewares: Sequence[MiddlewareBase], hook: str) -> ConfigError:
    """The error for a `hook` that broke its contract, naming the middlewares that have it."""
    names = ", ".join(type(mw).__name__ for mw in middlewares if overrides(mw, hook)) or "none"
    return ConfigError(f"a middleware's `{hook}` ({names}) {_CONTRACTS[hook]}")
