"""MCP servers as tool sources: `MCPClient` over stdio or HTTP (the `mcp` SDK loads on use).

Beyond tools: OAuth (`OAuthConfig`, token stores), elicitation, sampling, roots, logging,
resources, prompts and completion.
"""

from tether.mcp._asking import (
    ElicitationRequestEvent,
    SamplingRequestEvent,
    answer_elicitation,
    answer_sampling,
    ask_caller,
    confirm_with_caller,
)
from tether.mcp._client import MCPClient
from tether.mcp._config import HttpMCPConfig, MCPConfig, StdioMCPConfig
from tether.mcp._hooks import RootsSource
from tether.mcp._loopback import loopback_authorize
from tether.mcp._oauth import AuthorizeHandler, IdentityAssertionHandler
from tether.mcp._oauth_config import OAuthConfig
from tether.mcp._requests import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResponse,
    LogHandler,
    MCPLogRecord,
    SamplingHandler,
    SamplingRequest,
    SamplingResponse,
    decline_elicitation,
)
from tether.mcp._sampler import ModelSampler, SamplingApproval
from tether.mcp._tokens import FileTokenStore, MemoryTokenStore, TokenStoreBase
from tether.mcp._tool import MCPArguments, MCPTool

__all__ = [
    "AuthorizeHandler",
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationRequestEvent",
    "ElicitationResponse",
    "FileTokenStore",
    "HttpMCPConfig",
    "IdentityAssertionHandler",
    "LogHandler",
    "MCPArguments",
    "MCPClient",
    "MCPConfig",
    "MCPLogRecord",
    "MCPTool",
    "MemoryTokenStore",
    "ModelSampler",
    "OAuthConfig",
    "RootsSource",
    "SamplingApproval",
    "SamplingHandler",
    "SamplingRequest",
    "SamplingRequestEvent",
    "SamplingResponse",
    "StdioMCPConfig",
    "TokenStoreBase",
    "answer_elicitation",
    "answer_sampling",
    "ask_caller",
    "confirm_with_caller",
    "decline_elicitation",
    "loopback_authorize",
]
