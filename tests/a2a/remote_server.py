"""A minimal remote A2A agent built on a2a-sdk's own server classes (for the client tests).

Its executor streams a working update, then asks a question (`input-required`); the next
message on the task answers it (a DataPart `{"approved": bool}` or the text "yes"/"no")
and the task completes with an artifact. A task whose text contains "slow" waits until
it is cancelled; one with "later" works until `Seen.release` is set, then completes; one with "twice" asks a second question; one with "file a report" completes
with a data artifact; one with "hello" is answered by a message (no task). Requests to the RPC route need `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers.proto_helpers import (
    get_data_parts,
    get_text_parts,
    new_data_part,
    new_task_from_user_message,
    new_text_message,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from _ports import UvicornThread

QUESTION = "Delete the 3 old files in /tmp/reports?"
SECOND = "Empty the trash too?"
REPORT = {"deleted": 3, "kept": ["summary.pdf"]}
TOKEN = "s3cret"


@dataclass
class Seen:
    """What the remote agent was sent, for the tests to check."""

    answers: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    cancelled_event: threading.Event = field(default_factory=threading.Event)
    auth: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


class Cleaner(AgentExecutor):
    """Asks before it deletes; completes with what it did."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen
        self.kinds: dict[str, str] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        task = context.current_task
        if task is None:
            text = context.get_user_input()
            self.seen.texts.append(text)
            if "hello" in text:  # a direct answer: a message, no task
                await event_queue.enqueue_event(new_text_message("Hello from the cleaner."))
                return
            self.kinds[context.task_id] = text
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
            await updater.start_work(updater.new_agent_message([Part(text=f"Looking at: {text}")]))
            if "later" in text:  # works until the test releases it, then completes
                await asyncio.to_thread(self.seen.release.wait, 30)
                await updater.add_artifact([Part(text="Finished later.")], name="result")
                await updater.complete()
                return
            if "slow" in text:
                await asyncio.Event().wait()  # until cancelled
            await updater.requires_input(updater.new_agent_message([Part(text=QUESTION)]))
            return
        data = get_data_parts(context.message.parts)
        texts = get_text_parts(context.message.parts)
        self.seen.answers.append({"data": data, "text": texts})
        approved = data[0].get("approved") if data else texts[0].strip().lower() == "yes"
        await updater.start_work()
        kind = self.kinds.get(context.task_id, "")
        if "twice" in kind and len(self.seen.answers) == 1:
            await updater.requires_input(updater.new_agent_message([Part(text=SECOND)]))
            return
        if "file a report" in kind:  # structured output: a data artifact
            await updater.add_artifact([new_data_part(REPORT)], name="report")
            await updater.complete()
            return
        outcome = "Deleted 3 files." if approved else "Kept the files."
        await updater.add_artifact([Part(text=outcome)], name="result")
        await updater.complete(updater.new_agent_message([Part(text=outcome)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        self.seen.cancelled.append(context.task_id)
        self.seen.cancelled_event.set()
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class _Auth(BaseHTTPMiddleware):
    """A bearer token on the RPC route (the agent card is public, as usual)."""

    def __init__(self, app: Any, seen: Seen) -> None:
        super().__init__(app)
        self.seen = seen

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path.startswith("/.well-known/"):
            return await call_next(request)
        header = request.headers.get("authorization", "")
        self.seen.auth.append(header)
        if header != f"Bearer {TOKEN}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)


def card(url: str) -> AgentCard:
    """The agent card served at `url`."""
    return AgentCard(
        name="cleaner",
        description="Cleans up old files (asks first).",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{url}/rpc", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="clean", name="clean", description="Delete old files", tags=["fs"])],
    )


def app(url_holder: list[str], seen: Seen) -> Starlette:
    """The Starlette app; `url_holder[0]` is the base URL (known once the port is bound)."""
    store = InMemoryTaskStore()

    class _Late(Starlette):
        built = False

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and not self.built:
                the_card = card(url_holder[0])
                handler = DefaultRequestHandler(Cleaner(seen), store, the_card)
                self.router.routes.extend(create_agent_card_routes(the_card))
                self.router.routes.extend(create_jsonrpc_routes(handler, "/rpc"))
                self.built = True
            await super().__call__(scope, receive, send)

    application = _Late()
    application.add_middleware(_Auth, seen=seen)
    return application


ThreadServer = UvicornThread
"""uvicorn serving `app` in a thread, on a port the OS picks (`_ports.UvicornThread`)."""
