"""Structured answers: the per-reply tool the model answers through, and the view with it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from tether._loop.results import STRUCTURED_TOOL
from tether.state import AgentState
from tether.tool import ToolBase, ToolContext, Toolkit, ToolkitView

__all__ = ["StructuredOutputTool", "reply_view", "with_structured_tool"]


class _AnyObject(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow")


class StructuredOutputTool(ToolBase):
    """`generate_response`: validates the final answer against the caller's schema.

    Built per reply (never added to a shared toolkit). Given only a JSON schema (a
    reply resumed in another process), it accepts any object and sends that schema.
    """

    is_read_only = True

    def __init__(
        self, name: str, model: type[BaseModel] | None, schema: dict[str, Any] | None = None
    ) -> None:
        self.name = name
        self.description = (
            "Give your final answer as structured data. Call this once, when you are done; "
            "its arguments are your answer."
        )
        self.input_model = model or _AnyObject
        self._schema = schema

    @property
    def input_schema(self) -> dict[str, Any]:
        """The answer's JSON schema."""
        return self._schema if self._schema is not None else self.input_model.model_json_schema()

    async def call(self, tool_input: BaseModel, context: ToolContext) -> str:
        """Accept the validated answer."""
        return "Structured response recorded. The reply is complete."


def with_structured_tool(
    view: ToolkitView, name: str, model: type[BaseModel] | None, schema: dict[str, Any]
) -> ToolkitView:
    """`view` plus the per-reply structured-output tool, called `name`.

    It validates against `model`, or (a reply resumed in another process, where only the
    JSON `schema` survived) accepts any object and sends `schema`.
    """
    extra = StructuredOutputTool(name, model, None if model else schema)
    return ToolkitView(
        tools={**view.tools, name: extra},
        schemas=[*view.schemas, extra.json_schema()],
        prompt=view.prompt,
        sources=view.sources,
    )


async def reply_view(
    toolkit: Toolkit,
    state: AgentState,
    structured_model: type[BaseModel] | None,
    *,
    with_prompt: bool = True,
) -> ToolkitView:
    """The tools of one step, plus the per-reply structured-output tool if asked for."""
    view = await toolkit.view(state, with_prompt=with_prompt)
    schema = state.reply.structured_json_schema if state.reply is not None else None
    if schema is None:
        return view
    return with_structured_tool(view, STRUCTURED_TOOL, structured_model, schema)
