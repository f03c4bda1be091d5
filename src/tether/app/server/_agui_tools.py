"""Frontend tools: tools an AG-UI client declares in its run input, run by the client.

Each becomes an external tool (`is_external_tool`): when the model calls one, the reply
pauses with the call submitted, the run finishes with it pending, and the client's next
run carries its result as a `tool` message. The declarations come with every run input,
so any worker can take the next run.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import Tool
from pydantic import BaseModel, ConfigDict

from tether.errors import InvalidInputError
from tether.state import AgentState
from tether.tool import ToolBase, ToolContext, ToolOutput, ToolSourceBase

__all__ = ["ClientTool", "ClientTools"]


class ClientArguments(BaseModel):
    """Whatever the client's schema allows (the client validates its own arguments)."""

    model_config = ConfigDict(extra="allow")


class ClientTool(ToolBase):
    """One frontend tool: offered to the model, executed by the AG-UI client."""

    input_model = ClientArguments
    is_external_tool = True

    def __init__(self, spec: Tool) -> None:
        self.name = spec.name
        self.description = spec.description
        parameters = spec.parameters if isinstance(spec.parameters, dict) else {}
        self._schema: dict[str, Any] = {
            **parameters,
            "type": "object",
            "properties": parameters.get("properties") or {},
        }

    @property
    def input_schema(self) -> dict[str, Any]:
        """The client's JSON schema of the arguments (an object schema)."""
        return self._schema

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Never called: the loop hands external calls to the caller."""
        raise InvalidInputError(f"{self.name} is a frontend tool: the AG-UI client runs it")


class ClientTools(ToolSourceBase):
    """The frontend tools of one run input, as a tool source."""

    name = "ag-ui client"

    def __init__(self, specs: list[Tool], taken: set[str]) -> None:
        clash = sorted({s.name for s in specs} & taken)
        if clash:
            raise InvalidInputError(
                f"the frontend tool {clash[0]!r} has the name of one of the agent's own "
                "tools; rename it in the client"
            )
        self.tools = [ClientTool(spec) for spec in specs]

    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        """Every declared frontend tool, always callable."""
        return list(self.tools)
