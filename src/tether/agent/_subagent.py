"""`AgentTool`: an agent run as a tool of another, its state nested in the parent's.

The child runs its own loop on its own `AgentState`, kept in the parent's state as the
call's record (`tether._loop.nested`): every child save point writes the record and
awaits the parent's checkpoint, so one write covers the tree. Its events reach the
parent's stream wrapped in `SubAgentEvent`s; its pauses pause the parent.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from tether._loop import nested
from tether._loop.budget import ITERATIONS, Budget, handing_down, spent_in
from tether.agent._inherit import inherit_permissions
from tether.errors import SubAgentDepthError, SubAgentError, TotalIterationsError
from tether.event import (
    AgentEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    SubAgentEvent,
    event_adapter,
)
from tether.message import ChatUsage, Msg, ToolResultBlock, ToolResultState, UserMsg, detached
from tether.permission import PermissionMode
from tether.state import AgentState, Checkpoint
from tether.tool import ToolBase, ToolContext

if TYPE_CHECKING:
    from tether._loop.run import Run
    from tether.agent._agent import Agent

__all__ = ["MAX_DEPTH", "AgentTool", "TaskInput"]

MAX_DEPTH = 4
"""How deep sub-agents may nest by default (a child is depth 1)."""
_PATH: ContextVar[tuple[str, ...]] = ContextVar("tether_subagent_path", default=())
"""The names of the sub-agents the current task runs inside (outermost first)."""


class TaskInput(BaseModel):
    """The default arguments of a sub-agent's tool."""

    task: str = Field(
        description="The task for the sub-agent, with everything it needs to know: it "
        "sees nothing of this conversation but this text."
    )


class AgentTool(ToolBase):
    """A tool that runs `agent` on the task it is called with (see `Agent.as_tool`)."""

    nests_agent = True
    is_read_only = True
    """Running a child changes nothing by itself: each of its calls is checked under a mode
    no wider than the parent's (so a read-only parent may delegate to read-only work)."""
    is_idempotent = True
    """Running a call again continues its child from the nested state (the child's own
    calls found running are answered as interrupted): nothing runs twice."""

    def __init__(
        self,
        agent: Agent,
        *,
        name: str | None = None,
        description: str | None = None,
        input_model: type[BaseModel] | None = None,
        share_context: bool = False,
        max_iters: int | None = None,
        max_depth: int = MAX_DEPTH,
        permission_mode: PermissionMode | str | None = None,
        concurrency_safe: bool = True,
    ) -> None:
        self.agent = agent
        self.name = name or agent.name
        first = agent.system_prompt.strip().splitlines()[0] if agent.system_prompt.strip() else ""
        self.description = (
            description
            or (
                f"Hand a task to the sub-agent {self.name!r} and get its final answer. {first}"
            ).strip()
        )
        self.input_model = input_model or TaskInput
        self.share_context = share_context
        self.max_iters = max_iters
        self.max_depth = max_depth
        self.permission_mode = PermissionMode(permission_mode) if permission_mode else None
        self.is_concurrency_safe = concurrency_safe

    async def child_tools(self, state: AgentState) -> Mapping[str, ToolBase]:
        """The child's tools for `state` (the loop checks a confirmation's rules with them)."""
        return (await self.agent.toolkit_view(state, None, with_prompt=False)).tools

    def _task(self, tool_input: BaseModel) -> str:
        if isinstance(tool_input, TaskInput):
            return tool_input.task
        return tool_input.model_dump_json()

    def _child(self, state: AgentState) -> Agent:
        child = copy.copy(self.agent)  # the configuration is shared; the state is the call's
        if self.max_iters is not None:
            config = child.react_config.model_copy(update={"max_iters": self.max_iters})
            child.react_config = config
        child.state = state
        return child

    def _fresh(self, parent: AgentState, tool_input: BaseModel) -> tuple[AgentState, Msg]:
        own = self.agent.state.permission_context
        permission = inherit_permissions(parent.permission_context, own, self.name,
                                         self.permission_mode)  # fmt: skip
        state = AgentState(permission_context=permission)
        if self.share_context:
            reply = parent.reply
            for msg in parent.context:
                if reply is None or msg.id != reply.reply_id:
                    state.add_message(detached(msg))
        return state, UserMsg(name="user", content=self._task(tool_input))

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolResultBlock:
        parent = context.session_state
        assert parent is not None, "a sub-agent runs inside a parent's reply"
        run = nested.parent_run(parent)
        path = _PATH.get()
        call_id = context.tool_call_id
        try:
            if len(path) >= self.max_depth:
                raise SubAgentDepthError(
                    f"sub-agent {self.name!r} would run at depth {len(path) + 1} (inside "
                    f"{' > '.join(path)}), past the limit of {self.max_depth}; raise it with "
                    "`as_tool(..., max_depth=...)` or remove the sub-agent tool from the "
                    "deepest agent"
                )
            record: dict[str, Any] | None = context.tool_state.get(call_id)
            inputs: Any = None
            if record is None or "state" not in record:
                state, inputs = self._fresh(parent, tool_input)
                record = {nested.MARK: self.name}
                context.tool_state[call_id] = record
            else:
                state = nested.child_state(record)
                resume = record.get("resume")
                if resume is not None:
                    inputs = event_adapter.validate_python(resume)
                if state.reply is None:  # it finished before its parent saved the result
                    return self._finished(context, parent, _last_answer(state))
        except SubAgentError as exc:
            if run is not None:  # the reply stops with it at its next save point
                run.failed, run.failure = True, exc
            raise
        return await self._run(context, parent, run, record, self._child(state), inputs, path)

    async def _run(
        self,
        context: ToolContext,
        parent: AgentState,
        run: Run | None,
        record: dict[str, Any],
        child: Agent,
        inputs: Any,
        path: tuple[str, ...],
    ) -> ToolResultBlock:
        state = child.state
        before = state.usage

        async def save(saved: AgentState) -> None:
            record["state"] = saved.model_dump(mode="json")
            record.pop("resume", None)
            assert run is not None
            await run.save()

        checkpoint = save if run is not None and run.checkpoint is not None else None
        budget = None
        if run is not None and run.budget is not None:  # the tree's steps are counted
            budget = Budget(spent=spent_in(state), parent=run.budget)
        token = _PATH.set((*path, self.name))
        paused, final = False, None
        try:
            with handing_down(budget):
                if run is not None and not run.observed:  # nobody watches: the lean path
                    final = await child.reply(inputs, checkpoint=checkpoint)
                    paused = bool(final.metadata.get("awaiting"))
                else:
                    paused, final = await self._stream(child, inputs, checkpoint, context)
        except TotalIterationsError as exc:  # the model reads it; the steps stay counted
            context.tool_state.pop(context.tool_call_id, None)
            if not context.tool_state:
                parent.tool_state.pop(self.name, None)
            spent = budget.spent if budget is not None else spent_in(state)
            return _out_of_steps(context, self.name, exc, spent)
        except BaseException as exc:
            if isinstance(exc, SubAgentError) and run is not None and not run.failed:
                run.failed, run.failure = True, exc  # a configuration error stops the tree
            if not (run is not None and run.failed):
                context.tool_state.pop(context.tool_call_id, None)
            raise
        finally:
            _PATH.reset(token)
            _roll_up(parent, _minus(state.usage, before))
        if paused:
            record["state"] = state.model_dump(mode="json")
            record.pop("resume", None)
            return ToolResultBlock(
                id=context.tool_call_id,
                name=self.name,
                output=f"[waiting: sub-agent {self.name!r} paused for input]",
                state=ToolResultState.RUNNING,
            )
        assert final is not None
        result = self._finished(context, parent, final)
        if budget is not None:
            result.metadata[ITERATIONS] = budget.spent
        return result

    async def _stream(
        self, child: Agent, inputs: Any, checkpoint: Checkpoint | None, context: ToolContext
    ) -> tuple[bool, Msg | None]:
        """Run the child, passing its events on to the parent's stream (wrapped)."""
        paused, final = False, None
        stream = child.reply_stream(inputs, checkpoint=checkpoint)
        try:
            async for event in stream:
                if isinstance(event, RequireUserConfirmEvent | RequireExternalExecutionEvent):
                    paused = True
                elif isinstance(event, ReplyEndEvent):
                    final = event.msg
                if context.emit is not None:
                    await context.emit(_wrapped(event, self.name, context))
        finally:
            aclose = getattr(stream, "aclose", None)  # stopped: the child stops now
            if aclose is not None:
                await aclose()
        return paused, final

    def _finished(self, context: ToolContext, parent: AgentState, final: Msg) -> ToolResultBlock:
        context.tool_state.pop(context.tool_call_id, None)
        if not context.tool_state:
            parent.tool_state.pop(self.name, None)
        structured = final.metadata.get("structured_output")
        text = (
            json.dumps(structured, ensure_ascii=False)
            if structured is not None
            else final.get_text_content() or ""
        )
        return ToolResultBlock(id=context.tool_call_id, name=self.name, output=text)


