"""Every error a user of tether can cause, in one tree.

```
TetherError
├── ConfigError (ValueError)              a constructor was given something it can't use
│   ├── UnknownProviderError              `from_string` got an unknown provider prefix
│   ├── MissingDependencyError (ImportError)  an optional extra is not installed
│   │   └── MissingProviderError (ModelError)  a provider's SDK is missing (at call time)
│   ├── SandboxUnavailableError (RuntimeError)  bubblewrap is missing or cannot run
│   ├── ArgumentError (TypeError)         an argument of the wrong kind, or a wrong call shape
│   ├── ScriptFileError                   a `ScriptedChatModel` script file is malformed
│   └── ChatConfigError                   `tether chat` settings (flags, config files) are bad
├── InvalidInputError (ValueError)        `reply`/`observe` got input it can't accept
├── ResumeError (ValueError)              a resume event does not fit the paused reply
│   ├── NothingToResumeError              no reply is paused / nothing to continue
│   └── RuleTooBroadError                 a confirmation's rule allows more than the call
├── StateError (ValueError)               a state to load is damaged or inconsistent
│   └── StateVersionError                 a saved state has an unknown schema version
├── ModelError                            the model call failed
│   ├── ModelRetryableError               transient: rate limit, 5xx, timeout, dropped
│   │   └── RateLimitError                429, with `retry_after`
│   ├── ModelAuthenticationError          bad or missing credential
│   ├── ContextOverflowError              the request exceeded the context window
│   ├── ModelResponseError                the provider rejected the request (400, 404)
│   ├── StreamInterruptedError            a stream broke after output started
│   └── ScriptExhaustedError (AssertionError)  ScriptedChatModel ran out of responses
├── ContextTooLargeError (RuntimeError)   the system prompt alone passes the threshold
├── StructuredOutputError                 the model never gave the structured answer
├── TotalIterationsError                  an agent tree used up its reasoning steps
├── ToolError                             a tool definition is unusable
│   └── DuplicateToolError (ValueError)   two tools share a name in one toolkit
├── PermissionRuleError (ValueError)      a permission rule can't be parsed
├── MCPError                              an MCP server can't be reached or used
│   └── MCPConnectionError (ConnectionError)
│       └── MCPAuthorizationRequired       the server wants an OAuth login (401)
├── A2AError                              a remote A2A agent can't be used
│   ├── A2AAuthenticationError            it refused our credentials (401/403)
│   └── A2AConnectionError (ConnectionError)  it can't be reached or doesn't speak A2A
├── SkillError (ValueError)               a SKILL.md is malformed (names the file)
├── PluginError (ValueError)              a plugin definition or strategy is invalid
├── StorageError
│   ├── SessionInputError (ValueError)    an id or state the storage can't store
│   ├── SessionNotFoundError (KeyError)   update of a session that does not exist
│   ├── SessionConflictError              another writer saved the session first
│   ├── StorageUnavailableError (ConnectionError)  the backend can't be reached
│   │   └── StorageBusyError              every pooled connection stayed in use
│   ├── SessionCorruptedError             a stored record can't be decoded
│   └── LeaseLostError                    another worker took over a session's reply
└── ServiceError                          the HTTP service refused a request
    ├── AuthenticationError               no or an unknown API key
    ├── UnknownAgentError (KeyError)      the agent id is not served
    ├── ReplyInProgressError              the session is running a reply (409)
    ├── RequestTooLargeError              the body is over the configured limit
    ├── ServiceClosingError               the service is shutting down (503)
    ├── UntrustedHostError                the `Host` is not one the service answers to (421)
    ├── CrossSiteRequestError             a state-changing request from another site (403)
    └── PermissionCeilingError            a permission mode above the operator's ceiling (403)
```

Errors that the *model* causes (bad tool arguments, unknown tools, a tool that raises)
never appear here: they become error `ToolResultBlock`s the model reads.
"""

from __future__ import annotations

