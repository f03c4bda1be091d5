"""A reply's `input` of the wrong shape is one error that shows the right shapes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether.app.server._bodies import ReplyRequest


@pytest.mark.parametrize(
    ("value", "said"),
    [("hi", "got str 'hi'"), (42, "got int 42"), ({"content": "hi"}, "keys ['content']")],
)
def test_a_wrong_input_shape_is_one_clear_error(value: object, said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ReplyRequest.model_validate({"input": value})
    (error,) = caught.value.errors()
    assert error["loc"] == ("input",)
    assert '`{"role": "user", "content": "hi"}`' in error["msg"] and said in error["msg"]


def test_the_accepted_shapes_still_pass() -> None:
    assert ReplyRequest.model_validate({"input": None}).input is None
    msg = ReplyRequest.model_validate({"input": {"role": "user", "content": "hi"}}).input
    assert msg.get_text_content() == "hi"
