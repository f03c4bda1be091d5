"""One step of a conversation in its own process (driven by `test_plugin_fresh_process.py`).

    python fresh_process_turn.py STATE_FILE STEP

Loads the state from STATE_FILE (if it exists), runs STEP with a fresh toolkit and a
fresh scripted model, saves the state back (and a pause event next to it) and prints one JSON line of what happened.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from plugin_helpers import Notes, call, said, system_prompt, tool_names

from tether import ScriptedChatModel, Toolkit, UserMsg
from tether.event import (
    ConfirmResult,
    PluginActivatedEvent,
    PluginSleptEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
)
from tether.state import AgentState
from tether.testing import scripted_agent

SCRIPTS = {
    "wake-and-ask": [
        said(call("activate_plugin", {"module_name": "note"})),
        said(call("delete_note", {"title": "milk"})),
    ],
    "confirm": [said("deleted")],
}


async def main(path: Path, step: str) -> None:
    pause_file = path.with_suffix(".pause.json")
    notes = Notes(items={"milk": "buy milk"})
    state = AgentState.model_validate_json(path.read_text()) if path.exists() else None
    model = ScriptedChatModel(list(SCRIPTS.get(step, [said("ok")])))
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]), state=state)
    if step == "confirm":
        event = RequireUserConfirmEvent.model_validate_json(pause_file.read_text())
        (asked,) = event.tool_calls
        inputs: object = UserConfirmResultEvent(
            reply_id=event.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=asked)],
        )
    else:
        inputs = UserMsg("user", step)
    events = [e async for e in agent.reply_stream(inputs)]  # type: ignore[arg-type]
    if isinstance(events[-1], RequireUserConfirmEvent):
        pause_file.write_text(events[-1].model_dump_json())
    model.assert_complete()
    path.write_text(agent.state.model_dump_json())
    report = {
        "plugins": agent.state.plugins,
        "ran": notes.calls,
        "tools": [tool_names(model, i) for i in range(len(model.calls))],
        "hint": ["Last visible run" in system_prompt(model, i) for i in range(len(model.calls))],
        "activated": [e.module_name for e in events if isinstance(e, PluginActivatedEvent)],
        "slept": [e.module_name for e in events if isinstance(e, PluginSleptEvent)],
        "last": type(events[-1]).__name__,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
