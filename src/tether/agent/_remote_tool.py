"""`A2ATool`: a remote A2A agent run as a tool, its task kept in the parent's state.

The call's record in the parent's `tool_state` (`tether._loop.nested`) holds the remote
task (`"a2a"`: task text, task id, context id). When the remote task asks for input, the
record also holds a small stand-in child state whose reply waits on one `input_required`
call carrying the remote question: the loop pauses the parent with it (id qualified by
the parent's call id) and routes the user's answer back as the record's resume event, as
for a local sub-agent. Running the call again sends that answer on the remote task.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tether._loop import nested
from tether.agent._remote_convert import (
    answer_of,
    answer_parts,
    data_of,
    outbound,
    text_of,
    text_part,
)
from tether.agent._remote_sdk import translated
from tether.agent._subagent import TaskInput
from tether.errors import A2AAuthenticationError
from tether.event import (
    AgentEvent,
    CustomEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireUserConfirmEvent,
    SubAgentEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
)
from tether.message import (
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
    detached,
)
from tether.state import AgentState, ReplyCursor
from tether.tool import ToolBase, ToolContext

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types import Message, Part, StreamResponse, Task

    from tether._loop.run import Run
    from tether.agent._remote import A2AAgent

__all__ = ["QUESTION_TOOL", "A2ATool"]

QUESTION_TOOL = "input_required"
"""The name of the call a remote agent's question pauses the parent with."""
_log = logging.getLogger("tether.agent.a2a")
_WAITING = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED")
_ENDED = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED",
          "TASK_STATE_REJECTED")  # fmt: skip
_CANCEL_TIMEOUT = 10.0


class A2ATool(ToolBase):
    """A tool that hands its task to a remote A2A agent (see `A2AAgent.as_tool`)."""

    nests_agent = True
    is_idempotent = True
    """Running a call again looks at its stored remote task first (sent once, answered
    once): it resumes the task's stream, asks its question again, or reads its result."""

    def __init__(
        self,
        remote: A2AAgent,
        *,
        name: str | None = None,
        description: str | None = None,
        input_model: type[BaseModel] | None = None,
        read_only: bool = False,
        concurrency_safe: bool = True,
    ) -> None:
        self.remote = remote
        self.name = name or remote.name
        self.description = (
            description
            or (
                f"Hand a task to the remote agent {self.name!r} (over A2A) and get its answer. "
                f"{remote.description}"
            ).strip()
        )
        self.input_model = input_model or TaskInput
        self.is_read_only = read_only
        self.is_concurrency_safe = concurrency_safe

    async def child_tools(self, state: AgentState) -> Mapping[str, ToolBase]:
        """A remote agent's tools are its own: none to check a confirmation's rules with."""
        return {}

    async def release(self, record: dict[str, Any]) -> None:
        """The parent was interrupted while the remote task waited: cancel it (best effort)."""
        task_id = record.get("a2a", {}).get("task_id")
        if task_id is None:
            return
        from a2a.types import CancelTaskRequest

        try:
            async with self.remote.connected() as client:
                with translated(self.remote.url):
                    await asyncio.wait_for(
                        client.cancel_task(CancelTaskRequest(id=task_id)), _CANCEL_TIMEOUT
                    )
        except Exception as exc:  # the interruption goes on; the remote task is left
            _log.warning("could not cancel remote task %s of %r: %s", task_id, self.name, exc)

    def _task(self, tool_input: BaseModel) -> str:
        if isinstance(tool_input, TaskInput):
            return tool_input.task
        return tool_input.model_dump_json()

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolResultBlock:
        parent = context.session_state
        run = nested.parent_run(parent) if parent is not None else None
        record: dict[str, Any] | None = context.tool_state.get(context.tool_call_id)
        if record is None:
            task = self._task(tool_input)
            # The remote reply's id (and so the first message's) is the call's: a call run
            # again before its record was saved sends the same message id.
            reply_id = f"{context.reply_id}.{context.tool_call_id}"
            record = {nested.MARK: self.name, "a2a": {"task": task, "reply_id": reply_id}}
            context.tool_state[context.tool_call_id] = record
        exchange = _Exchange(self, context, record, run)
        try:
            async with self.remote.connected() as client:
                with translated(self.remote.url):
                    return await exchange.run(client)
        except BaseException as exc:
            if isinstance(exc, A2AAuthenticationError) and run is not None and not run.failed:
                run.failed, run.failure = True, exc  # no model step can fix the credentials
            if not (run is not None and run.failed):  # the call is answered as failed
                self.forget(context)
            raise

    def finished(self, context: ToolContext, result: ToolResultBlock) -> ToolResultBlock:
        """Forget the call's record (its task ended) and give the result."""
        self.forget(context)
        return result

    def forget(self, context: ToolContext) -> None:
        """Drop the call's record (and the tool's entry, once empty)."""
        context.tool_state.pop(context.tool_call_id, None)
        parent = context.session_state
        if not context.tool_state and parent is not None:
            parent.tool_state.pop(self.name, None)


