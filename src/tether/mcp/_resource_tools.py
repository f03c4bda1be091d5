"""Two generic tools per server that let the model browse its resources (read-only)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tether.tool import FunctionTool, tool

if TYPE_CHECKING:
    from tether.mcp._features import MCPFeatures

__all__ = ["resource_tools"]

_MAX_TEXT = 100_000
"""Characters of one resource's text handed to the model."""


def resource_tools(client: MCPFeatures) -> list[FunctionTool]:
    """`mcp__<server>__list_resources` and `mcp__<server>__read_resource` for `client`."""
    server = client.name

    async def list_resources() -> str:
        found = await client.list_resources()
        if not found:
            return f"MCP server {server!r} has no resources."
        return "\n".join(
            f"{r['uri']} — {r.get('name', '')}"
            + (f" ({r['mimeType']})" if r.get("mimeType") else "")
            + (f": {r['description']}" if r.get("description") else "")
            for r in found
        )

    async def read_resource(uri: str) -> str:
        """Read one resource.

        Args:
            uri: The resource's URI, as listed by the server.
        """
        parts = []
        for content in await client.read_resource(uri):
            if "text" in content:
                text = str(content["text"])
                if len(text) > _MAX_TEXT:
                    text = text[:_MAX_TEXT] + f"\n[truncated at {_MAX_TEXT} characters]"
                parts.append(text)
            else:
                mime = content.get("mimeType", "application/octet-stream")
                size = len(str(content.get("blob", ""))) * 3 // 4
                parts.append(f"[binary resource {content.get('uri')!s}: {mime}, ~{size} bytes]")
        return "\n\n".join(parts) or json.dumps({"uri": uri, "contents": []})

    return [
        tool(
            name=f"mcp__{server}__list_resources",
            description=f"List the resources (files, documents, data) of the MCP server {server!r}.",
            is_read_only=True,
            is_concurrency_safe=True,
        )(list_resources),
        tool(
            name=f"mcp__{server}__read_resource",
            description=f"Read one resource of the MCP server {server!r} by its URI.",
            is_read_only=True,
            is_concurrency_safe=True,
        )(read_resource),
    ]
