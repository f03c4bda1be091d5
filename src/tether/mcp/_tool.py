"""`MCPTool`: one tool of an MCP server, as the model and the permission engine see it."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.mcp._media import media_block
from tether.mcp._schema import offered_schema
from tether.message import DataBlock, TextBlock, ToolResultBlock, ToolResultState
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)
from tether.tool import ToolBase, ToolContext, ToolOutput

__all__ = ["MCPArguments", "MCPTool", "convert_result", "tool_name"]

_INVALID = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
"""Providers accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`."""
_DIGEST = 8


def tool_name(server: str, tool: str) -> str:
    """The name the model calls a server's tool by: `mcp__<server>__<tool>`.

    A tool name that providers would reject (characters outside `[A-Za-z0-9_-]`, or too
    long once prefixed) has those characters replaced by `_`, is cut to fit, and gets
    `_` plus 8 hex digits of its SHA-256: two tool names that differ only there (`a.b`,
    `a_b`) stay apart, and a tool keeps its name when others come and go (permission
    rules and paused calls refer to it).
    """
    prefix = f"mcp__{server}__"
    if tool and not _INVALID.search(tool) and len(prefix) + len(tool) <= MAX_NAME:
        return prefix + tool
    digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST]
    room = MAX_NAME - len(prefix) - 1 - _DIGEST
    return f"{prefix}{_INVALID.sub('_', tool)[:room]}_{digest}"


class MCPArguments(BaseModel):
    """Whatever the server's input schema allows (the server validates the arguments)."""

    model_config = ConfigDict(extra="allow")


CallFn = Callable[[str, dict[str, Any], ToolContext], Awaitable[ToolOutput]]


class MCPTool(ToolBase):
    """A tool offered by an MCP server; calls go through its `MCPClient`."""

    input_model = MCPArguments

    def __init__(
        self, server: str, spec: Any, call: CallFn, *, trust_annotations: bool = False
    ) -> None:
        self.server = server
        self.remote_name: str = spec.name
        """The tool's name on the server."""
        self.name = tool_name(server, spec.name)
        description = spec.description or spec.title or f"Tool {spec.name!r} of {server!r}."
        self._schema, constraints = offered_schema(spec.input_schema)
        self.description = description + constraints
        annotations = spec.annotations
        self.read_only_hint = bool(annotations is not None and annotations.read_only_hint)
        """The server says the tool changes nothing (its claim, trusted or not)."""
        self.trust_annotations = trust_annotations
        """The user vouches for the server: its annotations decide (see `MCPClient`)."""
        self.is_read_only = self.read_only_hint and trust_annotations
        # One session multiplexes requests, so read-only calls may overlap.
        self.is_concurrency_safe = self.is_read_only
        self._call = call

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        """The server's claim, so that EXPLORE mode asks for it instead of denying it.

        Only a trusted claim (`is_read_only`) allows the call: `check_permissions` asks
        otherwise. A tool without the hint is denied in EXPLORE mode, as any other.
        """
        return self.read_only_hint

    @property
    def input_schema(self) -> dict[str, Any]:
        """The server's JSON schema for the arguments, in the shape providers accept."""
        return self._schema

    is_permission_check_local = True  # decides from the arguments alone

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """Tools a trusted server marks `readOnlyHint` run; every other call asks."""
        if self.is_read_only:
            return PermissionDecision(
                behavior=PermissionBehavior.ALLOW, reason=f"{self.name} is read-only"
            )
        reason = f"{self.name} may change things on MCP server {self.server!r}"
        if self.read_only_hint:
            reason = (
                f"MCP server {self.server!r} says {self.name} is read-only, but its "
                "annotations are not trusted (`MCPClient(trust_annotations=True)` trusts them)"
            )
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            reason=reason,
            suggested_rules=self.generate_suggestions(tool_input, context, tool_state),
        )

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        """Allow this tool from now on: `mcp__<server>__<tool>`."""
        return [PermissionRule(tool_name=self.name, source="session")]

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Call the tool on the server."""
        return await self._call(self.remote_name, tool_input.model_dump(), context)


def _content_blocks(item: Any) -> list[TextBlock | DataBlock]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return [TextBlock(text=item.text)]
    if kind in ("image", "audio"):
        return [media_block(item.mime_type, item.data, kind)]
    if kind == "resource":
        return _resource_blocks(item.resource)
    if kind == "resource_link":
        return [TextBlock(text=f"[resource {item.name}: {item.uri}]")]
    return [TextBlock(text=json.dumps(item.model_dump(mode="json", by_alias=True), default=str))]


def _resource_blocks(resource: Any) -> list[TextBlock | DataBlock]:
    """An embedded resource, headed by its URI (the model must know which one it is)."""
    text = getattr(resource, "text", None)
    if text is not None:
        return [TextBlock(text=f"[resource {resource.uri}]\n{text}")]
    media = resource.mime_type or "application/octet-stream"
    return [
        TextBlock(text=f"[resource {resource.uri} ({media})]"),
        media_block(media, resource.blob, "resource data"),
    ]


def convert_result(result: Any) -> ToolResultBlock:
    """A `CallToolResult` as a tool result (id and name are filled in by the runner)."""
    blocks = [block for item in result.content for block in _content_blocks(item)]
    if not blocks and result.structured_content is not None:
        blocks = [TextBlock(text=json.dumps(result.structured_content, ensure_ascii=False))]
    output: str | list[TextBlock | DataBlock]
    if all(isinstance(b, TextBlock) for b in blocks):
        output = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    else:
        output = blocks
    state = ToolResultState.ERROR if result.is_error else ToolResultState.SUCCESS
    return ToolResultBlock(id="", name="", output=output, state=state)