class _Exchange:
    """One run of a remote call: send (or look again), follow the stream, settle."""

    def __init__(
        self, tool: A2ATool, context: ToolContext, record: dict[str, Any], run: Run | None
    ) -> None:
        self.tool, self.context, self.record, self.parent = tool, context, record, run
        self.info: dict[str, Any] = record["a2a"]
        self.state = ""
        self.status: Message | None = None
        self.artifacts: dict[str, list[Part]] = {}
        self.reply: Message | None = None

    @property
    def reply_id(self) -> str:
        return str(self.info["reply_id"])

    async def run(self, client: Client) -> ToolResultBlock:
        from a2a.types import GetTaskRequest, SendMessageRequest, SubscribeToTaskRequest

        task_id = self.info.get("task_id")
        resume = self.record.get("resume")
        try:
            if task_id is None:
                await self._emit(ReplyStartEvent(reply_id=self.reply_id, name=self.tool.name))
                message = outbound([text_part(self.info["task"])], _message_id(self),
                                   None, self.info.get("context_id"))  # fmt: skip
                await self._follow(client.send_message(SendMessageRequest(message=message)))
            else:
                self._task(await client.get_task(GetTaskRequest(id=task_id)))
                if self.state in _WAITING and resume is not None:
                    parts = answer_parts(answer_of(resume))
                    message = outbound(parts, _message_id(self), task_id, self.info["context_id"])
                    self.status = None
                    await self._follow(client.send_message(SendMessageRequest(message=message)))
                elif self.state not in _WAITING and self.state not in _ENDED:
                    await self._follow(client.subscribe(SubscribeToTaskRequest(id=task_id)))
        except BaseException:  # interrupted, or the stream failed: the remote task stops too
            await self._cancel(client)
            raise
        return await self._settle()

    async def _follow(self, stream: Any) -> None:
        """Read the remote agent's updates, passing them on as nested events."""
        response: StreamResponse
        async for response in stream:
            kind = response.WhichOneof("payload")
            if kind == "task":
                self._task(response.task)
                await self._known()
                await self._status(response.task.status.state, self.status)
            elif kind == "status_update":
                update = response.status_update
                self._ids(update.task_id, update.context_id)
                await self._known()
                await self._status(update.status.state, update.status.message
                                   if update.status.HasField("message") else None)  # fmt: skip
            elif kind == "artifact_update":
                artifact = response.artifact_update.artifact
                self._add(artifact.artifact_id, list(artifact.parts),
                          append=response.artifact_update.append)  # fmt: skip
                await self._text(artifact.artifact_id, text_of(artifact.parts))
            elif kind == "message":  # a direct answer: no task
                self.reply = response.message
                self.state = "TASK_STATE_COMPLETED"
                await self._text(response.message.message_id, text_of(response.message.parts))

    def _add(self, artifact_id: str, new: list[Part], *, append: bool) -> None:
        """Keep an artifact's parts; an appended text chunk continues its last text part."""
        parts = self.artifacts.setdefault(artifact_id, [])
        if not append:
            parts.clear()
        for i, part in enumerate(new):
            if append and i == 0 and parts and part.HasField("text") and parts[-1].HasField("text"):
                parts[-1] = text_part(parts[-1].text + part.text)
            else:
                parts.append(part)

    def _task(self, task: Task) -> None:
        self._ids(task.id, task.context_id)
        self.state = _name(task.status.state)
        self.status = task.status.message if task.status.HasField("message") else None
        for artifact in task.artifacts:
            self.artifacts[artifact.artifact_id] = list(artifact.parts)

    def _ids(self, task_id: str, context_id: str) -> None:
        if task_id and self.info.get("task_id") is None:
            self.info["task_id"], self.info["context_id"] = task_id, context_id

    async def _known(self) -> None:
        """Save the remote task's ids at once: a crash from here on never sends it again."""
        if self.info.get("saved") or self.info.get("task_id") is None:
            return
        self.info["saved"] = True
        run = self.parent
        if run is not None and run.checkpoint is not None:
            await run.save()

    async def _status(self, state: Any, message: Message | None) -> None:
        self.state = _name(state)
        self.status = message  # a status's message is its own: none replaces the last one
        await self._emit(CustomEvent(
            reply_id=self.reply_id,
            name="a2a.status",
            data={"state": _wire(self.state), "task_id": self.info.get("task_id")},
        ))  # fmt: skip
        if message is not None and self.state not in _WAITING:
            await self._text(message.message_id, text_of(message.parts))

    async def _text(self, block_id: str, text: str) -> None:
        if not text:
            return
        rid = self.reply_id
        await self._emit(TextBlockStartEvent(reply_id=rid, block_id=block_id))
        await self._emit(TextBlockDeltaEvent(reply_id=rid, block_id=block_id, delta=text))
        await self._emit(TextBlockEndEvent(reply_id=rid, block_id=block_id))

    async def _emit(self, event: AgentEvent) -> None:
        context = self.context
        if context.emit is None:
            return
        await context.emit(SubAgentEvent(
            reply_id=context.reply_id,
            agent_path=[self.tool.name],
            call_path=[context.tool_call_id],
            event=event,
        ))  # fmt: skip

    async def _cancel(self, client: Client) -> None:
        """Cancel the remote task (best effort: the interruption is what is reported)."""
        from a2a.types import CancelTaskRequest

        task_id = self.info.get("task_id")
        if task_id is None or self.state in _ENDED:
            return
        try:
            await asyncio.wait_for(
                client.cancel_task(CancelTaskRequest(id=task_id)), _CANCEL_TIMEOUT
            )
        except Exception as exc:  # the original failure is what counts
            _log.warning("could not cancel remote task %s: %s", task_id, exc)

    async def _settle(self) -> ToolResultBlock:
        context, tool = self.context, self.tool
        if self.state in _WAITING:
            return await self._pause()
        # The text: the final message's (a direct reply, or the status message the task
        # ended with), else the artifacts'; structured output: the first data part.
        artifacts: list[Part] = [p for ps in self.artifacts.values() for p in ps]
        message = self.reply or self.status
        said = list(message.parts) if message is not None else []
        text = text_of(said) or text_of(artifacts)
        data = data_of(artifacts) or data_of(said)
        if self.state != "TASK_STATE_COMPLETED":
            result = ToolResultBlock(
                id=context.tool_call_id,
                name=tool.name,
                output=f"The remote agent {tool.name!r} ended its task as "
                f"{_wire(self.state)}: {text or 'no message'}",
                state=ToolResultState.ERROR,
            )
            return tool.finished(context, result)
        final = Msg(name=tool.name, role="assistant", content=[TextBlock(text=text)],
                    id=self.reply_id, metadata=self._meta())  # fmt: skip
        if data:
            final.metadata["structured_output"] = data[0]
        await self._emit(ReplyEndEvent(reply_id=self.reply_id, msg=final))
        output = json.dumps(data[0], ensure_ascii=False) if data else text
        result = ToolResultBlock(
            id=context.tool_call_id, name=tool.name, output=output, metadata=self._meta()
        )
        return tool.finished(context, result)

    def _meta(self) -> dict[str, Any]:
        return {
            "a2a": {"task_id": self.info.get("task_id"), "context_id": self.info.get("context_id")},
            "usage": "unknown: a remote A2A agent does not report its usage",
        }

    async def _pause(self) -> ToolResultBlock:
        """Leave a stand-in child state that waits on the remote question; pause the parent."""
        parts = list(self.status.parts) if self.status is not None else []
        question = text_of(parts)
        asked = int(self.info.get("asked", 0)) + 1
        self.info["asked"] = asked
        shown: dict[str, Any] = {
            "question": question or "The remote agent needs input.",
            "task_state": _wire(self.state),
        }
        data = data_of(parts)
        if data:  # e.g. a tether service lists the calls it asks about
            shown["data"] = data[0]
        call = ToolCallBlock(
            id=f"q{asked}",
            name=QUESTION_TOOL,
            input=json.dumps(shown, ensure_ascii=False),
            state=ToolCallState.ASKING,
        )
        state = AgentState()
        state.add_message(UserMsg(name="user", content=self.info["task"]))
        content: list[Any] = [TextBlock(text=question)] if question else []
        state.add_message(
            Msg(name=self.tool.name, role="assistant", content=[*content, call], id=self.reply_id)
        )
        state.reply = ReplyCursor(reply_id=self.reply_id)
        self.record["state"] = state.model_dump(mode="json")
        self.record.pop("resume", None)
        await self._emit(
            RequireUserConfirmEvent(reply_id=self.reply_id, tool_calls=[detached(call)])
        )
        return ToolResultBlock(
            id=self.context.tool_call_id,
            name=self.tool.name,
            output=f"[waiting: remote agent {self.tool.name!r} asked for input]",
            state=ToolResultState.RUNNING,
        )


def _message_id(exchange: _Exchange) -> str:
    """A fresh message id per message sent (kept with the task, for the remote's logs)."""
    sent = int(exchange.info.get("sent", 0)) + 1
    exchange.info["sent"] = sent
    return f"{exchange.reply_id}-{sent}"


def _name(state: Any) -> str:
    from a2a.types import TaskState

    return str(TaskState.Name(state))


def _wire(state: str) -> str:
    """`TASK_STATE_INPUT_REQUIRED` -> `input-required` (the spec's spelling)."""
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")