def _wrapped(event: AgentEvent, name: str, context: ToolContext) -> SubAgentEvent:
    if isinstance(event, SubAgentEvent):
        return SubAgentEvent(
            reply_id=context.reply_id,
            agent_path=[name, *event.agent_path],
            call_path=[context.tool_call_id, *event.call_path],
            event=event.event,
        )
    return SubAgentEvent(
        reply_id=context.reply_id,
        agent_path=[name],
        call_path=[context.tool_call_id],
        event=event,
    )


def _out_of_steps(
    context: ToolContext, name: str, exc: TotalIterationsError, spent: int
) -> ToolResultBlock:
    return ToolResultBlock(
        id=context.tool_call_id,
        name=name,
        output=str(exc),
        state=ToolResultState.ERROR,
        metadata={ITERATIONS: spent},
    )


def _last_answer(state: AgentState) -> Msg:
    for msg in reversed(state.context):
        if msg.role == "assistant":
            return msg
    return Msg(name="agent", role="assistant", content="")


def _minus(after: ChatUsage, before: ChatUsage) -> ChatUsage:
    cost = None
    if after.cost is not None:
        cost = after.cost - (before.cost or 0.0)
    return ChatUsage(
        input_tokens=after.input_tokens - before.input_tokens,
        output_tokens=after.output_tokens - before.output_tokens,
        cache_read_tokens=after.cache_read_tokens - before.cache_read_tokens,
        cache_write_tokens=after.cache_write_tokens - before.cache_write_tokens,
        reasoning_tokens=after.reasoning_tokens - before.reasoning_tokens,
        cost=cost,
    )


def _roll_up(parent: AgentState, spent: ChatUsage) -> None:
    """Add a child's usage to the parent's totals and to the parent's reply message."""
    if not (spent.input_tokens or spent.output_tokens or spent.cost):
        return
    parent.record_usage(spent, reanchor=False)
    msg = parent.reply_msg()
    if msg is not None:
        msg.usage = spent if msg.usage is None else msg.usage + spent
