"""An MCP server with a resource that changes, for tether's tests; stdio.

Resource `note://live` (its text starts as `v1`); tool `bump(text)` changes it and
announces `resources/updated` for it.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

TEXT = {"note://live": "v1"}


def build() -> MCPServer:
    server = MCPServer("live", version="1.0.0", log_level="WARNING")

    @server.resource("note://live", name="live", mime_type="text/plain")
    def live() -> str:
        return TEXT["note://live"]

    @server.tool(description="Change the live note and announce it.")
    async def bump(text: str, ctx: Context) -> str:
        TEXT["note://live"] = text
        await ctx.notify_resource_updated("note://live")
        return "bumped"

    return server


if __name__ == "__main__":
    build().run("stdio")
