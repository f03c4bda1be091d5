"""What an MCP server may ask of the client mid-call, and the answers tether gives.

Servers ask the user things (elicitation) and the model things (sampling). Both reach a
handler the application supplies; without one, tether declines, so a headless run never
hands a server anything it was not told to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tether.mcp._asking import Caller

__all__ = [
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationResponse",
    "LogHandler",
    "MCPLogRecord",
    "SamplingHandler",
    "SamplingRequest",
    "SamplingResponse",
    "decline_elicitation",
]


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A server asks the user for input while one of its tools runs."""

    server: str
    """The name of the `MCPClient` whose server asks."""
    message: str
    """What the server says it needs, shown to the user."""
    mode: Literal["form", "url"] = "form"
    """`form`: answer with `content` matching `requested_schema`; `url`: the user visits
    `url` (out of band) and answers accept/decline/cancel."""
    requested_schema: dict[str, Any] | None = None
    """The JSON schema of the answer (form mode): a flat object of primitive fields."""
    url: str | None = None
    """The page to visit (URL mode)."""
    elicitation_id: str | None = None
    """The server's id of a URL-mode elicitation."""
    caller: Caller | None = field(default=None, repr=False, compare=False)
    """The running call it came during and what the rules say (set by tether)."""


@dataclass(frozen=True, slots=True)
class ElicitationResponse:
    """The user's answer: accept with content, decline, or cancel (dismissed)."""

    action: Literal["accept", "decline", "cancel"]
    """What the user did."""
    content: dict[str, Any] | None = None
    """The answer (form mode, `accept` only); fields left out take the schema's defaults."""


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationResponse]]
"""Answers a server's elicitation; given to `MCPClient(on_elicitation=...)`."""


async def decline_elicitation(request: ElicitationRequest) -> ElicitationResponse:
    """The default answer: decline (a headless run hands the server nothing)."""
    return ElicitationResponse(action="decline")


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """A server asks the client's model for a completion (`sampling/createMessage`)."""

    server: str
    """The name of the `MCPClient` whose server asks."""
    messages: list[dict[str, Any]]
    """The conversation, as the protocol's `{"role", "content"}` objects."""
    system_prompt: str | None
    """The system prompt the server suggests."""
    max_tokens: int
    """The most tokens the server wants back."""
    temperature: float | None = None
    """The sampling temperature the server suggests."""
    stop_sequences: list[str] | None = None
    """Where the server wants the text to stop."""
    model_hints: list[str] = field(default_factory=list)
    """Model names the server prefers (hints, in order)."""
    caller: Caller | None = field(default=None, repr=False, compare=False)
    """The running call it came during and what the rules say (set by tether)."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """Tools the server lets the model call (`{"name", "description", "inputSchema"}`)."""
    tool_choice: str | None = None
    """How the model may use them: `auto`, `required` or `none` (None: the model decides)."""

    @property
    def text(self) -> str:
        """The text of the messages, one per line (for showing the request to a user)."""
        lines = []
        for message in self.messages:
            content = message.get("content")
            parts = content if isinstance(content, list) else [content]
            for part in parts:
                if isinstance(part, dict) and part.get("type") == "text":
                    lines.append(f"{message.get('role')}: {part.get('text', '')}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class SamplingResponse:
    """The model's answer to a sampling request."""

    text: str
    """The assistant's text."""
    model: str
    """The name of the model that answered."""
    stop_reason: str | None = "endTurn"
    """Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`)."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """The server's tools the model calls (`{"id", "name", "input"}`); the server runs them."""


SamplingHandler = Callable[[SamplingRequest], Awaitable[SamplingResponse | None]]
"""Answers a server's sampling request, or returns None to refuse it; given to
`MCPClient(on_sampling=...)` (no handler: every request is refused)."""


@dataclass(frozen=True, slots=True)
class MCPLogRecord:
    """A log message a server sent (`notifications/message`)."""

    server: str
    """The name of the `MCPClient` whose server logged it."""
    level: str
    """The syslog level name (`debug` ... `emergency`)."""
    data: Any
    """The message: any JSON value, usually a string."""
    logger: str | None = None
    """The server-side logger's name, if it gave one."""


LogHandler = Callable[[MCPLogRecord], Awaitable[None]]
"""Receives each log message of a server; given to `MCPClient(on_log=...)`."""
