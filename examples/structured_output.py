"""Structured output: ask for an answer that fits a pydantic model.

`reply(..., structured_schema=Model)` offers the model one more tool,
`generate_response`, whose arguments are the schema; the validated answer lands in the
final message's `metadata["structured_output"]` (as JSON-ready data: rebuild the model
with `Model.model_validate`). The model may call other tools first.

Run it: `python examples/structured_output.py` (offline).
"""

import asyncio

from pydantic import BaseModel, Field

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


class Forecast(BaseModel):
    """The weather answer the caller's code can rely on."""

    city: str
    temperature_c: float = Field(description="Degrees Celsius")
    umbrella: bool


@tool(is_read_only=True)
def weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: 14°C, light rain"


call = ScriptedChatModel.tool_call
model = ScriptedChatModel(
    [
        AssistantMsg("assistant", [call("weather", {"city": "Bergen"})]),
        AssistantMsg(
            "assistant",
            [
                call(
                    "generate_response",
                    {"city": "Bergen", "temperature_c": 14, "umbrella": True},
                )
            ],
        ),
    ]
)
agent = Agent(
    name="forecaster",
    system_prompt="You report the weather.",
    model=model,
    toolkit=Toolkit(tools=[weather]),
)


async def main() -> None:
    msg = await agent.reply(UserMsg("user", "Weather in Bergen?"), structured_schema=Forecast)
    forecast = Forecast.model_validate(msg.metadata["structured_output"])
    print(repr(forecast))
    print("the model was offered:", [t["name"] for t in model.calls[-1].tools])


asyncio.run(main())
