"""Prompt caching: the option, and a request cut into a byte-stable prefix and a volatile tail.

Providers cache a request's prefix: tools, then the system prompt, then the messages. A
request is cache-friendly when everything that may change between steps comes last, so
`cache_parts` takes the volatile text out of the system prompt (it goes after the last
message) and puts the tools in their stable order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from tether.errors import ConfigError
from tether.message import ToolResultBlock
from tether.model._types import ChatRequest
from tether.tool import DEFERRABLE_KEY, TOOL_REFERENCES_KEY

__all__ = [
    "DEFER_MODELS",
    "CacheParts",
    "PromptCache",
    "as_prompt_cache",
    "cache_parts",
    "deferred_tools",
    "ordered_tools",
    "prefix_key",
    "referenced_tools",
    "split_system",
]

CacheTTL = Literal["5m", "1h"]

DEFER_MODELS = ("claude-sonnet-4-5", "claude-opus-4-5", "claude-sonnet-4-6", "claude-opus-4-6")
"""Claude models (by name prefix) that take deferred tool loading, per Anthropic's tool
search page (checked 2026-02); others get the tools in append-only order."""


@dataclass(frozen=True, slots=True)
class PromptCache:
    """How a provider asks for prompt caching (`prompt_cache=` of every provider model).

    `PromptCache(enabled=False)` (or `prompt_cache=False`) sends requests as they are, with
    no cache markers and the volatile text inside the system prompt.
    """

    enabled: bool = True
    """Ask for caching and keep the prefix byte-stable."""
    ttl: CacheTTL = "5m"
    """Anthropic's cache lifetime: `5m` (writes cost 1.25x input) or `1h` (2x)."""
    key: str | None = None
    """OpenAI's `prompt_cache_key`; `None`: a digest of the stable tools and system prompt,
    the same for every step of a session."""
    defer_tools: bool | None = None
    """Anthropic: send sleepable plugins' tools with `defer_loading` (tool search beta);
    `None`: for the models known to support it (`DEFER_MODELS`)."""
    proxy_tools: bool = True
    """OpenAI and DashScope: call woken plugins' tools through one fixed tool whose
    definitions the wake's answer carries, so the tools array never changes (see
    `_tool_proxy`); `False`: send them as functions, in append-only order."""

    def __post_init__(self) -> None:
        if self.ttl not in ("5m", "1h"):
            raise ConfigError(f"PromptCache(ttl=...) must be '5m' or '1h', got {self.ttl!r}")


def as_prompt_cache(value: PromptCache | bool | None) -> PromptCache:
    """The option as given to a provider: `True`/`None` → on, `False` → off.

    Raises:
        ConfigError: `value` is neither a `PromptCache` nor a bool.
    """
    if value is None or value is True:
        return PromptCache()
    if value is False:
        return PromptCache(enabled=False)
    if isinstance(value, PromptCache):
        return value
    raise ConfigError(f"prompt_cache must be True, False or a `PromptCache(...)`, got {value!r}")


@dataclass(frozen=True, slots=True)
class CacheParts:
    """A request's tools, the volatile text to move (empty: none) and what to send for it."""

    tools: list[dict[str, Any]]
    volatile: str
    tail: str | None = None


def _without(system: str, volatile: str) -> str | None:
    """`system` with `volatile` (and the blank line that joined it) cut out, if found once."""
    at = system.rfind(volatile)
    if at < 0:
        return None
    head, tail = system[:at].rstrip("\n"), system[at + len(volatile) :].lstrip("\n")
    return f"{head}\n\n{tail}" if head and tail else head or tail


def cache_parts(request: ChatRequest, cache: PromptCache) -> CacheParts:
    """The tools to send and the volatile text to move out of the system prompt.

    Caching off: the request's own tools, nothing moved. On: the tools in append-only
    order (`ordered_tools`) and the volatile text, which `split_system` takes out of the
    system prompt when it is there verbatim (a middleware that rewrote it leaves it where
    it is).
    """
    if not cache.enabled:
        return CacheParts(request.tools, "")
    return CacheParts(ordered_tools(request), request.volatile_prompt, request.volatile_tail)


def ordered_tools(request: ChatRequest) -> list[dict[str, Any]]:
    """The callable tools in append-only order, for providers without deferred loading.

    The fixed stable tools first, then the deferrable ones callable now (in their fixed
    order), then any tool the stable list lacks: waking a plugin changes the list only
    after the fixed tools.
    """
    if request.stable_tools is None or not request.tools:
        return request.tools
    callable_ = {t["name"]: t for t in request.tools}
    fixed = [t for t in request.stable_tools if not t.get(DEFERRABLE_KEY)]
    woken = [t for t in request.stable_tools if t.get(DEFERRABLE_KEY) and t["name"] in callable_]
    listed = {t["name"] for t in request.stable_tools}
    return [*fixed, *woken, *(t for t in request.tools if t["name"] not in listed)]


def referenced_tools(request: ChatRequest) -> set[str]:
    """Tools a tool result in the conversation references (`TOOL_REFERENCES_KEY`)."""
    found: set[str] = set()
    for msg in request.messages:
        for block in msg.content:
            if isinstance(block, ToolResultBlock) and block.metadata:
                found.update(block.metadata.get(TOOL_REFERENCES_KEY) or ())
    return found


def deferred_tools(request: ChatRequest) -> tuple[list[dict[str, Any]], set[str]]:
    """Every stable tool (then any callable one it lacks), and the names to send deferred.

    Deferred: the deferrable tools, loaded where a result refers to them, except a
    callable one no result refers to (a compression removed its plugin's wake).
    """
    if request.stable_tools is None or not request.tools:
        return request.tools, set()
    callable_ = {t["name"] for t in request.tools}
    referenced = referenced_tools(request)
    deferred = {
        t["name"]
        for t in request.stable_tools
        if t.get(DEFERRABLE_KEY) and (t["name"] not in callable_ or t["name"] in referenced)
    }
    listed = {t["name"] for t in request.stable_tools}
    tools = [*request.stable_tools, *(t for t in request.tools if t["name"] not in listed)]
    return tools, deferred


def split_system(
    system: str | None, volatile: str, tail: str | None = None
) -> tuple[str | None, str]:
    """The system prompt without `volatile`, and the text to send last (`""` if not found).

    The text to send last is `tail` when given (the short form of `volatile`).
    """
    if not system or not volatile:
        return system, ""
    stable = _without(system, volatile)
    if stable is None:
        return system, ""
    return stable or None, volatile if tail is None else tail


def prefix_key(model: str, tools: list[dict[str, Any]], system: str | None) -> str:
    """A short digest of what every step of a session shares: model, tools, system prompt."""
    data = json.dumps([model, tools, system or ""], sort_keys=True, separators=(",", ":"))
    return "tether-" + hashlib.sha256(data.encode("utf-8")).hexdigest()[:24]
