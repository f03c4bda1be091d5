"""The price table, `cost()`, and the cost carried on usage, events and the state's totals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tether.agent import Agent
from tether.event import ModelCallEndEvent
from tether.message import AssistantMsg, ChatUsage, UserMsg
from tether.model import (
    DEFAULT_PRICES,
    ModelPrice,
    ScriptedChatModel,
    cost,
    price_for,
    reset_prices,
    set_price,
)
from tether.state import AgentState


@pytest.fixture
def price_override() -> Iterator[None]:
    yield
    reset_prices()
    assert price_for("gpt-4o") is DEFAULT_PRICES["gpt-4o"] and price_for("scripted") is None


def test_every_shipped_price_is_dated_and_the_five_defaults_are_there() -> None:
    assert set(DEFAULT_PRICES) == {
        "gpt-4o",
        "claude-sonnet-4-6",
        "gemini-2.5-flash",
        "qwen-max",
        "llama3.1",
    }
    for price in DEFAULT_PRICES.values():
        assert len(price.as_of) == 10 and price.as_of[4] == "-" and price.note


def test_cost_bills_cache_reads_and_writes_at_their_rates() -> None:
    usage = ChatUsage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=400_000,
        cache_write_tokens=100_000,
    )
    # claude-sonnet-4-6: 500k plain × $3 + 400k × $0.30 + 100k × $3.75 + 100k out × $15
    assert cost(usage, "claude-sonnet-4-6") == pytest.approx(1.5 + 0.12 + 0.375 + 1.5)
    # gpt-4o has no cache-write rate: those tokens are billed as input
    assert cost(usage, "gpt-4o") == pytest.approx(0.5 * 2.5 + 0.4 * 1.25 + 0.1 * 2.5 + 0.1 * 10)


def test_unknown_models_and_missing_usage_cost_none_not_zero() -> None:
    assert cost(ChatUsage(input_tokens=10), "no-such-model") is None
    assert cost(None, "gpt-4o") is None
    assert cost(ChatUsage(input_tokens=10, output_tokens=10), "llama3.1") == 0.0


def test_dated_snapshots_and_resource_names_find_their_model() -> None:
    assert price_for("gpt-4o-2024-08-06") is DEFAULT_PRICES["gpt-4o"]
    assert price_for("models/gemini-2.5-flash") is DEFAULT_PRICES["gemini-2.5-flash"]
    assert price_for("gpt-4o-mini") is None  # a different model, not a snapshot


def test_prices_can_be_overridden_and_removed(price_override) -> None:
    set_price("gpt-4o", ModelPrice(1.0, 2.0, as_of="2026-12-01"))
    assert cost(ChatUsage(input_tokens=1_000_000, output_tokens=1_000_000), "gpt-4o") == 3.0
    set_price("gpt-4o", None)
    assert price_for("gpt-4o") is None
    set_price("house-model", ModelPrice(0.5, 0.5))
    assert cost(ChatUsage(input_tokens=2_000_000), "house-model") == 1.0


def test_usage_totals_add_costs_and_keep_none_when_nothing_is_priced() -> None:
    priced = ChatUsage(input_tokens=1, cost=0.25)
    unpriced = ChatUsage(input_tokens=2)
    assert (unpriced + unpriced).cost is None
    assert (priced + unpriced).cost == 0.25 and (unpriced + priced).cost == 0.25
    assert (priced + priced).cost == 0.5


async def test_cost_on_model_call_end_and_the_state_totals(price_override) -> None:
    set_price("scripted", ModelPrice(2.0, 8.0, as_of="2026-12-01"))
    steps = [AssistantMsg("a", "one"), AssistantMsg("a", "two")]
    steps[0].usage = ChatUsage(input_tokens=1_000, output_tokens=500)
    steps[1].usage = ChatUsage(input_tokens=3_000, output_tokens=0)
    agent = Agent(name="bot", system_prompt="p", model=ScriptedChatModel(steps))
    events = [e async for e in agent.reply_stream(UserMsg("user", "hi"))]
    ends = [e for e in events if isinstance(e, ModelCallEndEvent)]
    assert [e.cost for e in ends] == [pytest.approx((1_000 * 2 + 500 * 8) / 1e6)]
    assert ends[0].usage is not None and ends[0].usage.cost == ends[0].cost
    await agent.reply(UserMsg("user", "again"))
    assert agent.state.usage.cost == pytest.approx((2_000 + 4_000 + 6_000) / 1e6)
    assert agent.state.context[-1].usage.cost == pytest.approx(6_000 / 1e6)
    # the total survives a save and a load
    again = AgentState.model_validate_json(agent.state.model_dump_json())
    assert again.usage.cost == agent.state.usage.cost


async def test_an_unpriced_model_leaves_cost_none() -> None:
    step = AssistantMsg("a", "one")
    step.usage = ChatUsage(input_tokens=10, output_tokens=5)
    agent = Agent(name="bot", system_prompt="p", model=ScriptedChatModel([step], name="mystery"))
    events = [e async for e in agent.reply_stream(UserMsg("user", "hi"))]
    end = next(e for e in events if isinstance(e, ModelCallEndEvent))
    assert end.cost is None and agent.state.usage.cost is None
    assert agent.state.usage.input_tokens == 10
