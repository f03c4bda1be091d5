"""`may_need_compressing`: the loop's O(1) pre-check agrees with `compress_context`."""

from __future__ import annotations

import pytest
from test_context_compress import state_with, summary_model

from tether.context import CompressionRequest, ContextConfig, compress_context
from tether.context._compress import may_need_compressing
from tether.errors import ContextTooLargeError
from tether.message import ChatUsage

TOOLS = [{"name": "look", "description": "Look something up. " * 20, "parameters": {}}]


@pytest.mark.parametrize("anchored", [False, True])
@pytest.mark.parametrize("tools", [[], TOOLS])
async def test_the_precheck_says_no_only_when_compressing_does_nothing(
    anchored: bool, tools: list[dict[str, object]]
) -> None:
    answers = []
    for length in range(200, 3_000, 50):  # the threshold sweeps across the context's size
        state = state_with(4)
        if anchored:
            state.record_usage(ChatUsage(input_tokens=1_000, output_tokens=10))
        model, config = summary_model(1, length=length), ContextConfig()
        prompt = "You help. " * 10
        maybe = may_need_compressing(state, model, config, prompt, tools)
        request = CompressionRequest(
            state=state, model=model, config=config, offloader=None,
            system_prompt=prompt, reply_id="current", tools=tools,
        )  # fmt: skip
        try:
            acted = await compress_context(request) is not None
        except ContextTooLargeError:
            acted = True
        assert maybe or not acted, f"context_length {length}: the precheck skipped a compression"
        answers.append(maybe)
    assert True in answers and False in answers  # both sides of the threshold were seen
