"""`AgentState`: everything that changes while an agent works, as one JSON-safe model."""

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_serializer,
    model_serializer,
)

from tether._ids import new_id
from tether.message import (
    ChatUsage,
    ContentBlock,
    Msg,
    estimate_block_tokens,
    estimate_msg_tokens,
    estimate_text_tokens,
)
from tether.permission import PermissionContext
from tether.state._fastload import fast_validator
from tether.state._json import compact_context, compact_model, context_json
from tether.state._light import lighten
from tether.state._load import load_checked, parse_json
from tether.state._migrate import SCHEMA_VERSION
from tether.state._pending import PendingReply, pending_of

__all__ = [
    "SCHEMA_VERSION",
    "AgentState",
    "Checkpoint",
    "ReplyCursor",
]  # SCHEMA_VERSION: from _migrate


_ALWAYS_WRITTEN = frozenset({"schema_version", "session_id"})
_CONTEXT: set[str] = {"context"}  # an exclude set (never changed)


class ReplyCursor(BaseModel):
    """Where the reply in progress stands."""

    model_config = ConfigDict(
        defer_build=True, extra="forbid", validate_by_name=True, validate_by_alias=True
    )

    reply_id: str
    """The reply's id (also the id of its assistant `Msg` in the context)."""
    iteration: int = 0
    """Reasoning steps taken so far."""
    finished: bool = False
    """The last reasoning step gave the final answer."""
    interrupted: bool = False
    """The reply was aborted by a `UserInterruptEvent` or a rejection that ends it."""
    structured_json_schema: dict[str, Any] | None = Field(
        default=None,
        validation_alias=AliasChoices("structured_json_schema", "structured_schema"),
    )
    """The JSON schema the final answer must follow, if the caller asked for one (the
    schema of the `structured_schema` model passed to `Agent.reply`). `structured_schema=`
    is accepted as the old name of this field."""
    structured_reminder: bool = False
    """The model answered without the structured tool; the next step must call it."""

    if TYPE_CHECKING:  # the field's old name is accepted too (a validation alias)

        def __init__(
            self,
            *,
            reply_id: str,
            iteration: int = 0,
            finished: bool = False,
            interrupted: bool = False,
            structured_json_schema: dict[str, Any] | None = None,
            structured_schema: dict[str, Any] | None = None,
            structured_reminder: bool = False,
        ) -> None: ...

    @property
    def structured_schema(self) -> dict[str, Any] | None:
        """Deprecated: the old name of `structured_json_schema` (read-only)."""
        return self.structured_json_schema


