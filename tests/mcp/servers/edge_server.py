"""An MCP server with awkward tools, written with the `mcp` SDK's low-level `Server`.

Run over stdio: `python edge_server.py`. With `--mute PIDFILE` it writes its pid to
PIDFILE and never answers anything, to test handshake timeouts.

Tools (names chosen to test what providers reject, `^[a-zA-Z0-9_-]{1,64}$`):
- `get.weather` and `get_weather` (the same once `.` becomes `_`), `wetter-läuft`,
  a 100-character name; each answers with its own name;
- `refs` ($defs/$ref schema), `choice` (top-level anyOf), `rooted` (a top-level
  `$ref`), `bare` (no properties):
  each answers with its arguments as JSON;
- `image`, `resources`, `is_error`, `structured`, `both`: the result kinds;
- `huge(size)` a text of `size` characters; `env(name)` an environment variable;
- `pid()` the process id; `stderr(lines)` writes that many lines to stderr;
- `hang()` never answers, counting its cancellation (see `stats()`).
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from collections import Counter
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LONG = "a" * 60 + "_" + "b" * 39
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-not-really-an-image").decode()
COUNTS: Counter[str] = Counter()

OBJ = {"type": "object"}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
SCHEMAS: dict[str, dict[str, Any]] = {
    "get.weather": TEXT,
    "get_weather": TEXT,
    "wetter-läuft": TEXT,
    LONG: TEXT,
    "refs": {
        "type": "object",
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
            }
        },
        "properties": {"at": {"$ref": "#/$defs/Point"}},
        "required": ["at"],
    },
    "choice": {
        "type": "object",
        "anyOf": [{"required": ["city"]}, {"required": ["zip"]}],
        "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
    },
    "rooted": {
        "type": "object",
        "$ref": "#/$defs/Query",
        "$defs": {"Query": {"type": "object", "properties": {"q": {"type": "string"}}}},
    },
    "bare": OBJ,
    "image": OBJ,
    "resources": OBJ,
    "is_error": OBJ,
    "structured": OBJ,
    "both": OBJ,
    "huge": {"type": "object", "properties": {"size": {"type": "integer"}}},
    "env": {"type": "object", "properties": {"name": {"type": "string"}}},
    "pid": OBJ,
    "stderr": {"type": "object", "properties": {"lines": {"type": "integer"}}},
    "hang": OBJ,
    "stats": OBJ,
}


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[types.Tool(name=n, input_schema=s) for n, s in SCHEMAS.items()]
    )


def _results(name: str, args: dict[str, Any]) -> types.CallToolResult:
    if name == "image":
        return types.CallToolResult(
            content=[
                types.TextContent(text="a picture:"),
                types.ImageContent(data=PNG, mime_type="image/png"),
            ]
        )
    if name == "resources":
        return types.CallToolResult(
            content=[
                types.EmbeddedResource(
                    resource=types.TextResourceContents(
                        uri="file:///notes/a.txt", mime_type="text/plain", text="note A"
                    )
                ),
                types.EmbeddedResource(
                    resource=types.BlobResourceContents(
                        uri="file:///data/b.bin",
                        mime_type="application/pdf",
                        blob=base64.b64encode(b"%PDF-1.4").decode(),
                    )
                ),
            ]
        )
    if name == "is_error":
        return types.CallToolResult(content=[types.TextContent(text="quota gone")], is_error=True)
    if name == "structured":
        return types.CallToolResult(content=[], structured_content={"temp": 21, "unit": "C"})
    if name == "both":
        return types.CallToolResult(
            content=[types.TextContent(text="21 C")], structured_content={"temp": 21}
        )
    if name == "huge":
        return text("x" * int(args.get("size", 0)))
    if name == "env":
        return text(json.dumps(os.environ.get(str(args.get("name")))))
    if name == "pid":
        return text(str(os.getpid()))
    if name == "stats":
        return text(json.dumps(dict(COUNTS)))
    if name == "stderr":
        for i in range(int(args.get("lines", 0))):
            sys.stderr.write(f"noise line {i} " + "z" * 100 + "\n")
        sys.stderr.flush()
        return text("wrote")
    if name in ("refs", "choice", "rooted", "bare"):
        return text(json.dumps(args, sort_keys=True))
    return text(f"I am {name}")


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name not in SCHEMAS:
        return types.CallToolResult(
            content=[types.TextContent(text=f"no tool {params.name!r}")], is_error=True
        )
    if params.name == "hang":
        COUNTS["hang started"] += 1
        try:
            await anyio.sleep_forever()
        finally:
            COUNTS["hang cancelled"] += 1
    return _results(params.name, dict(params.arguments or {}))


async def serve() -> None:
    server: Server[Any] = Server("edge", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def mute(pidfile: str) -> None:
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))
    while True:
        time.sleep(1000)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--mute":
        mute(sys.argv[2])
    else:
        anyio.run(serve)
