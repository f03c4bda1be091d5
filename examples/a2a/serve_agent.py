"""Serve an agent over A2A and call it with `a2a-sdk`'s own client.

`create_app` (what `tether serve` runs) serves every agent at `/a2a/{agent_id}`: its card
at `/.well-known/agent-card.json`, JSON-RPC at the root, HTTP+JSON under `/rest`. This
example starts the service in a thread on a free port (SQLite in a temporary folder, one
API key), reads the card, sends a message that needs the user's approval, and answers the
`input-required` task with "yes".

With the real server: `tether serve --agents my_module:agents --api-keys-file keys.txt`,
then point any A2A client at `http://host:8000/a2a/<agent_id>/`.

Run it: `python examples/a2a/serve_agent.py` (offline; needs `tether[server]`).
"""

import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers.proto_helpers import get_message_text, new_text_part
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, TaskState

from tether.agent import Agent
from tether.app.server import create_app
from tether.app.storage import SQLiteStorage
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool

KEY = "example-key-7c1f"
notes: dict[str, str] = {}


@tool(requires_confirmation=True)
def save_note(name: str, text: str) -> str:
    """Save a note (asks first)."""
    notes[name] = text
    return f"saved {name}"


model = ScriptedChatModel(
    [
        AssistantMsg(
            "assistant",
            [ScriptedChatModel.tool_call("save_note", {"name": "todo", "text": "buy milk"})],
        ),
        AssistantMsg("assistant", "Saved your note `todo`."),
    ]
)
agent = Agent(
    name="notes",
    system_prompt="You keep the user's notes.",
    model=model,
    toolkit=Toolkit(tools=[save_note]),
)


def serve(folder: Path) -> tuple[uvicorn.Server, threading.Thread, str]:
    """The service on 127.0.0.1, on a port the OS picks; its thread and URL."""
    app = create_app({"notes": agent}, SQLiteStorage(folder / "sessions.db"), api_keys={KEY: "me"})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, f"http://127.0.0.1:{port}"


def user_message(text: str, **ids: str) -> SendMessageRequest:
    msg = Message(message_id=os.urandom(8).hex(), role=Role.ROLE_USER, parts=[new_text_part(text)])
    for name, value in ids.items():
        setattr(msg, name, value)
    return SendMessageRequest(message=msg)


async def call(base: str) -> None:
    headers = {"authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        card = await A2ACardResolver(http, f"{base}/a2a/notes").get_agent_card()
        client = await create_client(card, ClientConfig(httpx_client=http))
        print("card:", card.name, [i.protocol_binding for i in card.supported_interfaces])
        print("skills:", [s.id for s in card.skills])
        task = None
        async for response in client.send_message(user_message("note: buy milk")):
            if response.HasField("task"):
                task = response.task
            elif response.HasField("status_update"):
                task.status.CopyFrom(response.status_update.status)
        assert task is not None
        print("state:", TaskState.Name(task.status.state))
        print("question:", get_message_text(task.status.message).split("?")[0] + "?")
        async for response in client.send_message(user_message("yes", task_id=task.id)):
            if response.HasField("status_update"):
                task.status.CopyFrom(response.status_update.status)
        print("state:", TaskState.Name(task.status.state))
        print("answer:", get_message_text(task.status.message))
        await client.close()
    print("notes:", notes)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(os.environ.get("TETHER_EXAMPLE_DIR") or scratch)
        server, thread, base = serve(folder)
        try:
            asyncio.run(call(base))
        finally:
            server.should_exit = True
            thread.join()


if __name__ == "__main__":
    main()
