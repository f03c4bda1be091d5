"""An MCP server that uses the protocol beyond tools, for tether's tests (official SDK).

Run over stdio (`python features_server.py`) or streamable HTTP (`--http`: prints
`PORT <n>` once it accepts connections). `--marker FILE`: the `wait` tool writes
`cancelled` to FILE when its call is cancelled.

Tools: `ask` (elicits a name and a count with defaults), `sample` (asks the client's
model), `roots` (lists the client's roots), `chatty` (logs at info and debug), `wait`
(waits until cancelled). Resources `note://greeting` and `note://binary`; prompt
`review(language, focus)` with completion for `language`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Annotated

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer, Resolve
from mcp.server.mcpserver.resolve import Elicit, ElicitationResult, ListRoots, Sample
from pydantic import BaseModel, Field

MARKER: Path | None = None


class Answer(BaseModel):
    name: str
    count: int = Field(default=3)


def ask_name() -> Elicit[Answer]:
    return Elicit("What is your name?", Answer)


def ask_model(question: str) -> Sample:
    text = types.TextContent(type="text", text=question)
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=50)


def client_roots() -> ListRoots:
    return ListRoots()


def build() -> MCPServer:
    server = MCPServer("features", version="1.0.0", log_level="WARNING")

    @server.tool(description="Ask the user for a name.")
    async def ask(answer: Annotated[ElicitationResult[Answer], Resolve(ask_name)]) -> str:
        if answer.action == "accept":
            return f"hello {answer.data.name} x{answer.data.count}"
        return f"no answer: {answer.action}"

    @server.tool(description="Ask the client's model a question.")
    async def sample(
        question: str, result: Annotated[types.CreateMessageResult, Resolve(ask_model)]
    ) -> str:
        return f"model said: {getattr(result.content, 'text', result.content)}"

    @server.tool(description="List the client's roots.")
    async def roots(listed: Annotated[types.ListRootsResult, Resolve(client_roots)]) -> str:
        return " ".join(str(root.uri) for root in listed.roots)

    @server.tool(description="Log two messages.")
    async def chatty(ctx: Context) -> str:
        await ctx.info("visible message")
        await ctx.debug("debug message")
        return "logged"

    @server.tool(
        description="Wait until cancelled.", annotations=types.ToolAnnotations(read_only_hint=True)
    )
    async def wait(ctx: Context) -> str:
        try:
            await ctx.report_progress(0, 1, "waiting")
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            if MARKER is not None:
                MARKER.write_text("cancelled")
            raise
        return "unreachable"

    @server.resource("note://greeting", name="greeting", mime_type="text/plain")
    def greeting() -> str:
        return "Hello from a resource."

    @server.resource("note://binary", name="binary", mime_type="application/octet-stream")
    def binary() -> bytes:
        return b"\x00\x01\x02"

    @server.prompt(description="Review code in a language.")
    def review(language: str, focus: str = "bugs") -> str:
        return f"Review this {language} code for {focus}."

    @server.completion()
    async def complete(ref: object, argument: object, context: object) -> types.Completion:
        typed = getattr(argument, "value", "")
        values = [v for v in ("python", "perl", "rust") if v.startswith(typed)]
        return types.Completion(values=values)

    return server


def main() -> None:
    global MARKER
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--marker")
    args = parser.parse_args()
    MARKER = Path(args.marker) if args.marker else None
    server = build()
    if args.http:
        sys.path.insert(0, str(Path(__file__).parent))
        from demo_server import serve_http

        serve_http(server, sse=False)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
