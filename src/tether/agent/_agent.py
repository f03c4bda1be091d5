"""`Agent`: configuration, and the public entry points into the loop (`tether._loop`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from functools import cache

from pydantic import BaseModel

from tether._loop.drive import run_reply, stream_reply
from tether._loop.reasoning import compress_now
from tether._loop.reply import observe_messages
from tether._loop.structured import reply_view
from tether._schemas import build_schemas
from tether.agent._config import ModelConfig, ReActConfig
from tether.agent._subagent import MAX_DEPTH, AgentTool
from tether.agent._validate import check_agent_args
from tether.context import ContextConfig, Offloader
from tether.event import AgentEvent, ResumeEvent
from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ChatModelBase
from tether.permission import PermissionMode
from tether.state import AgentState, Checkpoint
from tether.tool import Toolkit, ToolkitView

__all__ = ["Agent"]


@cache
def _defaults() -> tuple[ReActConfig, ModelConfig, ContextConfig]:
    # Built on first use (not at import); frozen, so agents may share them. A toolkit is
    # mutable (`register`): each agent gets its own. The first agent also builds the
    # message and state schemas, each once (built apart, each would inline the others').
    build_schemas(UserMsg, AssistantMsg, SystemMsg, AgentState)
    return ReActConfig(), ModelConfig(), ContextConfig()


class Agent:
    """A stateless reason-act loop: configuration here, progress in `state`.

    `reply`/`reply_stream` take a `Msg` or list of them (start a reply), a
    `UserConfirmResultEvent` / `ExternalExecutionResultEvent` / `UserInterruptEvent`
    (resume the paused reply), or `None` (continue from the state as it is). Nothing is
    bound at construction: assigning `agent.state = other` switches sessions fully, and
    agents may share a toolkit and a model.

    The permission policy (mode, allow/ask/deny rules, rules the user accepted, work dirs)
    lives in `state.permission_context`, not on the agent: an `AgentState` is trusted server
    data, so never build one from what a client sends.

    Args:
        name: The agent's name; its replies carry it as `Msg.name`.
        system_prompt: The instructions sent first on every model call (plugins, skills
            and middleware may add to it).
        model: The chat model, e.g. `OpenAIChatModel(...)`, `tether.model.from_string(
            "openai:gpt-4o")`, or `ScriptedChatModel([...])` for tests.
        toolkit: The tools the model may call (`Toolkit(tools=[...], mcps=[...],
            skills_or_loaders=[...], plugins=[...])`); none by default.
        state: The session to continue (default: a fresh `AgentState`). Assign
            `agent.state` later to switch sessions.
        offloader: Where compressed messages and truncated tool results are written in
            full (e.g. `LocalFileOffloader(folder)`); without one they are dropped.
        middlewares: Hooks around the reply, reasoning, model calls and tools; the first
            listed is the outermost.
        model_config: Retries and the fallback model (`ModelConfig`).
        context_config: When and how the context is compressed (`ContextConfig`).
        react_config: How the loop iterates (`ReActConfig`, e.g. `max_iters`).

    Raises:
        ArgumentError: An argument has the wrong kind (a model given as a string, a list
            given as the toolkit, ...); the message shows the right call.
    """

    def __init__(
        self,
        name: str,
        system_prompt: str,
        model: ChatModelBase,
        toolkit: Toolkit | None = None,
        state: AgentState | None = None,
        offloader: Offloader | None = None,
        middlewares: Sequence[MiddlewareBase] | None = None,
        model_config: ModelConfig | None = None,
        context_config: ContextConfig | None = None,
        react_config: ReActConfig | None = None,
    ) -> None:
        check_agent_args(
            name, system_prompt, model, toolkit, state, offloader, middlewares,
            {"model_config": model_config, "context_config": context_config,
             "react_config": react_config},
        )  # fmt: skip
        react, model_defaults, context = _defaults()
        self.name = name
        self.system_prompt = system_prompt
        self.model = model
        self.toolkit = toolkit if toolkit is not None else Toolkit()
        self.state = state if state is not None else AgentState()
        self.offloader = offloader
        self.middlewares: tuple[MiddlewareBase, ...] = tuple(middlewares or ())
        self.model_config = model_config or model_defaults
        self.context_config = context_config or context
        self.react_config = react_config or react

    async def reply(
        self,
        inputs: Msg | list[Msg] | ResumeEvent | None = None,
        *,
        structured_schema: type[BaseModel] | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> Msg:
        """Run the loop to the end of the reply, or to a pause, and return its message.

        A paused reply returns a copy of the reply so far whose `metadata["awaiting"]`
        names what it waits for and `metadata["pause_events"]` holds the events.

        `checkpoint(state)` is awaited at every save point: once the reply started (or
        resumed), after each model step, before a batch of tools starts (its calls marked
        running), after each tool result, at a pause and at the end. If it raises, the
        reply stops before its next side effect, the exception propagates, and the state
        is left as it was at the last checkpoint that succeeded.
        """
        return await run_reply(self, inputs, structured_schema, checkpoint)

    def reply_stream(
        self,
        inputs: Msg | list[Msg] | ResumeEvent | None = None,
        *,
        structured_schema: type[BaseModel] | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the loop, yielding every event (see `tether.event` for their order).

        Stop early by closing it (`contextlib.aclosing`): tools stop, the state settles.
        `checkpoint` is awaited at every save point, as in `reply`.
        """
        return stream_reply(self, inputs, structured_schema, checkpoint, every_event=True)

    async def observe(self, msgs: Msg | list[Msg]) -> None:
        """Add messages to the context without reasoning (closing a reply left unfinished)."""
        await observe_messages(self, msgs)

    async def compress_context(
        self, context_config: ContextConfig | None = None
    ) -> AgentEvent | None:
        """Compress the context now.

        Raises `ContextTooLargeError` (a `RuntimeError`) when the system prompt alone
        passes the threshold.
        """
        return await compress_now(self, context_config or self.context_config)

    async def toolkit_view(
        self,
        state: AgentState,
        structured_model: type[BaseModel] | None,
        *,
        with_prompt: bool = True,
    ) -> ToolkitView:
        """The tools of one step, plus the per-reply structured-output tool if asked for."""
        return await reply_view(self.toolkit, state, structured_model, with_prompt=with_prompt)

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        input_model: type[BaseModel] | None = None,
        share_context: bool = False,
        max_iters: int | None = None,
        max_depth: int = MAX_DEPTH,
        permission_mode: PermissionMode | str | None = None,
        concurrency_safe: bool = True,
    ) -> AgentTool:
        """This agent as a tool of another: a sub-agent.

        The parent's model calls it with a task; this agent runs its own loop on its own
        state (nested in the parent's state: one checkpoint covers both) and its final
        message (or structured answer, as JSON) is the tool's result. Its events reach the
        parent's stream as `SubAgentEvent`s; a call of its that asks the user pauses the
        parent (ids `parent_call/child_call`), and the parent's resume reaches it.

        Args:
            name: The tool's name (default: the agent's name).
            description: What the parent's model reads (default: from the system prompt).
            input_model: The arguments (default: one `task` string); any other model's
                JSON is the task text.
            share_context: Start from the parent's context (default: the task alone).
            max_iters: This sub-agent's `ReActConfig.max_iters` (default: its own).
            max_depth: How deep sub-agents may nest below the root (SubAgentDepthError).
            permission_mode: Its mode (default: its state's, else the parent's); never
                wider than the parent's (SubAgentPermissionError).
            concurrency_safe: Several calls in one batch run at once.
        """
        return AgentTool(
            self,
            name=name,
            description=description,
            input_model=input_model,
            share_context=share_context,
            max_iters=max_iters,
            max_depth=max_depth,
            permission_mode=permission_mode,
            concurrency_safe=concurrency_safe,
        )

    def __repr__(self) -> str:
        return f"<Agent {self.name!r} model={self.model.model_name!r}>"
