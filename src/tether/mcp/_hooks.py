"""The SDK callbacks of one `MCPClient`: elicitation, sampling, roots and logging.

Each callback turns the protocol's request into a tether value, asks the application's
handler, and turns the answer back. Without a handler tether declines (elicitation) or
does not offer the capability at all (sampling, roots).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.mcp._asking import Caller
from tether.mcp._defaults import with_defaults
from tether.mcp._oauth import AuthorizeHandler, IdentityAssertionHandler
from tether.mcp._requests import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResponse,
    LogHandler,
    MCPLogRecord,
    SamplingHandler,
    SamplingRequest,
    decline_elicitation,
)
from tether.mcp._tokens import MemoryTokenStore, TokenStoreBase
from tether.permission import PermissionBehavior, server_request_behavior

if TYPE_CHECKING:
    import mcp_types

    from tether.tool import ToolContext

__all__ = ["Hooks", "RootsSource", "client_info"]

logger = logging.getLogger("tether.mcp")
server_logger = logging.getLogger("tether.mcp.server")

RootsSource = Sequence[str | Path] | Callable[[], Sequence[str | Path]]
"""The folders a server may work in: a list, or a callable read on every `roots/list`."""

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]

_PY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def client_info() -> mcp_types.Implementation:
    """How tether introduces itself: `tether` and its version."""
    from importlib.metadata import PackageNotFoundError, version

    import mcp_types

    try:
        ours = version("tether")
    except PackageNotFoundError:
        ours = "0"
    return mcp_types.Implementation(name="tether", version=ours)


def _absolute(folder: str | Path) -> Path:
    path = Path(folder)
    return path if path.is_absolute() else Path.cwd() / path


async def _no_emit(name: str, data: dict[str, Any]) -> None:
    return None


def _no_call() -> ToolContext | None:
    return None


@dataclass
class Hooks:
    """What an `MCPClient` answers with; builds the SDK `Client` keyword arguments."""

    server: str
    on_elicitation: ElicitationHandler | None = None
    elicitation_timeout: float | None = None
    on_sampling: SamplingHandler | None = None
    roots: RootsSource | None = None
    on_log: LogHandler | None = None
    log_level: str | None = None
    token_store: TokenStoreBase = field(default_factory=MemoryTokenStore)
    authorize: AuthorizeHandler | None = None
    identity_assertion: IdentityAssertionHandler | None = None
    emit: Emit = _no_emit
    """Emits a `CustomEvent` (name, data) to the calls in flight."""
    current_call: Callable[[], ToolContext | None] = _no_call
    """The tool call a server request most likely came during (the first in flight)."""

    def _caller(self, kind: Any) -> Caller:
        context = self.current_call()
        rules = context.permission_context if context is not None else None
        return Caller(context, server_request_behavior(rules, kind, self.server))

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `mcp.Client`."""
        kwargs: dict[str, Any] = {
            "client_info": client_info(),
            "elicitation_callback": self._elicit,
            "logging_callback": self._log,
        }
        if self.log_level is not None:
            kwargs["log_level"] = self.log_level
        if self.on_sampling is not None:
            import mcp_types

            kwargs["sampling_callback"] = self._sample
            kwargs["sampling_capabilities"] = mcp_types.SamplingCapability(
                tools=mcp_types.SamplingToolsCapability()
            )
        if self.roots is not None:
            kwargs["list_roots_callback"] = self._list_roots
        return kwargs

    async def _elicit(self, context: Any, params: Any) -> Any:
        import mcp_types

        mode = getattr(params, "mode", None) or "form"
        caller = self._caller("elicit")
        if caller.behavior is PermissionBehavior.DENY:
            await self.emit("mcp_elicitation", {"server": self.server, "denied_by_rule": True})
            return mcp_types.ElicitResult(action="decline")
        request = ElicitationRequest(
            server=self.server,
            message=params.message,
            mode="url" if mode == "url" else "form",
            requested_schema=getattr(params, "requested_schema", None),
            url=getattr(params, "url", None),
            elicitation_id=getattr(params, "elicitation_id", None),
            caller=caller,
        )
        await self.emit(
            "mcp_elicitation",
            {"server": self.server, "message": request.message, "mode": request.mode},
        )
        handler = self.on_elicitation or decline_elicitation
        try:
            async with asyncio.timeout(self.elicitation_timeout):
                answer = await handler(request)
        except TimeoutError:
            answer = ElicitationResponse(action="cancel")
        except Exception:
            logger.warning("MCP server %r: elicitation handler failed", self.server, exc_info=True)
            answer = ElicitationResponse(action="cancel")
        if answer.action != "accept":
            return mcp_types.ElicitResult(action=answer.action)
        if request.mode == "url":
            return mcp_types.ElicitResult(action="accept")
        content = with_defaults(request.requested_schema, answer.content)
        return mcp_types.ElicitResult(action="accept", content=content)

    async def _sample(self, context: Any, params: Any) -> Any:
        import mcp_types

        assert self.on_sampling is not None  # only registered with a handler
        caller = self._caller("sample")
        if caller.behavior is PermissionBehavior.DENY:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message="sampling is denied for this server by the client's rules",
            )
        hints = params.model_preferences.hints if params.model_preferences else None
        tools = params.tools or []
        request = SamplingRequest(
            server=self.server,
            messages=[m.model_dump(mode="json", exclude_none=True) for m in params.messages],
            system_prompt=params.system_prompt,
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            stop_sequences=params.stop_sequences,
            model_hints=[h.name for h in hints or () if h.name],
            caller=caller,
            tools=[t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in tools],
            tool_choice=params.tool_choice.mode if params.tool_choice is not None else None,
        )
        try:
            answer = await self.on_sampling(request)
        except Exception as exc:
            logger.warning("MCP server %r: sampling handler failed", self.server, exc_info=True)
            return mcp_types.ErrorData(
                code=mcp_types.INTERNAL_ERROR, message=f"sampling failed: {type(exc).__name__}"
            )
        if answer is None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST, message="the user declined the sampling request"
            )
        text = mcp_types.TextContent(type="text", text=answer.text)
        if not answer.tool_calls:
            return mcp_types.CreateMessageResult(
                role="assistant", content=text, model=answer.model, stop_reason=answer.stop_reason
            )
        uses = [
            mcp_types.ToolUseContent(type="tool_use", id=c["id"], name=c["name"], input=c["input"])
            for c in answer.tool_calls
        ]
        return mcp_types.CreateMessageResultWithTools(
            role="assistant",
            content=[text, *uses] if answer.text else uses,
            model=answer.model,
            stop_reason="toolUse",
        )

    async def _list_roots(self, context: Any) -> Any:
        import mcp_types

        source = self.roots
        folders = source() if callable(source) else source or ()
        paths = [_absolute(folder) for folder in folders]
        roots = [mcp_types.Root(uri=p.as_uri(), name=p.name or str(p)) for p in paths]
        return mcp_types.ListRootsResult(roots=roots)

    async def _log(self, params: Any) -> None:
        record = MCPLogRecord(
            server=self.server, level=str(params.level), data=params.data, logger=params.logger
        )
        server_logger.log(
            _PY_LEVELS.get(record.level, logging.INFO),
            "MCP server %r%s: %s",
            self.server,
            f" ({record.logger})" if record.logger else "",
            record.data,
        )
        data = {"server": self.server, "level": record.level, "data": record.data}
        if record.logger:
            data["logger"] = record.logger
        await self.emit("mcp_log", data)
        if self.on_log is not None:
            try:
                await self.on_log(record)
            except Exception:
                logger.warning("MCP server %r: log handler failed", self.server, exc_info=True)
