"""The one chain helper per hook shape: first middleware listed is the outermost."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from tether.middleware._base import MiddlewareBase

__all__ = ["chain_awaitable", "chain_iterator", "overrides"]

C = TypeVar("C")


def overrides(middleware: MiddlewareBase, hook: str) -> bool:
    """Whether `middleware` implements `hook` itself (checked per call, never cached)."""
    return getattr(type(middleware), hook) is not getattr(MiddlewareBase, hook)


def chain_iterator(
    middlewares: Sequence[MiddlewareBase],
    hook: str,
    call: C,
    handler: Callable[[C], AsyncIterator[Any]],
) -> AsyncIterator[Any]:
    """Run `handler(call)` inside every middleware's iterator `hook`."""
    current = handler
    for mw in reversed(middlewares):
        if overrides(mw, hook):
            current = _wrap_iter(getattr(mw, hook), current)
    return current(call)


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
    for mw in reversed(middlewares):
        if overrides(mw, hook):
            current = _wrap_await(getattr(mw, hook), current)
    return current(call)


def _wrap_await(
    method: Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]],
    inner: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    return lambda c: method(c, inner)
