"""The per-reply tool through which the model gives a structured final answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.tool._base import ToolBase, ToolContext

__all__ = ["StructuredOutputTool"]


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
