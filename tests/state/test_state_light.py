"""Models kept in a state share their class's fields-set; they behave as before."""

from __future__ import annotations

import copy
import pickle
import tracemalloc

from tether.message import AssistantMsg, ChatUsage, ToolCallBlock, ToolCallState, UserMsg
from tether.state import AgentState


def _kept() -> tuple[AgentState, AssistantMsg, ToolCallBlock]:
    state = AgentState()
    reply = AssistantMsg("a", [])
    state.add_message(reply)
    call = ToolCallBlock(id="c", name="t")
    reply.content.append(call)
    state.note_blocks([call])
    return state, reply, call


def test_kept_models_share_one_fields_set_per_class() -> None:
    state, reply, call = _kept()
    other = AgentState()
    other.add_message(UserMsg("u", "x"))
    assert state.__pydantic_fields_set__ is other.__pydantic_fields_set__
    assert call.model_fields_set == set(ToolCallBlock.model_fields)
    assert reply.model_fields_set == set(AssistantMsg.model_fields)


def test_a_kept_model_can_still_be_assigned_copied_and_pickled() -> None:
    state, reply, call = _kept()
    call.state = ToolCallState.FINISHED
    assert call.state is ToolCallState.FINISHED
    changed = call.model_copy(update={"name": "u"})
    assert changed.name == "u" and call.name == "t"
    assert copy.deepcopy(reply) == reply
    assert pickle.loads(pickle.dumps(state)) == state
    assert AgentState.model_validate_json(state.model_dump_json()) == state
    fresh = ToolCallBlock(id="c", name="t")
    assert fresh.model_fields_set == {"id", "name"}  # only kept models change


def test_usage_recorded_in_a_state_is_kept_light() -> None:
    state = AgentState()
    state.record_usage(ChatUsage(input_tokens=3))
    assert state.usage.model_fields_set == set(ChatUsage.model_fields)
    assert state.usage.input_tokens == 3


def test_a_kept_message_costs_less_memory() -> None:
    def traced(keep: bool) -> int:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        states = []
        for _ in range(200):
            state = AgentState()
            msg = AssistantMsg("a", [ToolCallBlock(id="c", name="t")])
            if keep:
                state.add_message(msg)
            else:
                state.context.append(msg)
            states.append(state)
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return used

    traced(True)  # warm up
    assert traced(True) < traced(False) - 200 * 2 * 150  # the message's and the block's sets
