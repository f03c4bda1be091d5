"""A real MCP server for tether's tests, written with the official `mcp` SDK.

Run it over stdio (`python demo_server.py`) or streamable HTTP
(`python demo_server.py --http`, or legacy SSE only with `--sse`: it binds 127.0.0.1 on a free
port, or on `--port N`, and prints `PORT <n>` on stdout once it accepts connections).

Tools:
- `echo(text)` read-only; `write_note(text)` not read-only (no readOnlyHint);
- `slow(steps)` reports `steps` progress notifications before answering (a call
  cancelled part-way counts as `slow interrupted` in `stats()`);
- `hang()` never answers (for timeouts); `fail(message)` returns an error result;
- `add_tool(name)` registers a new tool and announces `tools/list_changed`;
- `pid()` the server's process id; `stats()` how many `tools/list` and
  `initialize`/`server/discover` requests the server has answered.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections import Counter
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

COUNTS: Counter[str] = Counter()
NOTES: list[str] = []


def build() -> MCPServer:
    server = MCPServer("demo", version="1.0.0", log_level="WARNING")

    async def count(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is not None:
            COUNTS[ctx.method] += 1
        return await call_next(ctx)

    server._lowlevel_server.middleware.append(count)

    @server.tool(description="Repeat the text.", annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Store a note (changes the server's state).")
    def write_note(text: str) -> str:
        NOTES.append(text)
        return f"stored note #{len(NOTES)}"

    @server.tool(
        description="Work slowly, reporting progress.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def slow(steps: int, ctx: Context) -> str:
        finished = False
        try:
            for i in range(1, steps + 1):
                await ctx.report_progress(i, steps, f"step {i} of {steps}")
                await anyio.sleep(0.01)
            finished = True
        finally:
            if not finished:
                COUNTS["slow interrupted"] += 1
        return f"done after {steps} steps"

    @server.tool(description="Never answer.", annotations=ToolAnnotations(read_only_hint=True))
    async def hang() -> str:
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool(
        description="Fail with the message.", annotations=ToolAnnotations(read_only_hint=True)
    )
    def fail(message: str) -> str:
        raise ToolError(message)

    @server.tool(description="Register a new read-only tool and announce the change.")
    async def add_tool(name: str, ctx: Context) -> str:
        def extra() -> str:
            return f"I am {name}"

        server.add_tool(
            extra,
            name=name,
            description=f"Added at run time: {name}.",
            annotations=ToolAnnotations(read_only_hint=True),
        )
        await ctx.notify_tools_changed()  # 2026 era: subscriptions/listen streams
        if ctx.request_context.protocol_version < "2026":
            await ctx.session.send_tool_list_changed()  # handshake era
        return f"added {name}"

    @server.tool(
        description="The server's process id.", annotations=ToolAnnotations(read_only_hint=True)
    )
    def pid() -> int:
        return os.getpid()

    @server.tool(description="Request counts.", annotations=ToolAnnotations(read_only_hint=True))
    def stats() -> dict[str, int]:
        return dict(COUNTS)

    return server


def serve_http(server: MCPServer, *, sse: bool, port: int = 0) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    app = server.sse_app() if sse else server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true", help="streamable HTTP on a free port")
    parser.add_argument("--sse", action="store_true", help="legacy SSE only, on a free port")
    parser.add_argument("--port", type=int, default=0, help="bind this port (to restart a server)")
    args = parser.parse_args()
    server = build()
    if args.http or args.sse:
        serve_http(server, sse=args.sse, port=args.port)
    else:
        server.run("stdio")
    sys.exit(0)


if __name__ == "__main__":
    main()
