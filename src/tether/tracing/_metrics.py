"""The metrics `TracingMiddleware` records, through the OpenTelemetry metrics API.

GenAI conventions where they exist (`gen_ai.client.token.usage`,
`gen_ai.client.operation.duration`, with their advised buckets); tether's own names for
the rest: tool calls and their duration by tool and outcome, permission decisions by
behavior, pauses, retries, replies and cost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import ModuleType

from opentelemetry import metrics
from opentelemetry import trace as trace_internal
from opentelemetry.metrics import _internal as metrics_internal
from opentelemetry.util.types import AttributeValue

__all__ = ["GLOBALS_READABLE", "Instruments", "ProviderSwitch", "env_provider", "metrics_switch"]

Attributes = Mapping[str, AttributeValue]

_TOKEN_BUCKETS = [4.0**i for i in range(14)]  # 1 … 67,108,864: the conventions' advice
_DURATION_BUCKETS = [0.01 * 2**i for i in range(14)]  # 0.01 s … 81.92 s: likewise


class ProviderSwitch:
    """Whether one OpenTelemetry signal goes anywhere: asked at every hook, so it is cheap.

    A provider given to the middleware decides once. Otherwise the global one counts: the
    API hands out inert stand-ins until an SDK provider is set, which can happen only
    once, so a "yes" is kept; a "no" costs one look at the API's global.
    """

    __slots__ = ("_fixed", "_from_env", "_get", "_global", "_inert", "_module", "_on")

    def __init__(
        self,
        given: object | None,
        module: ModuleType,
        global_name: str,
        get: Callable[[], object],
        inert: tuple[type, ...],
    ) -> None:
        self._module, self._global, self._get, self._inert = module, global_name, get, inert
        self._fixed = given is not None
        self._on = given is not None and not self._is_inert(given)
        # A provider named by environment variable is made on the API's first use.
        self._from_env = env_provider()

    def _is_inert(self, provider: object) -> bool:
        return isinstance(provider, self._inert) or type(provider).__name__.startswith("_Proxy")

    def __call__(self) -> bool:
        """Whether the signal is on now."""
        if self._on:
            return True
        if self._fixed:
            return False
        # The API's own global (private, hence the default): None until one is set.
        if getattr(self._module, self._global, True) is None and not self._from_env:
            return False
        self._on = not self._is_inert(self._get())
        return self._on


GLOBALS_READABLE = hasattr(trace_internal, "_TRACER_PROVIDER") and hasattr(
    metrics_internal, "_METER_PROVIDER"
)
"""Whether this API keeps its global providers where `TracingMiddleware.is_active` reads
them directly (`opentelemetry.trace._TRACER_PROVIDER`, `metrics._internal._METER_PROVIDER`:
private names, `None` until one is set; checked here, once). When not, it asks the
switches at every hook instead."""


def env_provider() -> bool:
    """Whether an environment variable names a provider (made on the API's first use)."""
    return "OTEL_PYTHON_TRACER_PROVIDER" in os.environ or "OTEL_PYTHON_METER_PROVIDER" in os.environ


def metrics_switch(given: object | None) -> ProviderSwitch:
    """The switch of metrics: a provider given here, or a real global one."""
    return ProviderSwitch(
        given,
        metrics_internal,
        "_METER_PROVIDER",
        metrics.get_meter_provider,
        (metrics.NoOpMeterProvider,),
    )


class Instruments:
    """One meter's instruments, made once per middleware."""

    def __init__(self, provider: metrics.MeterProvider | None, version: str) -> None:
        self.on = metrics_switch(provider)
        """Whether metrics go anywhere (every method returns at once when they don't)."""
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
        request: Attributes,
        response_model: str,
        error: str | None,
        seconds: float,
        tokens: tuple[int, int] | None,
        cost: float | None,
    ) -> None:
        """Record one model call: its duration, its input and output tokens, its cost.

        `request` holds the call's operation, provider and requested model; the response
        model and the error type (if any) are added here, once metrics are known to be on.
        """
        if not self.on():
            return
        base: dict[str, AttributeValue] = {**request, "gen_ai.response.model": response_model}
        if error is not None:
            base["error.type"] = error
        self.operation_duration.record(seconds, base)
        if tokens is not None:
            self.token_usage.record(tokens[0], {**base, "gen_ai.token.type": "input"})
            self.token_usage.record(tokens[1], {**base, "gen_ai.token.type": "output"})
        if cost is not None:
            model = base.get("gen_ai.response.model", "")
            self.cost.add(cost, {"gen_ai.response.model": model})

    def tool_call(self, tool: str, outcome: str, seconds: float | None) -> None:
        """Record one tool call's outcome (and duration, when it ran)."""
        if not self.on():
            return
        attributes = {"gen_ai.tool.name": tool, "tether.tool.outcome": outcome}
        self.tool_calls.add(1, attributes)
        if seconds is not None:
            self.tool_duration.record(seconds, attributes)

    def permission_decision(self, behavior: str, tool: str) -> None:
        """Count one permission decision."""
        if self.on():
            self.permission_decisions.add(
                1, {"tether.permission.behavior": behavior, "gen_ai.tool.name": tool}
            )

    def count(self, counter: str, attributes: Attributes) -> None:
        """Add one to the counter named by its attribute here (`pauses`, `retries`, ...)."""
        if self.on():
            getattr(self, counter).add(1, attributes)
