"""The bare SSE floor for `service_load.py --instructions`: Starlette, uvicorn, one WAL insert.

The same routes the benchmark's clients call (`/healthz`, `POST /v1/sessions`,
`POST /v1/sessions/{id}/replies` as SSE), streaming the events of one real reply of the
benchmark agent (recorded once at start-up, outside the measured difference: same types,
same JSON, same sizes), with the model's two 50 ms waits, and one SQLite insert (WAL,
`synchronous=NORMAL`, its own transaction) per event before it is sent. No validation,
leases, state or tools: what any SSE service over a durable log pays per reply.

    python benchmarks/_sse_floor.py PORT DB_PATH
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL_SECONDS = float(os.environ.get("BENCH_LATENCY", "0.05"))
LOGGED = os.environ.get("BENCH_FLOOR_LOG", "1") != "0"
"""`BENCH_FLOOR_LOG=0`: no insert per event (the HTTP and SSE work alone; `service_bound.py`)."""


def recorded_events() -> list[tuple[str, str, bool]]:
    """(type, JSON, model call before it?) of one reply of `service_load`'s agent."""
    sys.path.insert(0, str(HERE))
    from service_load import _agent

    from tether.event import EventType
    from tether.message import UserMsg

    async def run() -> list[tuple[str, str, bool]]:
        agent = _agent(0.0)
        out: list[tuple[str, str, bool]] = []
        async for event in agent.reply_stream(UserMsg("user", "look both up")):
            # The model waits before its first delta of each call: before the first event
            # of the reply (its start) and before the first event after the tool results.
            wait = not out or (
                out[-1][0] == str(EventType.TOOL_RESULT_END) and event.type != out[-1][0]
            )
            out.append((str(event.type), event.model_dump_json(), wait))
        return out

    return asyncio.run(run())


def app(db_path: str) -> object:
    """The Starlette app."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
    from starlette.routing import Route

    events = recorded_events()
    db = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS log (session TEXT, seq INTEGER, type TEXT, data TEXT,"
        " PRIMARY KEY (session, seq)) WITHOUT ROWID"
    )
    seqs: dict[str, int] = {}

    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def create(request: Request) -> JSONResponse:
        await request.json()
        sid = uuid.uuid4().hex
        seqs[sid] = 0
        return JSONResponse({"session_id": sid}, status_code=201)

    async def reply(request: Request) -> StreamingResponse:
        sid = request.path_params["sid"]
        await request.json()

        async def frames() -> AsyncIterator[bytes]:
            for kind, data, wait in events:
                if wait:
                    await asyncio.sleep(MODEL_SECONDS)
                seq = seqs[sid] = seqs[sid] + 1
                if LOGGED:
                    db.execute("INSERT INTO log VALUES (?, ?, ?, ?)", (sid, seq, kind, data))
                yield f"id: {seq}\nevent: {kind}\ndata: {data}\n\n".encode()

        return StreamingResponse(frames(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/healthz", health),
            Route("/v1/sessions", create, methods=["POST"]),
            Route("/v1/sessions/{sid}/replies", reply, methods=["POST"]),
        ]
    )


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")  # type: ignore[arg-type]
