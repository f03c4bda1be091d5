"""`Msg` and its role-specific constructors."""

from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tether._fast import set_class
from tether.message._blocks import (
    ContentBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    fresh_id,
    fresh_time,
)
from tether.message._compact import expand_message
from tether.message._usage import ChatUsage
from tether.message._validate import UNSET, check_role_args

__all__ = ["AssistantMsg", "Msg", "Role", "SystemMsg", "UserMsg"]

Role = Literal["user", "assistant", "system"]
_B = TypeVar("_B")


class Msg(BaseModel):
    """A message: who said it, in which role, and its content blocks.

    One reply of an agent is one assistant `Msg` whose id is the reply id; it holds, in
    order, its thinking, text, tool calls and tool results.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str
    """Who wrote it (the agent's or user's name)."""
    role: Role
    """`user`, `assistant` or `system`."""
    content: list[ContentBlock] = Field(default_factory=list)
    """The blocks; a plain string becomes one `TextBlock`."""
    id: str = Field(default_factory=fresh_id)
    """Message id (for a reply: the reply id)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form data (e.g. what a paused reply waits for)."""
    usage: ChatUsage | None = None
    """Tokens the model spent producing this message, if it was produced by one."""
    created_at: str = Field(default_factory=fresh_time)
    """ISO 8601 creation time."""

    # A slot, not a pydantic private attribute: those cost a dict per message, made on
    # every validation; this costs 8 bytes and nothing until the loop sets it.
    # `_json_memo`: the state's JSON of this message and what it was written from (see
    # `tether.state._json.message_json`); never copied.
    __slots__ = ("_json_memo", "_structured_output", "__weakref__")
    if TYPE_CHECKING:
        _structured_output: BaseModel | None
        _json_memo: Any

    @property
    def structured_output(self) -> BaseModel | None:
        """The validated structured answer (an instance of the `structured_schema` class).

        Set on the reply that gave one; `metadata["structured_output"]` holds its JSON.
        Not kept through JSON: a loaded message has only the metadata.
        """
        return getattr(self, "_structured_output", None)

    @model_validator(mode="after")
    def _as_role_class(self) -> "Msg":
        # A `UserMsg` saved as JSON comes back a `UserMsg` (the role classes add no field).
        if type(self) is Msg:
            set_class(self, _ROLE_CLASSES[self.role])
        return self

    @model_validator(mode="before")
    @classmethod
    def _expand_compact(cls, data: Any) -> Any:
        # The state's compact JSON form (`tether.message._compact`): a plain string is one
        # TextBlock whose id is derived from the message's (`<msg id>.0`), a name equal to
        # the role may be left out, a call may carry its result, ... (No `info` argument:
        # it costs every construction; the caller's values are copied where changed.)
        if type(data) is dict and type(data.get("content")) is list and "name" in data:
            for block in data["content"]:
                if type(block) is dict:
                    return expand_message(data, False)
            return data  # blocks given as models (the loop's own calls): nothing to put back
        return expand_message(data, False)

    def __eq__(self, other: object) -> bool:
        # UserMsg/AssistantMsg/SystemMsg are Msg with a fixed role: equal by fields, so a
        # state loaded from JSON (plain Msg) equals the one that was saved.
        if not isinstance(other, Msg):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable model

    def get_text_content(self, separator: str = "\n") -> str | None:
        """The text of all text blocks joined by `separator`, or `None` if there is none."""
        texts = [b.text for b in self.content if isinstance(b, TextBlock)]
        return separator.join(texts) if texts else None

    def get_content_blocks(self, block_type: type[_B]) -> list[_B]:
        """All blocks of one type, in order."""
        return [b for b in self.content if isinstance(b, block_type)]

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        """The tool-call blocks, in order."""
        return [b for b in self.content if isinstance(b, ToolCallBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool-result blocks, in order."""
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    @property
    def thinking(self) -> list[ThinkingBlock]:
        """The thinking blocks, in order."""
        return [b for b in self.content if isinstance(b, ThinkingBlock)]

    def put_tool_result(self, result: ToolResultBlock) -> None:
        """Place a tool result: replace the one with its id, else insert it in call order.

        Results follow the run of tool calls they answer, in the order of those calls,
        whatever order the calls finished in.
        """
        content = self.content
        call_pos = -1
        for i, block in enumerate(content):
            if isinstance(block, ToolResultBlock) and block.id == result.id:
                content[i] = result
                return
            if isinstance(block, ToolCallBlock) and block.id == result.id:
                call_pos = i
        if call_pos < 0:
            content.append(result)
            return
        order: dict[str, int] = {}
        i = call_pos
        while i > 0 and isinstance(content[i - 1], ToolCallBlock):
            i -= 1
        while i < len(content) and isinstance(content[i], ToolCallBlock):
            order[content[i].id] = i
            i += 1
        mine = order[result.id]
        while i < len(content):
            block = content[i]
            if not isinstance(block, ToolResultBlock) or order.get(block.id, -1) > mine:
                break
            i += 1
        content.insert(i, result)


def _role_init(role: Role):  # type: ignore[no-untyped-def]  # returns an __init__
    def __init__(
        self: Msg, name: str = UNSET, content: str | list[Any] = UNSET, **kwargs: Any
    ) -> None:
        check_role_args(type(self).__name__, role, name, content, kwargs.pop("role", UNSET))
        Msg.__init__(self, name=name, role=role, content=content, **kwargs)

    return __init__


class UserMsg(Msg):
    """A message in the user role: `UserMsg(name, content)`."""

    __init__ = _role_init("user")


class AssistantMsg(Msg):
    """A message in the assistant role: `AssistantMsg(name, content)`."""

    __init__ = _role_init("assistant")


class SystemMsg(Msg):
    """A message in the system role: `SystemMsg(name, content)`."""

    __init__ = _role_init("system")


_ROLE_CLASSES: dict[str, type[Msg]] = {
    "user": UserMsg,
    "assistant": AssistantMsg,
    "system": SystemMsg,
}
