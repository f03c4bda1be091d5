"""What `tether._fast` assumes about pydantic holds, and each of its fast paths is taken.

`tether._fast` is the one module allowed to rely on how pydantic (and CPython's `json`)
work inside; its docstring lists the assumptions, numbered as the tests here. Each fast
path checks itself on first use and falls back to the public API if the check fails:
`test_every_fast_path_is_taken` fails then (a pydantic release that changes the internals
shows up here, not as a silent slowdown), which `test_a_forced_fallback_fails_the_check`
proves. `test_no_internals_outside_the_room` keeps the rest of `src/tether` on the public API.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from enum import StrEnum
from importlib.metadata import version
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from tether import _fast
from tether.event import (
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolResultTextDeltaEvent,
    _ends,
    delta_maker,
)
from tether.message import (
    AssistantMsg,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
    detached,
)
from tether.state import AgentState
from tether.state._fastload import _message_reader, check_message_json, fast_validator
from tether.state._json import message_json

SRC = Path(__file__).resolve().parent.parent / "src" / "tether"
DELTAS = (
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolResultTextDeltaEvent,
)


def _state() -> AgentState:
    state = AgentState()
    state.add_message(UserMsg("user", "hi"))
    call = ToolCallBlock(id="c1", name="add", input='{"a": 1}')
    result = ToolResultBlock(id="c1", name="add", output="2")
    state.add_message(AssistantMsg("agent", [call, result, TextBlock(text="2")]))
    return state


def _use_every_fast_path() -> None:
    """Run each fast path once (each checks itself on first use)."""
    for cls in DELTAS:
        delta_maker(cls, "r", "b")("x")
    state = _state()
    for msg in state.context:
        detached(msg)
        for block in msg.content:
            detached(block)
    loaded = AgentState.model_validate_json(state.model_dump_json())
    assert loaded == state
    check_message_json(message_json(state.context[1]))
    _ends.reply_end("r", state.context[1])
    _ends.tool_result_end("r", "c1", ToolResultBlock(id="c1", name="add", output="2"))

    class Fresh(BaseModel):  # a field built now: its schema checks assumption 6 again
        state: Annotated[ToolCallState, _fast.AS_STR] = ToolCallState.RUNNING

    assert Fresh().model_dump_json() == '{"state":"running"}'


EXPECTED = {
    *(f"builder:{cls.__name__}" for cls in DELTAS),
    "builder:ReplyEndEvent",
    "builder:ToolResultEndEvent",
    "detached:UserMsg",
    "detached:AssistantMsg",
    "detached:TextBlock",
    "detached:ToolCallBlock",
    "detached:ToolResultBlock",
    "state reader",
    "message check",
    "json encoder",
    "str enum serialisation",
}


def _assert_all_taken() -> None:
    taken = _fast.taken()
    missing = EXPECTED - taken.keys()
    assert not missing, f"fast paths never checked: {sorted(missing)}"
    fallen = sorted(name for name in EXPECTED if not taken[name])
    assert not fallen, f"fast paths that fell back to the public API: {fallen}"


@pytest.fixture
def fresh() -> Iterator[None]:
    """Each fast path checks itself again (its cached decision is dropped, then restored)."""
    builders = dict(_fast._BUILDS)
    copiers = dict(_fast._COPIERS)
    from tether.event import _deltas

    deltas = dict(_deltas._builders)
    ends = dict(_ends._builds)
    _fast._COPIERS.clear()
    _deltas._builders.clear()
    _ends._builds.clear()
    fast_validator.cache_clear()
    _message_reader.cache_clear()
    try:
        yield
    finally:
        _fast.FORCE_FALLBACK = False
        _fast._BUILDS.update(builders)
        _fast._COPIERS.clear()
        _fast._COPIERS.update(copiers)
        _deltas._builders.clear()
        _deltas._builders.update(deltas)
        _ends._builds.clear()
        _ends._builds.update(ends)
        fast_validator.cache_clear()
        _message_reader.cache_clear()
        _use_every_fast_path()


def test_every_fast_path_is_taken(fresh: None) -> None:
    _use_every_fast_path()
    _assert_all_taken()


def test_a_forced_fallback_fails_the_check(fresh: None) -> None:
    _fast.FORCE_FALLBACK = True
    _use_every_fast_path()  # still correct: the public API does the work
    with pytest.raises(AssertionError, match="fell back"):
        _assert_all_taken()
    assert fast_validator(AgentState) is None
    assert delta_maker(TextBlockDeltaEvent, "r", "b")("x").delta == "x"


def test_the_pinned_range_is_the_tested_one() -> None:
    """pyproject bounds pydantic below the next minor: the internals are checked per release."""
    major, minor = (int(part) for part in version("pydantic").split(".")[:2])
    assert (major, minor) >= (2, 12) and (major, minor) < (2, 15)
    text = (SRC.parent.parent / "pyproject.toml").read_text()
    assert '"pydantic>=2.12,<2.15"' in text


# Assumption 1: a model is its `__dict__` and three slots declared on `BaseModel`.
def test_a_model_is_its_dict_and_three_slots() -> None:
    assert {"__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"} <= set(
        BaseModel.__slots__
    )
    for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__"):
        assert hasattr(BaseModel.__dict__[name], "__set__")
    validated = TextBlock(text="hi", id="b1")
    made = _fast.new_model(TextBlock, dict(validated.__dict__), {"text", "id"})
    assert made == validated and made.model_fields_set == validated.model_fields_set
    assert made.model_dump_json() == validated.model_dump_json()
    assert made.model_extra is None and made.__pydantic_private__ is None


def test_put_is_what_pydantic_assignment_does() -> None:
    for model in (TextBlock(text="a"), AgentState()):
        assert not model.model_config.get("validate_assignment")
    block = TextBlock(text="a")
    _fast.put(block, "text", "b")
    other = TextBlock(text="a")
    other.text = "b"
    assert block.__dict__ == {**other.__dict__, "id": block.id}
    assert block.model_fields_set == other.model_fields_set


# Assumption 2: a pydantic-core model schema over `any` builds from a finished `__dict__`.
@pytest.mark.parametrize("cls", DELTAS)
def test_a_built_delta_is_the_validated_one(cls: type[Any]) -> None:
    made = delta_maker(cls, "r", "b")("x")
    validated = cls(reply_id="r", block_id="b", delta="x")
    assert type(made) is cls and list(made.__dict__) == list(validated.__dict__)
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_dump(exclude={"id", "created_at"}) == validated.model_dump(
        exclude={"id", "created_at"}
    )


def test_the_always_built_ends_are_the_validated_ones() -> None:
    msg = _state().context[1]
    made = _ends.reply_end("r", msg)
    validated = ReplyEndEvent(reply_id="r", msg=msg)
    assert type(made) is ReplyEndEvent and list(made.__dict__) == list(validated.__dict__)
    assert made.msg is msg and made.model_fields_set == validated.model_fields_set


# Assumption 3: the core schema's shape.
def test_core_schemas_are_shaped_as_assumed() -> None:
    schema = _fast.core_schema_of(AgentState)
    assert schema["type"] == "definitions"
    assert "context" in _fast.fields_of(dict(schema["schema"]))
    msg = _fast.core_schema_of(Msg)["schema"]
    while msg["type"] != "model":
        msg = msg["schema"]
    assert {"name", "role", "content", "id"} <= _fast.fields_of(msg).keys()
    with pytest.raises(_fast.SchemaShapeError):
        _fast.fields_of({"type": "str"})


# Assumption 4: a never-built subclass takes the schema it is given.
def test_a_shadow_is_never_built_and_loads_become_real_classes() -> None:
    shadow = _fast.shadow(TextBlock)
    assert shadow is _fast.shadow(TextBlock) and not shadow.__pydantic_complete__
    assert _fast.real_class(shadow) is TextBlock
    loaded = AgentState.model_validate_json(_state().model_dump_json())
    kinds = {type(loaded), *(type(m) for m in loaded.context)}
    kinds |= {type(b) for m in loaded.context for b in m.content}
    assert not any(k.__name__.startswith("_Compact") for k in kinds)


# Assumption 5: CPython's C JSON encoder.
def test_the_json_encoder_writes_what_json_dumps_writes() -> None:
    encode = _fast.json_encoder()
    for value in ({"a": [1, 2.5, None]}, {"é": "ü", "n": True}, {}):
        assert encode(value) == json.dumps(value, ensure_ascii=False)


# Assumption 6: the `str` serializer writes a `StrEnum` member as its value, in Python.
class _Plain(BaseModel):
    call: ToolCallState
    result: ToolResultState


class _AsStr(BaseModel):
    call: Annotated[ToolCallState, _fast.AS_STR]
    result: Annotated[ToolResultState, _fast.AS_STR]


def test_a_str_enum_field_writes_what_the_enum_serializer_writes() -> None:
    for call in ToolCallState:
        for result in ToolResultState:
            plain, fast = _Plain(call=call, result=result), _AsStr(call=call, result=result)
            assert fast.model_dump_json() == plain.model_dump_json()
            dumped = fast.model_dump(mode="json")
            assert dumped == plain.model_dump(mode="json") and type(dumped["call"]) is str
            assert fast.model_dump() == plain.model_dump()  # the members, in Python mode
            assert type(fast.model_dump()["call"]) is ToolCallState
            assert _AsStr.model_validate_json(fast.model_dump_json()) == fast
    assert _AsStr.model_json_schema() == {
        **_Plain.model_json_schema(),
        "title": "_AsStr",
    }


def _python_calls(run: Any, *args: Any) -> list[str]:
    """The Python functions `run(*args)` calls (a serializer that calls none stays in Rust)."""
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        run(*args)
    finally:
        sys.setprofile(None)
    return called


def test_event_types_and_block_states_are_written_without_python() -> None:
    call = ToolCallBlock(id="c1", name="add", input="{}", state=ToolCallState.FINISHED)
    result = ToolResultBlock(id="c1", name="add", output="2", state=ToolResultState.ERROR)
    event = ReplyStartEvent(reply_id="r", name="agent")
    for model in (call, result, event):
        serializer = type(model).__pydantic_serializer__
        assert _python_calls(serializer.to_json, model) == []
    assert b'"state":"finished"' in type(call).__pydantic_serializer__.to_json(call)

    class Slow(StrEnum):  # what the enum serializer does: it asks the member for its value
        A = "a"

    class WithEnum(BaseModel):
        kind: Slow = Slow.A

    plain = WithEnum()
    assert _python_calls(WithEnum.__pydantic_serializer__.to_json, plain) != []


def test_the_detached_copy_is_a_deep_copy() -> None:
    msg = _state().context[1]
    copy = detached(msg)
    assert copy == msg.model_copy(deep=True) and copy.model_fields_set == msg.model_fields_set
    assert copy.content is not msg.content and copy.content[0] is not msg.content[0]
    assert copy.metadata is not msg.metadata


# The room: nowhere else relies on pydantic's (or CPython's json's) internals.
BANNED = {
    "reads pydantic's slot descriptors": re.compile(r"BaseModel\.__dict__\["),
    "writes a pydantic slot": re.compile(
        r"\.__pydantic_\w+__\s*=[^=]|setattr\([^)]*[\"']__pydantic_\w+__[\"']"
        r"|__pydantic_\w+__\.(add|update|clear|discard|pop|remove)\("
        r"|__pydantic_\w+__\[[^]]*\]\s*=[^=]"
    ),
    "uses a core schema": re.compile(r"__pydantic_core_schema__"),
    "swaps a class": re.compile(r"\.__class__\s*=[^=]|[\"']__class__[\"']"),
    "uses json's private encoder": re.compile(r"c_make_encoder"),
}
ALLOWED = {
    # a module's class (for a callable package), not a model's
    ("tool/__init__.py", "sys.modules[__name__].__class__ = _ToolPackage"),
}


def test_no_internals_outside_the_room() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        if where == "_fast.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for what, pattern in BANNED.items():
                if pattern.search(line) and (where, line.strip()) not in ALLOWED:
                    found.append(f"{where}:{number}: {what}: {line.strip()}")
    assert not found, "use tether._fast (or pydantic's public API):\n" + "\n".join(found)