class AgentState(BaseModel):
    """The whole progress of one session: context, rules, tool state, the reply cursor.

    It round-trips through JSON losslessly; a process that loads it continues exactly
    where the saving process stopped. A state is trusted server data: it carries the
    permission mode, the rules and the calls' states, so never accept one from a client.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """Shape version; loading rejects versions this tether does not know."""
    session_id: str = Field(default_factory=lambda _data: new_id())  # not compared on dump
    """A stable id of this session's state (names its offloaded files)."""
    context: list[Msg] = Field(default_factory=list)
    """The messages the model sees (after compression)."""
    summary: str | None = None
    """The summary of compressed older context, if any."""
    permission_context: PermissionContext = Field(default_factory=PermissionContext)
    """Mode, work dirs and rules (including rules the user accepted)."""
    tool_state: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-tool state that must survive (e.g. Bash's working directory)."""
    plugins: dict[str, int] = Field(default_factory=dict)
    """Active plugins: module name → replies left awake."""
    reply: ReplyCursor | None = None
    """The reply in progress, if any."""
    usage: ChatUsage = Field(default_factory=ChatUsage)
    """Tokens spent by every model call of the session."""
    token_anchor: int = 0
    """Tokens of the whole request as last measured: what the provider reported for the
    last call (input + output, so system prompt and tools included), or after a
    compression tether's estimate of the system prompt and tools. 0 while unknown
    (then the context manager adds its own estimate of the prompt)."""
    tokens_since_anchor: int = 0
    """Estimated tokens of the messages added to the context since the anchor."""

    def model_post_init(self, context: Any, /) -> None:
        """Kept for the session's lifetime: the state and its head models are lightened."""
        lighten(self)
        lighten(self.permission_context)
        lighten(self.usage)

    @field_serializer("context", when_used="json")
    def _compact_context(self, context: list[Msg]) -> list[dict[str, Any]]:
        return compact_context(context)

    @field_serializer("permission_context", "usage", "reply", when_used="json")
    def _compact(self, value: BaseModel | None) -> dict[str, Any] | None:
        return None if value is None else compact_model(value)

    @model_serializer(mode="wrap")
    def _leave_out_defaults(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not info.mode_is_json():
            return data
        # Every field but the two below defaults to None, 0 or an empty container; the
        # context goes last, as `model_dump_json` writes it.
        out = {
            k: v
            for k, v in data.items()
            if k in _ALWAYS_WRITTEN or not (v is None or v == 0 or v == {} or v == [])
        }
        if "context" in out:
            out["context"] = out.pop("context")
        return out

    def model_dump_json(self, **kwargs: Any) -> str:
        """The state as compact JSON (schema version 3; the `tether.state` reference).

        Without arguments each message is written by its compiled serialiser in one call
        and the results are joined; arguments (`indent`, `exclude`, ...) take pydantic's
        path, which writes the same form.
        """
        if kwargs:
            return super().model_dump_json(**kwargs)
        head = self.__pydantic_serializer__.to_json(self, exclude=_CONTEXT)
        if not self.context:
            return head.decode()
        return (head[:-1] + b',"context":' + context_json(self.context) + b"}").decode()

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> "AgentState":
        """Validate, migrating older schema versions.

        Raises:
            StateError: the data is not a state this tether can load (bad fields, or
                nesting deeper than a sane bound); `StateVersionError` for an unknown
                schema version.
        """
        parent = super().model_validate
        return load_checked(obj, lambda o: parent(o, *args, **kwargs))

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *args: Any, **kwargs: Any
    ) -> "AgentState":
        """Parse JSON, then load it as `model_validate` does (raises only `StateError`).

        A state of the current schema version is parsed and validated in one compiled
        pass of a schema of the compact form (`_fastload`; its parser refuses nesting
        deeper than 200 levels); anything else (older versions, damaged data) takes the
        checked path, which migrates or explains.
        """
        reader = None if args or kwargs else fast_validator(cls)
        if reader is not None:
            try:
                state = reader.validate_json(json_data)
            except (ValidationError, ValueError, TypeError):
                pass
            else:
                if isinstance(state, AgentState) and state.schema_version == SCHEMA_VERSION:
                    return state
        return cls.model_validate(parse_json(json_data), *args, **kwargs)

    @property
    def estimated_tokens(self) -> int:
        """Context tokens now: the last reported usage plus estimates of what came after."""
        return self.token_anchor + self.tokens_since_anchor

    def tool_state_for(self, tool_name: str) -> dict[str, Any]:
        """The mutable state dict of one tool (created on first use)."""
        return self.tool_state.setdefault(tool_name, {})

    def add_message(self, msg: Msg) -> None:
        """Append a message to the context, keeping the token total current."""
        lighten(msg)
        values = self.__dict__  # no pydantic __setattr__: no assignment is validated
        values["context"].append(msg)
        values["tokens_since_anchor"] += estimate_msg_tokens(msg)

    def note_blocks(self, blocks: Iterable[ContentBlock]) -> None:
        """Account for blocks added to a message already in the context."""
        total = 0
        for block in blocks:
            lighten(block)
            total += estimate_block_tokens(block)
        self.__dict__["tokens_since_anchor"] += total  # the field is in the (shared) fields set

    def note_text_change(self, old: str, new: str) -> None:
        """Account for a text in the context that was replaced by another."""
        self.tokens_since_anchor += estimate_text_tokens(new) - estimate_text_tokens(old)

    def record_usage(self, usage: ChatUsage, *, reanchor: bool = True) -> None:
        """Add a model call's usage to the totals and re-anchor the token count on it."""
        self.usage = self.usage + usage
        lighten(self.usage)
        if reanchor and usage.input_tokens:
            self.token_anchor = usage.input_tokens + usage.output_tokens
            self.tokens_since_anchor = 0

    def replace_context(
        self,
        messages: list[Msg],
        summary: str | None,
        *,
        base_tokens: int = 0,
        message_tokens: int | None = None,
    ) -> None:
        """Swap the context (after compression) and re-anchor the token count.

        `base_tokens` estimates what the request carries besides the messages (system
        prompt with the new summary, tool schemas); `message_tokens` is the messages'
        estimate if the caller already has it (else they are estimated once here).
        """
        self.context = messages
        self.summary = summary
        self.token_anchor = base_tokens
        self.tokens_since_anchor = (
            message_tokens
            if message_tokens is not None
            else sum(estimate_msg_tokens(m) for m in messages)
        )

    @property
    def pending(self) -> PendingReply | None:
        """What the reply in progress waits for (None: no reply in progress)."""
        if self.reply is None:
            return None
        return pending_of(self.reply.reply_id, self.reply_msg())

    def reply_msg(self) -> Msg | None:
        """The assistant message of the reply in progress, if any."""
        values = self.__dict__
        cursor = values["reply"]
        if cursor is None:
            return None
        reply_id: str = cursor.reply_id
        context: list[Msg] = values["context"]
        for msg in reversed(context):
            if msg.id == reply_id:
                return msg
        return None


Checkpoint = Callable[[AgentState], Awaitable[None]]
"""Awaited by the loop at every save point with the state to save (e.g.
`StorageBase.checkpoint(...)`); if it raises, the reply stops before its next side effect."""


@runtime_checkable
class RestoringCheckpoint(Protocol):
    """A checkpoint that can also put a state back as it was at its last successful save.

    When a save point fails, the loop rolls the state back to the last one saved. With a
    plain `Checkpoint` it keeps a copy of the state after every successful save to do so;
    with one of these (`StorageBase.checkpoint(...)`) it asks the checkpoint instead, which
    rebuilds the state from what it stored, and copies nothing at a save point.
    """

    def __call__(self, state: AgentState) -> Awaitable[None]:
        """Save `state` (a save point)."""
        ...

    def restore_last_saved(self, state: AgentState) -> bool:
        """Put `state` (the same object) back as this checkpoint last saved it.

        False if it never saved this object (the loop then keeps the state as it is).
        """
        ...
