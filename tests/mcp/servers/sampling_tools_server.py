"""An MCP server whose tool asks the client's model with a tool offered (sampling with
tools, MCP 2025-11-25), for tether's tests; stdio.

`forecast(city)`: samples with a `get_weather` tool (tool choice `auto`) and reports what
came back: the tool calls the model made, or its text.
"""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import MCPServer, Resolve
from mcp.server.mcpserver.resolve import Sample

WEATHER = types.Tool(
    name="get_weather",
    description="The weather in a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def ask_with_tool(city: str) -> Sample:
    question = types.TextContent(type="text", text=f"Forecast for {city}?")
    return Sample(
        [types.SamplingMessage(role="user", content=question)],
        max_tokens=100,
        tools=[WEATHER],
        tool_choice=types.ToolChoice(mode="auto"),
    )


def build() -> MCPServer:
    server = MCPServer("weather", version="1.0.0", log_level="WARNING")

    @server.tool(description="Ask the client's model for a forecast, with a tool.")
    async def forecast(
        city: str,
        result: Annotated[types.CreateMessageResultWithTools, Resolve(ask_with_tool)],
    ) -> str:
        parts = result.content if isinstance(result.content, list) else [result.content]
        uses = [p for p in parts if isinstance(p, types.ToolUseContent)]
        if uses:
            calls = ", ".join(f"{u.name}({u.input.get('city')}) id={u.id}" for u in uses)
            return f"called {calls} stop={result.stop_reason}"
        return "no tool: " + " ".join(p.text for p in parts if isinstance(p, types.TextContent))

    return server


if __name__ == "__main__":
    build().run("stdio")
