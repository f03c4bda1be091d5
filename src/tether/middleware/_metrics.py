"""The metrics `TracingMiddleware` records, through the OpenTelemetry metrics API.

GenAI conventions where they exist (`gen_ai.client.token.usage`,
`gen_ai.client.operation.duration`, with their advised buckets); tether's own names for
the rest: tool calls and their duration by tool and outcome, permission decisions by
behavior, pauses, retries, replies and cost.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import metrics
from opentelemetry.util.types import AttributeValue

__all__ = ["Instruments", "metrics_enabled"]

Attributes = Mapping[str, AttributeValue]

_TOKEN_BUCKETS = [4.0**i for i in range(14)]  # 1 … 67,108,864: the conventions' advice
_DURATION_BUCKETS = [0.01 * 2**i for i in range(14)]  # 0.01 s … 81.92 s: likewise


def metrics_enabled(provider: metrics.MeterProvider | None) -> bool:
    """Whether metrics go anywhere: a provider was given, or a real one is set globally."""
    current = provider if provider is not None else metrics.get_meter_provider()
    # The API's stand-ins until an SDK provider is set: a proxy (its class is private,
    # hence the name test) or the explicit no-op provider.
    return not isinstance(current, metrics.NoOpMeterProvider) and (
        type(current).__name__ != "_ProxyMeterProvider"
    )


class Instruments:
    """One meter's instruments, made once per middleware."""

    def __init__(self, provider: metrics.MeterProvider | None, version: str) -> None:
        meter = metrics.get_meter("tether", version, meter_provider=provider)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used by each model call, by token type",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of each model call, retries included",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.tool_calls = meter.create_counter(
            "tether.tool.calls", unit="{call}", description="Tool calls by tool and outcome"
        )
        self.tool_duration = meter.create_histogram(
            "tether.tool.duration",
            unit="s",
            description="Duration of each tool call, by tool and outcome",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.permission_decisions = meter.create_counter(
            "tether.permission.decisions",
            unit="{decision}",
            description="Permission decisions by behavior",
        )
        self.pauses = meter.create_counter(
            "tether.reply.pauses", unit="{pause}", description="Replies paused, by kind"
        )
        self.retries = meter.create_counter(
            "tether.model.retries", unit="{retry}", description="Model call retries and fallbacks"
        )
        self.replies = meter.create_counter(
            "tether.replies", unit="{reply}", description="Reply streams ended, by outcome"
        )
        self.cost = meter.create_counter(
            "tether.usage.cost", unit="USD", description="Spend by model, from the price table"
        )

    def model_call(
        self,
        base: Attributes,
        seconds: float,
        tokens: tuple[int, int] | None,
        cost: float | None,
    ) -> None:
        """Record one model call: its duration, its input and output tokens, its cost."""
        self.operation_duration.record(seconds, base)
        if tokens is not None:
            self.token_usage.record(tokens[0], {**base, "gen_ai.token.type": "input"})
            self.token_usage.record(tokens[1], {**base, "gen_ai.token.type": "output"})
        if cost is not None:
            model = base.get("gen_ai.response.model", "")
            self.cost.add(cost, {"gen_ai.response.model": model})

    def tool_call(self, tool: str, outcome: str, seconds: float | None) -> None:
        """Record one tool call's outcome (and duration, when it ran)."""
        attributes = {"gen_ai.tool.name": tool, "tether.tool.outcome": outcome}
        self.tool_calls.add(1, attributes)
        if seconds is not None:
            self.tool_duration.record(seconds, attributes)
