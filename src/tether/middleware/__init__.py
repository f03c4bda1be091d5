"""Middleware: onion hooks around the reply, reasoning, model calls, tools and permissions.

The hooks' records (`ReplyCall`, `ModelCall`, ...) load on first use (module
`__getattr__`, PEP 562): the loop builds one only for a hook that is there, so an agent
without middlewares never creates their seven frozen dataclasses (~25 M instructions of
`from tether import Agent`).
"""

from typing import TYPE_CHECKING, Any

from tether import _lazy
from tether.middleware._base import MiddlewareBase
from tether.middleware._chain import chain_awaitable, chain_iterator, overrides

if TYPE_CHECKING:  # loaded lazily below; imported here for type checkers and the API docs
    from tether.middleware._calls import (
        ActingCall,
        CompressCall,
        ModelCall,
        PermissionCall,
        ReasoningCall,
        ReplyCall,
        SystemPromptCall,
    )

__all__ = [
    "ActingCall",
    "CompressCall",
    "MiddlewareBase",
    "ModelCall",
    "PermissionCall",
    "ReasoningCall",
    "ReplyCall",
    "SystemPromptCall",
    "chain_awaitable",
    "chain_iterator",
    "overrides",
]


_CALLS = frozenset(name for name in __all__ if name.endswith("Call"))
"""The records of `_calls`, loaded on first use."""


def __getattr__(name: str) -> Any:
    if name in _CALLS:
        value = _lazy.load(__name__, name, "tether.middleware._calls")
        globals()[name] = value  # the next lookup is a plain module attribute
        return value
    if name == "TracingMiddleware":  # moved above the loop; no import from here (a cycle)
        raise ImportError(
            "TracingMiddleware moved to its own package: `from tether.tracing import "
            "TracingMiddleware`"
        )
    raise AttributeError(f"module 'tether.middleware' has no attribute {name!r}")