__all__ = [
    "A2AAuthenticationError",
    "A2AConnectionError",
    "A2AError",
    "ArgumentError",
    "AuthenticationError",
    "ChatConfigError",
    "ConfigError",
    "ContextOverflowError",
    "ContextTooLargeError",
    "CrossSiteRequestError",
    "DuplicateToolError",
    "InvalidInputError",
    "LeaseLostError",
    "MCPAuthorizationRequired",
    "MCPConnectionError",
    "MCPError",
    "MissingDependencyError",
    "MissingProviderError",
    "ModelAuthenticationError",
    "ModelError",
    "ModelResponseError",
    "ModelRetryableError",
    "NothingToResumeError",
    "PermissionCeilingError",
    "PermissionRuleError",
    "PluginError",
    "RateLimitError",
    "ReplyInProgressError",
    "RequestTooLargeError",
    "ResumeError",
    "RuleTooBroadError",
    "SandboxUnavailableError",
    "ScriptExhaustedError",
    "ScriptFileError",
    "ServiceClosingError",
    "ServiceError",
    "SessionConflictError",
    "SessionCorruptedError",
    "SessionInputError",
    "SessionNotFoundError",
    "SkillError",
    "StateError",
    "StructuredOutputError",
    "StateVersionError",
    "StorageBusyError",
    "StorageError",
    "StorageUnavailableError",
    "StreamInterruptedError",
    "TetherError",
    "ToolError",
    "UnknownAgentError",
    "UnknownProviderError",
    "UntrustedHostError",
    "SubAgentError",
    "SubAgentPermissionError",
    "SubAgentDepthError",
    "TotalIterationsError",
]


class TetherError(Exception):
    """Root of every error tether raises on purpose."""


class ConfigError(TetherError, ValueError):
    """A constructor or config was given a value it cannot use."""


class UnknownProviderError(ConfigError):
    """`tether.model.from_string` got a provider prefix it does not know."""


class MissingDependencyError(TetherError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the {package!r} package; install it with "
            f"`pip install 'tether[{extra}]'`"
        )
        self.package = package
        self.extra = extra


class SandboxUnavailableError(ConfigError, RuntimeError):
    """The Bash sandbox cannot run here (bubblewrap missing or not permitted)."""


class InvalidInputError(TetherError, ValueError):
    """`reply`, `reply_stream` or `observe` was given input it cannot accept."""


class ResumeError(TetherError, ValueError):
    """A resume event does not match the paused reply; the state is left unchanged."""


class NothingToResumeError(ResumeError):
    """There is no paused reply to resume or continue."""


class RuleTooBroadError(ResumeError):
    """A rule sent with a confirmation allows more than the confirmed call.

    Send one of the call's suggested rules, a narrower one, or the exact call; nothing
    was changed.
    """


class StateError(TetherError, ValueError):
    """An `AgentState` to load is damaged, nested too deeply, or inconsistent."""


class StateVersionError(StateError):
    """A saved `AgentState` has a schema version this tether cannot load."""


class ModelError(TetherError):
    """The model call failed."""


class ModelRetryableError(ModelError):
    """A transient model failure (rate limit, 5xx, timeout, dropped connection)."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimitError(ModelRetryableError):
    """The provider answered 429; `retry_after` holds its hint in seconds, if any."""


class ModelAuthenticationError(ModelError):
    """The provider rejected the credential; the message names what to set."""


class ContextOverflowError(ModelError):
    """The request was larger than the model's context window."""


class ModelResponseError(ModelError):
    """The provider rejected the request (bad parameter, unknown model, ...)."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class StreamInterruptedError(ModelError):
    """A streamed response broke after output had started; it is not replayed."""


class ScriptExhaustedError(ModelError, AssertionError):
    """`ScriptedChatModel` was called more times than it has responses."""


class ContextTooLargeError(TetherError, RuntimeError):
    """The system prompt alone passes the compression threshold."""


class ToolError(TetherError):
    """A tool definition is unusable."""


class DuplicateToolError(ToolError, ValueError):
    """Two tools of one toolkit share a name."""


class PermissionRuleError(TetherError, ValueError):
    """A permission rule's text form cannot be parsed."""


class MCPError(TetherError):
    """An MCP server cannot be used."""


class MCPConnectionError(MCPError, ConnectionError):
    """An MCP server cannot be reached; the message names the server."""


class MCPAuthorizationRequired(MCPConnectionError):
    """An MCP server answered 401: it needs an OAuth login before it can be used.

    The message names the server and what fixes it (configure `HttpMCPConfig(auth=...)`,
    or `/mcp login NAME` in `tether chat`).
    """

    def __init__(self, message: str, *, server: str) -> None:
        super().__init__(message)
        self.server = server
        """The name of the server that asked for a login."""


class A2AError(TetherError):
    """A remote A2A agent (`tether.agent.A2AAgent`) cannot be used as configured."""


class A2AAuthenticationError(A2AError):
    """The remote A2A agent refused the request's credentials (HTTP 401 or 403).

    Pass its API key with `A2AAgent(url, credential=A2ACredential(api_key=...))` (or set
    `TETHER_A2A_API_KEY`), or the header it expects with `headers={...}`.
    """


class A2AConnectionError(A2AError, ConnectionError):
    """The remote A2A agent cannot be reached, or its answers are not A2A.

    Check the URL (its agent card is at `<url>/.well-known/agent-card.json`) and that the
    agent is running.
    """


