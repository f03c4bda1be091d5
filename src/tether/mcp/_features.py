"""The parts of MCP beyond tools, as methods of `MCPClient`.

Resources, prompts, completion, roots, logging level, progress, the plugin form.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from tether.errors import ConfigError
from tether.event import CustomEvent
from tether.mcp._config import HttpMCPConfig, MCPConfig
from tether.mcp._hooks import Hooks
from tether.mcp._oauth import AuthorizeHandler
from tether.mcp._requests import ElicitationHandler, SamplingHandler
from tether.mcp._tokens import TokenStoreBase
from tether.mcp._tool import tool_name
from tether.mcp._transport import deprecated_ok
from tether.plugin import Plugin
from tether.tool import ToolContext

if TYPE_CHECKING:
    from mcp import Client

    from tether.mcp._client import MCPClient

__all__ = ["MCPFeatures"]

logger = logging.getLogger("tether.mcp")
T = TypeVar("T")

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class MCPFeatures:
    """Resources, prompts, completion and the other requests an `MCPClient` can send."""

    name: str
    _in_flight: dict[str, ToolContext]
    _hooks: Hooks
    _unavailable: str | None
    mcp_config: MCPConfig
    token_store: TokenStoreBase

    async def connect(self) -> None:
        raise NotImplementedError  # `MCPClient` provides it

    async def _drop_session(self) -> None:
        raise NotImplementedError  # `MCPClient` provides it

    @property
    def on_elicitation(self) -> ElicitationHandler | None:
        """Answers the server's elicitations (None: declined); may be set before first use."""
        return self._hooks.on_elicitation

    @on_elicitation.setter
    def on_elicitation(self, handler: ElicitationHandler | None) -> None:
        self._hooks.on_elicitation = handler

    @property
    def on_sampling(self) -> SamplingHandler | None:
        """Answers the server's sampling requests (None: not offered).

        Set it before the session opens: the capability is declared when connecting.
        """
        return self._hooks.on_sampling

    @on_sampling.setter
    def on_sampling(self, handler: SamplingHandler | None) -> None:
        self._hooks.on_sampling = handler

    @property
    def status(self) -> str:
        """`connected`, `needs login`, `unavailable: <why>`, or `not connected`."""
        if getattr(self, "is_connected", False):
            return "connected"
        if self._unavailable is not None:
            if "requires authorization" in self._unavailable:
                return "needs login"
            return f"unavailable: {self._unavailable}"
        return "not connected"

    async def login(self, authorize: AuthorizeHandler) -> None:
        """Log in to an OAuth server now (`authorize` does the browser step) and connect.

        Raises `MCPAuthorizationRequired` if the login fails.
        """
        if not isinstance(self.mcp_config, HttpMCPConfig) or self.mcp_config.auth is None:
            raise ConfigError(
                f"MCP server {self.name!r} has no OAuth configured; give its "
                "`HttpMCPConfig` an `auth=OAuthConfig()` (`auth = {}` in the chat config)"
            )
        before = self._hooks.authorize
        self._hooks.authorize = authorize
        try:
            await self._drop_session()
            await self.connect()
        finally:
            self._hooks.authorize = before

    def with_token_store(
        self, store: TokenStoreBase, authorize: AuthorizeHandler | None = None
    ) -> MCPClient:
        """A new, unconnected `MCPClient` like this one whose OAuth tokens live in `store`.

        Same server, options and handlers; `authorize` replaces the login handler (None:
        no interactive login, a server that needs one raises `MCPAuthorizationRequired`).
        `tether serve` gives each user one, over that user's tokens.
        """
        hooks = self._hooks
        clone: MCPClient = type(self)(  # type: ignore[call-arg,assignment]  # an MCPClient
            self.name,
            getattr(self, "is_stateful", True),
            self.mcp_config,
            getattr(self, "enable_tools", None),
            getattr(self, "disable_tools", None),
            getattr(self, "execution_timeout", None),
            is_optional=getattr(self, "is_optional", False),
            trust_annotations=getattr(self, "trust_annotations", False),
            on_elicitation=hooks.on_elicitation,
            elicitation_timeout=hooks.elicitation_timeout,
            on_sampling=hooks.on_sampling,
            roots=hooks.roots,
            on_log=hooks.on_log,
            log_level=hooks.log_level,
            token_store=store,
            authorize=authorize,
            resource_tools=getattr(self, "resource_tools", False),
            identity_assertion=hooks.identity_assertion,
        )
        return clone

    async def logout(self) -> None:
        """Forget this server's OAuth tokens and close its session."""
        if isinstance(self.mcp_config, HttpMCPConfig):
            await self.token_store.delete(self.mcp_config.url)
        await self._drop_session()

    async def _with_client(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        raise NotImplementedError  # `MCPClient` provides it

    async def list_resources(self) -> list[dict[str, Any]]:
        """The server's resources (every page), as `{"uri", "name", ...}` objects."""

        async def run(client: Client) -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                page = await client.list_resources(cursor=cursor)
                found.extend(r.model_dump(mode="json", exclude_none=True) for r in page.resources)
                cursor = page.next_cursor
                if not cursor:
                    return found

        return await self._with_client(run)

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """The server's resource templates (`{"uriTemplate", "name", ...}`)."""

        async def run(client: Client) -> list[dict[str, Any]]:
            page = await client.list_resource_templates()
            return [
                t.model_dump(mode="json", exclude_none=True, by_alias=True)
                for t in page.resource_templates
            ]

        return await self._with_client(run)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """The contents of one resource: `{"uri", "mimeType", "text" | "blob"}` objects."""

        async def run(client: Client) -> list[dict[str, Any]]:
            result = await client.read_resource(uri)
            return [
                c.model_dump(mode="json", exclude_none=True, by_alias=True) for c in result.contents
            ]

        return await self._with_client(run)

    async def subscribe_resource(self, uri: str) -> None:
        """Ask the server to announce changes of `uri` (stateful clients)."""

        async def run(client: Client) -> None:
            await client.subscribe_resource(uri)

        await self._with_client(run)

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The server's prompts: `{"name", "description", "arguments"}` objects."""

        async def run(client: Client) -> list[dict[str, Any]]:
            page = await client.list_prompts()
            return [p.model_dump(mode="json", exclude_none=True) for p in page.prompts]

        return await self._with_client(run)

    async def get_prompt(
        self, prompt: str, arguments: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """A prompt filled in: its messages as `{"role", "content"}` objects."""

        async def run(client: Client) -> list[dict[str, Any]]:
            result = await client.get_prompt(prompt, arguments or {})
            return [m.model_dump(mode="json", exclude_none=True) for m in result.messages]

        return await self._with_client(run)

    async def complete_argument(
        self, prompt: str, argument: str, value: str, context: dict[str, str] | None = None
    ) -> list[str]:
        """Completions the server suggests for a prompt argument typed so far as `value`."""
        import mcp_types

        async def run(client: Client) -> list[str]:
            result = await client.complete(
                mcp_types.PromptReference(type="ref/prompt", name=prompt),
                {"name": argument, "value": value},
                context_arguments=context,
            )
            return list(result.completion.values)

        return await self._with_client(run)

    async def set_log_level(self, level: LogLevel) -> None:
        """Ask the server to send log messages at `level` and above."""

        async def run(client: Client) -> None:
            with deprecated_ok():
                await client.set_logging_level(level)

        await self._with_client(run)

    async def notify_roots_changed(self) -> None:
        """Tell the server the roots changed (it lists them again).

        On 2026-era connections the server asks for the roots with each request that
        needs them, so there is nothing to announce.
        """
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        async def run(client: Client) -> None:
            if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                with deprecated_ok():
                    await client.send_roots_list_changed()

        await self._with_client(run)

    def _current_call(self) -> ToolContext | None:
        """The call a server request most likely belongs to (the first one in flight).

        A call whose events someone reads comes first.
        """
        calls = list(self._in_flight.values())
        return next((c for c in calls if c.emit is not None), calls[0] if calls else None)

    async def _emit_in_flight(self, name: str, data: dict[str, Any]) -> None:
        """A `CustomEvent` to each tool call of this server that is running."""
        for context in list(self._in_flight.values()):
            if context.emit is None:
                continue
            payload = {**data, "tool_call_id": context.tool_call_id}
            try:
                await context.emit(CustomEvent(reply_id=context.reply_id, name=name, data=payload))
            except Exception:  # best effort; never fail the call for it
                logger.debug("could not emit %s", name, exc_info=True)

    def _progress_callback(self, remote: str, context: ToolContext) -> Any:
        emit = context.emit
        if emit is None:
            return None

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            data = {
                "server": self.name,
                "tool": tool_name(self.name, remote),
                "tool_call_id": context.tool_call_id,
                "progress": progress,
                "total": total,
                "message": message,
            }
            try:
                await emit(CustomEvent(reply_id=context.reply_id, name="mcp_progress", data=data))
            except Exception:  # progress is best effort; never fail the call for it
                logger.debug("could not emit MCP progress", exc_info=True)

        return on_progress

    def as_plugin(
        self,
        module_name: str | None = None,
        description: str | None = None,
        sleep_brief: str | None = None,
        **kwargs: Any,
    ) -> Plugin:
        """This server as a sleepable plugin: its tools stay hidden until the model wakes it.

        While asleep the server is not even contacted. Add the plugin to
        `Toolkit(plugins=[...])` instead of `mcps=[...]`.

        Args:
            module_name: The id the model activates it by (default: the server name).
            description: What the server offers (default: a generic line).
            sleep_brief: The line shown while it sleeps (default: `description`).
            **kwargs: Passed on to `tether.plugin.Plugin.from_source`.
        """
        text = description or f"Tools of the MCP server {self.name!r}."
        kwargs.setdefault("tool_prefix", f"mcp__{self.name}__")
        return Plugin.from_source(
            self,  # type: ignore[arg-type]  # an MCPClient, the only user of this mixin
            module_name=module_name or self.name,
            description=text,
            sleep_brief=text if sleep_brief is None else sleep_brief,
            **kwargs,
        )
