"""A parent agent that delegates to a remote A2A agent, for the A2A client tests.

python a2a_parent.py CONFIG_JSON   (a worker: load the state, answer, finish; see `main`)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tether.agent import A2AAgent, Agent
from tether.credential import A2ACredential
from tether.event import (
    ConfirmResult,
    RequireUserConfirmEvent,
    SubAgentEvent,
    UserConfirmResultEvent,
)
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionMode
from tether.state import AgentState
from tether.tool import Toolkit

TASK = "Clean up the old reports"


def parent(
    url: str,
    *,
    first: bool = True,
    token: str | None = "s3cret",
    task: str = TASK,
    name: str = "cleaner",
) -> Agent:
    """The lead: it calls the remote agent (`name`) once, then says it is done."""
    call = ScriptedChatModel.tool_call(name, {"task": task}, id="c1")
    script = [AssistantMsg("lead", [call])] if first else []
    script.append(AssistantMsg("lead", "The cleaner is done."))
    credential = A2ACredential(api_key=token) if token else None
    remote = A2AAgent(url, name=name, credential=credential)
    agent = Agent(
        name="lead",
        system_prompt="You delegate clean-ups.",
        model=ScriptedChatModel(script),
        toolkit=Toolkit(tools=[remote.as_tool()]),
    )
    agent.state.permission_context = PermissionContext(mode=PermissionMode.BYPASS)
    return agent


async def start(config: dict[str, Any]) -> dict[str, Any]:
    """Run the lead until the remote agent pauses it; save its state to `config["state"]`."""
    agent = parent(config["url"], token=config["token"], task=config["task"],
                   name=config["name"])  # fmt: skip
    events = [e async for e in agent.reply_stream(UserMsg("user", "go"))]
    Path(config["state"]).write_text(agent.state.model_dump_json())
    pauses = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    nested = [e for e in events if isinstance(e, SubAgentEvent)]
    return {
        "pause": pauses[0].model_dump(mode="json") if pauses else None,
        "nested": [[e.agent_path, e.call_path, e.event.type.value] for e in nested],
    }


async def answer(config: dict[str, Any]) -> dict[str, Any]:
    """Load the saved state, answer the remote question, run the reply to its end."""
    agent = parent(config["url"], first=False, token=config.get("token", "s3cret"),
                   name=config.get("name", "cleaner"))  # fmt: skip
    agent.state = AgentState.model_validate_json(Path(config["state"]).read_text())
    pause = RequireUserConfirmEvent.model_validate(config["pause"])
    [question] = pause.tool_calls
    result = ConfirmResult(confirmed=config["approve"], tool_call=question,
                           reason=config.get("reason"))  # fmt: skip
    event = UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[result])
    final = await agent.reply(event)
    results = [
        {"output": b.output, "state": b.state.value}
        for m in agent.state.context
        for b in m.content
        if b.type == "tool_result"
    ]
    return {
        "final": final.get_text_content(),
        "results": results,
        "tool_state": agent.state.tool_state,
        "paused": agent.state.reply is not None,
    }


def main() -> None:
    config = json.loads(sys.argv[1])
    step = start if config.get("step") == "start" else answer
    print(json.dumps(asyncio.run(step(config))))


if __name__ == "__main__":
    main()
