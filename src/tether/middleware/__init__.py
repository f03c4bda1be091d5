"""Middleware: onion hooks around the reply, reasoning, model calls, tools and permissions."""

from tether.middleware._base import MiddlewareBase
from tether.middleware._calls import (
    ActingCall,
    CompressCall,
    ModelCall,
    PermissionCall,
    ReasoningCall,
    ReplyCall,
    SystemPromptCall,
)
from tether.middleware._chain import chain_awaitable, chain_iterator, overrides

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