class SkillError(TetherError, ValueError):
    """A skill folder or its `SKILL.md` is malformed; the message names the file."""


class PluginError(TetherError, ValueError):
    """A plugin definition or an admin strategy is invalid."""


class StorageError(TetherError):
    """A session storage operation failed."""


class SessionInputError(StorageError, ValueError):
    """A storage call got an argument it cannot store (empty id, not an `AgentState`, ...).

    Nothing is written when it is raised.
    """


class SessionNotFoundError(StorageError, KeyError):
    """The session does not exist; create it with `upsert_session` first."""

    def __str__(self) -> str:
        # KeyError.__str__ would quote the message; keep it readable.
        return str(self.args[0]) if self.args else ""


class SessionConflictError(StorageError):
    """Another writer saved the session since it was loaded; reload and retry."""


class StorageUnavailableError(StorageError, ConnectionError):
    """The storage backend cannot be reached; nothing was written."""


class StorageBusyError(StorageUnavailableError):
    """Every connection of the storage's pool stayed in use for the pool's timeout.

    Nothing was written. Raise the pool size, or lower the load on this worker.
    """


class SessionCorruptedError(StorageError):
    """A stored session record cannot be decoded; the message names its key."""


class ScriptFileError(ConfigError):
    """A `ScriptedChatModel` script file is missing, unparsable or malformed (names the step)."""


class ChatConfigError(ConfigError):
    """`tether chat` got a flag, config file or `.mcp.json` it cannot use (names which)."""


class StructuredOutputError(TetherError):
    """A reply asked for a `structured_schema` ended without the structured answer.

    `msg` is the reply as it ended (its text); the state holds it too. Set
    `ReActConfig(on_missing_structured_output="return_text")` to get it returned instead.
    """

    def __init__(self, message: str, msg: object = None) -> None:
        super().__init__(message)
        self.msg = msg


class TotalIterationsError(TetherError):
    """A sub-agent would reason past the reply's `ReActConfig.max_total_iters`.

    Raised inside the sub-agent, it becomes the sub-agent's error result (the parent's
    model reads it and answers). Raise `max_total_iters` on the outermost agent's
    `ReActConfig`, or set it to None.
    """


class ArgumentError(ConfigError, TypeError):
    """A constructor got an argument of the wrong kind; the message shows the right call."""


class MissingProviderError(MissingDependencyError, ModelError):
    """A model provider's SDK is not installed; `except ModelError` catches it too."""


class LeaseLostError(StorageError):
    """Another worker took over the session's reply lease; this worker must stop writing."""


class ServiceError(TetherError):
    """The HTTP service refused a request; the stored session is unchanged."""


class AuthenticationError(ServiceError):
    """The request carries no API key, or one the service does not know."""


class UnknownAgentError(ServiceError, KeyError):
    """The agent id is not one the service serves; list them with `GET /v1/agents`."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ReplyInProgressError(ServiceError):
    """The session is running a reply; wait for it, or interrupt it first.

    Attributes:
        reply_id: The id of the reply in progress.
    """

    def __init__(self, message: str, reply_id: str) -> None:
        super().__init__(message)
        self.reply_id = reply_id


class RequestTooLargeError(ServiceError):
    """The request body is larger than the service accepts."""


class ServiceClosingError(ServiceError):
    """The service is shutting down and takes no new replies; retry on another worker."""


class UntrustedHostError(ServiceError):
    """The request's `Host` is not one the service answers to (a DNS-rebinding guard).

    Open the service by a name it allows (`localhost`, `127.0.0.1`, `[::1]` and the bound
    port, without API keys), or start it with `--allowed-hosts` naming the host.
    """


class CrossSiteRequestError(ServiceError):
    """A state-changing request came from a page of another origin; nothing was changed."""


class PermissionCeilingError(ServiceError):
    """The permission mode asked for is above the operator's ceiling; nothing was changed.

    The operator sets the ceiling with `tether serve --max-permission-mode`.
    """


class SubAgentError(TetherError):
    """A sub-agent (`Agent.as_tool`) cannot run as configured."""


class SubAgentPermissionError(SubAgentError, ConfigError):
    """A sub-agent was configured wider than its parent; nothing ran.

    A more permissive mode than the parent's, or work dirs outside the parent's.

    Leave the sub-agent's mode unset (it inherits the parent's) or set it no wider; narrow
    its work dirs to folders inside the parent's.
    """


class SubAgentDepthError(SubAgentError):
    """Sub-agents nested deeper than the limit (a sub-agent calling itself, perhaps).

    Raise the limit with `Agent.as_tool(..., max_depth=...)`, or give the deepest agent no
    sub-agent tools.
    """
