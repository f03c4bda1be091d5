"""Sub-agents over AG-UI: a child's `SubAgentEvent`s as AG-UI's own subagent events.

Each invocation (a parent's call of a sub-agent, in one reply) is one `subagentRunId`,
`<reply id>:<call path>`, the same in every run of the thread that continues it. It opens
with `SUBAGENT_STARTED` (name, `parentToolCallId`, `parentSubagentRunId` for a grandchild)
the first time a run streams anything of it; its text, thinking and tool events carry its
`subagentRunId` (its tool calls' ids qualified by the call path, as in its interrupts);
it closes with `SUBAGENT_FINISHED` (success with its answer, or `suspended` with the
interrupts it raised itself) or `SUBAGENT_ERROR` (its call ended with an error result).
"""

from __future__ import annotations

from ag_ui.core import (
    BaseEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentFinishedSuspendedOutcome,
    SubagentStartedEvent,
)

from tether.app.server._agui_blocks import BlockTranslator
from tether.event import (
    ErrorEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    SubAgentEvent,
    ToolResultEndEvent,
)
from tether.message import ToolCallBlock, ToolResultState

__all__ = ["Subagents", "run_id_of"]

Path = tuple[str, ...]
_Outcome = SubagentFinishedSuccessOutcome | SubagentFinishedSuspendedOutcome | None


def run_id_of(reply_id: str, path: Path) -> str:
    """The `subagentRunId` of the invocation started by the calls `path` in reply `reply_id`."""
    return f"{reply_id}:{'/'.join(path)}"


class Subagents:
    """The sub-agent invocations of one AG-UI run: which are open, and their translators."""

    def __init__(self) -> None:
        self._open: dict[Path, BlockTranslator] = {}
        self._closed: set[Path] = set()

    def translate(self, event: SubAgentEvent) -> list[BaseEvent]:
        """The AG-UI events for one sub-agent event (starting its invocation if need be)."""
        path = tuple(event.call_path)
        if path in self._closed:  # a second pause event of a suspended child: said already
            return []
        out = self._start(event.reply_id, path, event.agent_path)
        inner = event.event
        match inner:
            case ReplyEndEvent():
                text = inner.msg.get_text_content()
                return [*out, self._finish(path, SubagentFinishedSuccessOutcome(), text)]
            case RequireUserConfirmEvent() | RequireExternalExecutionEvent():
                own = _own_interrupts(inner, path)
                outcome = SubagentFinishedSuspendedOutcome(interrupt_ids=own)
                return [*out, *self._close_below(path, "suspended"), self._finish(path, outcome)]
            case ErrorEvent():
                return [*out, self._error(path, inner.message, inner.error_type)]
            case ToolResultEndEvent():
                ended = self._ended_call(path, inner)
                return [*out, *ended, *self._open[path].translate(inner)]
        return [*out, *self._open[path].translate(inner)]

    def call_ended(self, result: ToolResultEndEvent) -> list[BaseEvent]:
        """Close the invocation a parent's call ran, if still open (its child raised)."""
        return self._ended_call((), result)

    def close_all(self, how: str) -> list[BaseEvent]:
        """Close every open invocation before the run ends (`suspended` or `error`)."""
        return self._close_below((), how)

    def _start(self, reply_id: str, path: Path, names: list[str]) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        for depth in range(1, len(path) + 1):
            prefix = path[:depth]
            if prefix in self._open or prefix in self._closed:
                continue
            run_id = run_id_of(reply_id, prefix)
            parent = run_id_of(reply_id, prefix[:-1]) if depth > 1 else None
            self._open[prefix] = BlockTranslator(run_id, "/".join(prefix) + "/")
            out.append(
                SubagentStartedEvent(
                    subagent_run_id=run_id,
                    name=names[depth - 1],
                    parent_subagent_run_id=parent,
                    parent_tool_call_id="/".join(prefix),
                )
            )
        return out

    def _ended_call(self, path: Path, inner: ToolResultEndEvent) -> list[BaseEvent]:
        child = (*path, inner.tool_result.id)
        if child not in self._open:
            return []
        result = inner.tool_result
        if result.state in (ToolResultState.ERROR, ToolResultState.INTERRUPTED):
            return [*self._close_below(child, "error"), self._error(child, result.get_text())]
        return [*self._close_below(child, "error"), self._finish(child, None, None)]

    def _close_below(self, path: Path, how: str) -> list[BaseEvent]:
        """Close the open invocations strictly below `path`, deepest first."""
        below = [p for p in self._open if len(p) > len(path) and p[: len(path)] == path]
        out: list[BaseEvent] = []
        for inner in sorted(below, key=len, reverse=True):
            if how == "suspended":
                out.append(self._finish(inner, SubagentFinishedSuspendedOutcome()))
            else:
                out.append(self._error(inner, "the run ended before this sub-agent did"))
        return out

    def _finish(self, path: Path, outcome: _Outcome, result: str | None = None) -> BaseEvent:
        translator = self._open.pop(path)
        self._closed.add(path)
        run_id = translator.subagent_run_id
        assert run_id is not None
        return SubagentFinishedEvent(subagent_run_id=run_id, outcome=outcome, result=result)

    def _error(self, path: Path, message: str, code: str | None = None) -> BaseEvent:
        translator = self._open.pop(path)
        self._closed.add(path)
        run_id = translator.subagent_run_id
        assert run_id is not None
        return SubagentErrorEvent(subagent_run_id=run_id, message=message, code=code)


def _own_interrupts(
    pause: RequireUserConfirmEvent | RequireExternalExecutionEvent, path: Path
) -> list[str]:
    """The interrupt ids (qualified) of the calls a child's pause asks about itself."""
    if not isinstance(pause, RequireUserConfirmEvent):
        return []
    return [_qualified(path, call) for call in pause.tool_calls if not _nested(call)]


def _nested(call: ToolCallBlock) -> bool:
    return bool(call.metadata.get("agent_path"))


def _qualified(path: Path, call: ToolCallBlock) -> str:
    return "/".join((*path, call.id))
