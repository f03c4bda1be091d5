"""Split tether messages into the turns chat APIs want.

One assistant `Msg` holds a whole reply: several model steps, each made of thinking,
text and tool calls, followed by the results of those calls. APIs want instead an
assistant turn per step, then the tool results, then the next assistant turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.message import (
    ContentBlock,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from tether.model._types import ChatRequest, NamedToolChoice

__all__ = [
    "OPENING_TEXT",
    "Turn",
    "append_hint",
    "data_url",
    "forced_tool_reminder",
    "is_forced",
    "parse_arguments",
    "sent_choice",
    "split_turns",
    "tool_result_data",
    "tool_result_text",
]

TurnRole = Literal["system", "user", "assistant", "tool"]

_MISSING_RESULT = "[no result: the tool call was interrupted before it finished]"


@dataclass(slots=True)
class Turn:
    """One API-level message: a role and the blocks it carries, in order.

    `system` and `user` turns hold text, data and hint blocks; `assistant` turns hold one
    model step (thinking, text, tool calls); `tool` turns hold the results of a step.
    """

    role: TurnRole
    blocks: list[ContentBlock] = field(default_factory=list)

    @property
    def calls(self) -> list[ToolCallBlock]:
        """The tool calls of an assistant turn."""
        return [b for b in self.blocks if isinstance(b, ToolCallBlock)]

    @property
    def results(self) -> list[ToolResultBlock]:
        """The tool results of a tool turn."""
        return [b for b in self.blocks if isinstance(b, ToolResultBlock)]

    def text(self, separator: str = "\n") -> str:
        """The text and hint blocks joined."""
        return separator.join(
            b.text if isinstance(b, TextBlock) else b.hint
            for b in self.blocks
            if isinstance(b, TextBlock | HintBlock)
        )


class _Splitter:
    def __init__(self) -> None:
        self.turns: list[Turn] = []

    def _current(self, role: TurnRole) -> Turn:
        if self.turns and self.turns[-1].role == role:
            return self.turns[-1]
        turn = Turn(role)
        self.turns.append(turn)
        return turn

    def add(self, msg: Msg) -> None:
        for block in msg.content:
            if isinstance(block, ToolResultBlock):
                self._result(block)
            elif isinstance(block, HintBlock) or msg.role != "assistant":
                if isinstance(block, ThinkingBlock | ToolCallBlock):
                    continue  # only an assistant can think or call tools
                role: TurnRole = "system" if msg.role == "system" else "user"
                self._current(role).blocks.append(block)
            else:
                self._current("assistant").blocks.append(block)

    def _result(self, block: ToolResultBlock) -> None:
        self._current("tool").blocks.append(block)

    def finish(self) -> list[Turn]:
        self._add_missing_results()
        return self.turns

    def _add_missing_results(self) -> None:
        """Add placeholder results for calls whose result never came."""
        fixed: list[Turn] = []
        for i, turn in enumerate(self.turns):
            fixed.append(turn)
            if turn.role != "assistant" or not turn.calls:
                continue
            following = self.turns[i + 1] if i + 1 < len(self.turns) else None
            answered = {r.id for r in following.results} if following is not None else set()
            missing = [
                ToolResultBlock(
                    id=c.id, name=c.name, output=_MISSING_RESULT, state=ToolResultState.INTERRUPTED
                )
                for c in turn.calls
                if c.id not in answered
            ]
            if not missing:
                continue
            if following is not None and following.role == "tool":
                following.blocks.extend(missing)
            else:
                fixed.append(Turn("tool", list(missing)))
        self.turns = fixed


def split_turns(messages: list[Msg]) -> list[Turn]:
    """The turns for `messages`: system first (if any), then user/assistant/tool turns.

    Every tool call gets a result turn (a placeholder if its result is missing), hints
    become user text, and consecutive blocks of one role merge into one turn.
    """
    splitter = _Splitter()
    for msg in messages:
        splitter.add(msg)
    return splitter.finish()


OPENING_TEXT = "(The conversation so far follows.)"
"""A user turn put first where a provider rejects a conversation that starts otherwise
(Anthropic, Gemini): after `observe(AssistantMsg(...))`, or a hand-built context."""


def forced_tool_reminder(choice: NamedToolChoice | str) -> str:
    """The hint sent when a provider cannot force a tool call itself."""
    if isinstance(choice, NamedToolChoice):
        return f"Reply now by calling the tool `{choice.name}`; do not answer with plain text."
    return "Reply now by calling one of the available tools; do not answer with plain text."


def sent_choice(choice: NamedToolChoice | str, names: Any) -> NamedToolChoice | str:
    """`choice` with the tool's name as the request sends it (`names`: a `ToolNames`)."""
    return (
        NamedToolChoice(names.name(choice.name)) if isinstance(choice, NamedToolChoice) else choice
    )


def append_hint(turns: list[Turn], text: str) -> None:
    """Add guidance as user text at the end of the conversation."""
    if turns and turns[-1].role == "user":
        turns[-1].blocks.append(HintBlock(hint=text))
    else:
        turns.append(Turn("user", [HintBlock(hint=text)]))


def is_forced(request: ChatRequest) -> bool:
    """Whether the request forces a tool call."""
    return bool(request.tools) and (
        request.tool_choice == "required" or isinstance(request.tool_choice, NamedToolChoice)
    )


def tool_result_text(result: ToolResultBlock) -> str:
    """The text of a tool result (an error result says so)."""
    text = result.get_text()
    if result.state is ToolResultState.ERROR and not text.lower().startswith("error"):
        text = f"Error: {text}"
    elif result.state in (ToolResultState.DENIED, ToolResultState.INTERRUPTED) and not text:
        text = f"[{result.state.value}]"
    return text


def tool_result_data(result: ToolResultBlock) -> list[DataBlock]:
    """The data blocks (images) of a tool result."""
    if isinstance(result.output, str):
        return []
    return [b for b in result.output if isinstance(b, DataBlock)]


def data_url(block: DataBlock) -> str:
    """A URL for the data: the source URL, or a `data:` URL for inline bytes."""
    source = block.source
    if source.type == "url":
        return source.url
    return f"data:{source.media_type};base64,{source.data}"


def parse_arguments(text: str) -> dict[str, Any]:
    """A tool call's JSON arguments as a dict (`{}` when they are not a JSON object)."""
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
