"""A step's tools when the caller asked for a structured answer: the view plus one tool."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tether.tool._structured import StructuredOutputTool
from tether.tool._toolkit import ToolkitView

__all__ = ["with_structured_tool"]


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
