"""MCP servers as tool sources: `MCPClient` over stdio or HTTP (the `mcp` SDK loads on use)."""

from tether.mcp._client import MCPClient
from tether.mcp._config import HttpMCPConfig, MCPConfig, StdioMCPConfig
from tether.mcp._tool import MCPArguments, MCPTool

__all__ = [
    "HttpMCPConfig",
    "MCPArguments",
    "MCPClient",
    "MCPConfig",
    "MCPTool",
    "StdioMCPConfig",
]
