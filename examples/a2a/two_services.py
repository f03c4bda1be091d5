"""Two tether services calling each other over A2A, with a question passed back up.

The *cleaner* service owns a tool that asks before it deletes. The *lead* service's agent
hands clean-ups to the cleaner through `A2AAgent(...).as_tool()`. A client talks to the
lead (its native HTTP API): the cleaner's question pauses the lead's reply, the client
answers it there, and the answer travels back over A2A to the cleaner, which finishes.

Both services run here in threads with scripted models (offline); in production each is
`tether serve --agents module:agents` on its own host, and the lead's `A2AAgent` gets the
cleaner's API key with `credential=A2ACredential(api_key=...)`.

    python examples/a2a/two_services.py
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from tether.agent import A2AAgent, Agent
from tether.app.server import create_app
from tether.app.storage import SQLiteStorage
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool

DELETED: list[str] = []


@tool(requires_confirmation=True)
def delete_old_reports(folder: str) -> str:
    """Delete the reports older than a year in `folder` (asks first)."""
    DELETED.append(folder)
    return "deleted 3 reports"


def cleaner() -> Agent:
    call = ScriptedChatModel.tool_call("delete_old_reports", {"folder": "/srv/reports"})
    return Agent(
        name="cleaner",
        system_prompt="You clean up old files.",
        model=ScriptedChatModel(
            [AssistantMsg("cleaner", [call]), AssistantMsg("cleaner", "Deleted 3 old reports.")]
        ),  # fmt: skip
        toolkit=Toolkit(tools=[delete_old_reports]),
    )


def lead(cleaner_url: str) -> Agent:
    remote = A2AAgent(f"{cleaner_url}/a2a/cleaner", name="cleaner",
                      description="Cleans up old files on the file server.")  # fmt: skip
    call = ScriptedChatModel.tool_call("cleaner", {"task": "Delete last year's reports."})
    return Agent(
        name="lead",
        system_prompt="You delegate clean-ups to the cleaner.",
        model=ScriptedChatModel(
            [AssistantMsg("lead", [call]), AssistantMsg("lead", "The old reports are gone.")]
        ),  # fmt: skip
        # The cleaner asks for itself before it deletes: calling it needs no question here.
        toolkit=Toolkit(tools=[remote.as_tool(read_only=True)]),
    )


class Served:
    """An app served by uvicorn in a thread, on a free port (its `url`)."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join()


def main() -> None:
    given = os.environ.get("TETHER_EXAMPLE_DIR")
    with tempfile.TemporaryDirectory() as scratch:
        run(Path(given or scratch))


def run(folder: Path) -> None:
    cleaner_app = create_app({"cleaner": cleaner()}, SQLiteStorage(folder / "cleaner.db"))
    with Served(cleaner_app) as cleaner_url:
        lead_app = create_app({"lead": lead(cleaner_url)}, SQLiteStorage(folder / "lead.db"))
        with Served(lead_app) as lead_url, httpx.Client(base_url=lead_url, timeout=60) as http:
            http.post("/v1/sessions", json={"agent_id": "lead", "session_id": "s1"})
            said = {"input": {"role": "user", "content": "Tidy up the file server."}}
            paused = http.post("/v1/sessions/s1/replies", json=said).json()
            print("lead:", paused["status"])
            [pause] = paused["events"]
            [question] = pause["tool_calls"]
            shown = json.loads(question["input"])
            print(f"{'/'.join(question['metadata']['agent_path'])} asks: {shown['question']}")

            answer = {"type": "user_confirm_result", "reply_id": pause["reply_id"],
                      "confirm_results": [{"confirmed": True, "tool_call": question}]}  # fmt: skip
            done = http.post("/v1/sessions/s1/replies", json={"input": answer}).json()
            print("lead:", done["status"], "-", done["message"]["content"][-1]["text"])
    print("deleted in:", DELETED)


if __name__ == "__main__":
    main()
