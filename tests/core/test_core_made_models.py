"""Tool results made from plain values equal the ones validation builds."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tether.message import ToolCallBlock, ToolResultBlock, ToolResultState
from tether.tool import error_result, to_result

_CALL = ToolCallBlock(id="c1", name="add", input="{}")


def _same(built: BaseModel, validated: BaseModel, *, skip: tuple[str, ...] = ()) -> None:
    assert type(built) is type(validated)
    mine = {k: v for k, v in built.__dict__.items() if k not in skip}
    theirs = {k: v for k, v in validated.__dict__.items() if k not in skip}
    assert list(mine) == list(theirs)  # same fields, in the same order
    assert mine == theirs
    assert {type(v) for v in mine.values()} == {type(v) for v in theirs.values()}
    assert built.model_fields_set == validated.model_fields_set
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__
    if not skip:
        assert built.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("output", ["3", "", 7])
def test_tool_results_equal_validated_ones(output: Any) -> None:
    _same(to_result(_CALL, output), ToolResultBlock(id="c1", name="add", output=str(output)))


@pytest.mark.parametrize("state", list(ToolResultState))
def test_error_results_equal_validated_ones(state: ToolResultState) -> None:
    validated = ToolResultBlock(id="c1", name="add", output="bad", state=state)
    _same(error_result(_CALL, "bad", state), validated)
    _same(
        error_result(_CALL, "bad"),
        ToolResultBlock(id="c1", name="add", output="bad", state="error"),
    )


def test_values_validation_would_change_are_validated() -> None:
    class Text(str):
        pass

    result = to_result(_CALL, Text("3"))
    assert type(result.output) is str  # validation turned it into a plain str
    call = ToolCallBlock(id="c1", name="add")
    call.__dict__["name"] = Text("add")  # as if set without validation
    assert type(error_result(call, "x").name) is str
    with pytest.raises(ValueError):
        error_result(_CALL, 5)  # type: ignore[arg-type]  # validated: not a str
