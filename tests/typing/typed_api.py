"""Type checks of the public API: run by mypy (`mypy --strict tests/typing`), never executed.

Each `assert_type` pins what a user's type checker sees at an extension point or entry
point; a change to `Any` (or to a wrong type) fails the check.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, assert_type

from pydantic import BaseModel

from tether import Agent, AgentState, Msg, UserMsg
from tether import tool as top_level_tool
from tether.app.storage import SQLiteStorage, StorageCheckpoint
from tether.event import AgentEvent, PauseEvent, pause_events_of
from tether.message import AssistantMsg, ToolCallBlock, ToolResultBlock
from tether.middleware import ActingCall, MiddlewareBase, ModelCall, PermissionCall, ReplyCall
from tether.model import ChatModelBase, ChatRequest, ScriptedChatModel
from tether.permission import PermissionBehavior, PermissionRule
from tether.plugin import Plugin, PluginScheduler
from tether.skill import LocalSkillLoader
from tether.state import Checkpoint, PendingReply, RestoringCheckpoint
from tether.testing import RecordingMiddleware, reply_events, scripted_agent, tool_results
from tether.tool import FunctionTool, ToolBase, ToolContext, Toolkit, ToolSourceBase, tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool(name="sub", is_idempotent=True)
def sub(a: int, b: int) -> int:
    """Subtract."""
    return a - b


@top_level_tool
def mul(a: int, b: int) -> int:
    """Multiply (`from tether import tool` is the decorator too)."""
    return a * b


assert_type(add, FunctionTool)
assert_type(mul, FunctionTool)
assert_type(sub, FunctionTool)


async def entry_points(agent: Agent, storage: SQLiteStorage) -> None:
    msg = await agent.reply(UserMsg("user", "hi"))
    assert_type(msg, Msg)
    assert_type(msg.structured_output, BaseModel | None)
    assert_type(pause_events_of(msg), list[PauseEvent])
    assert_type(agent.reply_stream(None), AsyncIterator[AgentEvent])
    checkpoint = storage.checkpoint("u", "a", "s")
    assert_type(checkpoint, StorageCheckpoint)
    assert_type(checkpoint.restore_last_saved(agent.state), bool)
    saving: Callable[[AgentState], Awaitable[None]] = checkpoint  # a `Checkpoint`
    restoring: RestoringCheckpoint = checkpoint
    await agent.reply(None, checkpoint=saving)
    await agent.reply(None, checkpoint=restoring)
    assert_type(agent.state.pending, PendingReply | None)
    assert_type(agent.model, ChatModelBase)


def call_records(
    reply: ReplyCall, model: ModelCall, acting: ActingCall, check: PermissionCall
) -> None:
    assert_type(reply.agent, Agent)
    assert_type(reply.state, AgentState)
    assert_type(model.request, ChatRequest)
    assert_type(model.model, ChatModelBase)
    assert_type(acting.tool, ToolBase)
    assert_type(acting.tool_call, ToolCallBlock)
    assert_type(check.tool_input, dict[str, Any])


def tool_context(context: ToolContext) -> None:
    assert_type(context.session_state, AgentState | None)


class Source(ToolSourceBase):
    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        return [add]


def checkpoint_alias(save: Checkpoint) -> Callable[[AgentState], Awaitable[None]]:
    return save


class Logs(MiddlewareBase):
    pass


_ = ScriptedChatModel([])


async def testing_helpers() -> None:
    agent = scripted_agent(AssistantMsg("a", "hi"), tools=[add])
    assert_type(agent, Agent)
    events = await reply_events(agent, "hi")
    assert_type(events, list[AgentEvent])
    assert_type(tool_results(events), list[ToolResultBlock])
    recorder = RecordingMiddleware()
    assert_type(recorder.events, list[AgentEvent])


def requests(request: ChatRequest) -> None:
    assert_type(request.structured_json_schema, dict[str, Any] | None)


async def sources(toolkit: Toolkit, state: AgentState, plugin: Plugin) -> None:
    view = await toolkit.view(state)
    assert_type(view.tools, dict[str, ToolBase])
    assert_type(Plugin.scheduler_for([plugin]), PluginScheduler)
    assert_type(LocalSkillLoader("skills").as_plugin(), Plugin)
    assert_type(PermissionRule.parse("Read(src/**)").behavior, PermissionBehavior)
