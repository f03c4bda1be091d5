"""A local HTTP/1.1 server that replays recorded provider responses chunk by chunk.

It speaks just enough HTTP for the official SDK clients: keep-alive, request bodies by
content-length or chunked, responses in chunked transfer encoding, one `drain()` per
piece so every SSE event or NDJSON line reaches the client as its own TCP write.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

_BESIDE = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "providers"
FIXTURES = _BESIDE if _BESIDE.is_dir() else Path("/work/shared/fixtures/providers")
"""The recorded provider streams: in the `shared/` folder beside the repository."""
_SKIP_HEADERS = {"content-length", "transfer-encoding", "content-encoding", "connection"}


@dataclass
class Reply:
    """One scripted answer."""

    body: list[bytes] | bytes = b""
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None
    """Abort the connection after writing this many pieces (no clean end)."""
    path: str | None = None
    """The path (without query) the request must have, if checked."""

    def pieces(self) -> list[bytes]:
        return [self.body] if isinstance(self.body, bytes) else list(self.body)


@dataclass
class Received:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Interaction:
    method: str
    path: str
    query: str
    request_body: Any
    reply: Reply


def split_events(text: str, mode: str = "event", seed: int = 7) -> list[bytes]:
    """Cut a body into pieces: per SSE event / NDJSON line, or at random byte offsets."""
    data = text.encode("utf-8")
    if mode == "bytes":
        rng = random.Random(seed)
        pieces, i = [], 0
        while i < len(data):
            step = rng.randint(1, 40)
            pieces.append(data[i : i + step])
            i += step
        return pieces
    if mode == "whole":
        return [data]
    sep = "\r\n\r\n" if "\r\n\r\n" in text else ("\n\n" if "\n\n" in text else "\n")
    parts = text.split(sep)
    out = [(p + sep).encode("utf-8") for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1].encode("utf-8"))
    return out


def load_cassette(relative: str, mode: str = "event") -> list[Interaction]:
    """The interactions of a recorded cassette, as replies for the server."""
    data = yaml.safe_load((FIXTURES / relative).read_text(encoding="utf-8"))
    out = []
    for item in data["interactions"]:
        request, response = item["request"], item["response"]
        if "parsed_body" in request:
            request_body = request["parsed_body"]
        else:
            body = request.get("body")
            request_body = json.loads(body) if isinstance(body, str) and body else body
        if "parsed_body" in response:
            text = json.dumps(response["parsed_body"])
        else:
            text = response["body"]["string"]
        headers: dict[str, str] = {}
        for name, value in (response.get("headers") or {}).items():
            if name.lower() in _SKIP_HEADERS:
                continue
            headers[name.lower()] = value[0] if isinstance(value, list) else str(value)
        content_type = headers.pop("content-type", "application/json")
        streaming = content_type.startswith(("text/event-stream", "application/x-ndjson"))
        url = urlsplit(request["uri"])
        out.append(
            Interaction(
                method=request["method"],
                path=url.path,
                query=url.query,
                request_body=request_body,
                reply=Reply(
                    body=split_events(text, mode) if streaming else text.encode("utf-8"),
                    status=response["status"]["code"],
                    content_type=content_type,
                    headers=headers,
                ),
            )
        )
    return out


class ReplayServer:
    """Serves queued replies in order on 127.0.0.1 and records every request."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.problems: list[str] = []
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, *replies: Reply) -> None:
        self.queue.extend(replies)

    def add_cassette(
        self, relative: str, mode: str = "event", check_path: bool = True
    ) -> list[Interaction]:
        interactions = load_cassette(relative, mode)
        for item in interactions:
            if check_path:
                item.reply.path = item.path
            self.queue.append(item.reply)
        return interactions

    def assert_done(self) -> None:
        assert not self.problems, self.problems
        assert not self.queue, f"{len(self.queue)} replies were never requested"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await self._server.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> Received | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        else:
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        url = urlsplit(target)
        return Received(method, url.path, url.query, headers, body)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                received = await self._read_request(reader)
                if received is None:
                    return
                self.requests.append(received)
                if not await self._answer(received, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, received: Received, writer: asyncio.StreamWriter) -> bool:
        if not self.queue:
            self.problems.append(f"unexpected request {received.method} {received.path}")
            reply = Reply(
                body=b'{"error": {"message": "replay server: no reply left"}}', status=500
            )
        else:
            reply = self.queue.popleft()
            if reply.path is not None and reply.path != received.path:
                self.problems.append(f"expected path {reply.path}, got {received.path}")
        head = [f"HTTP/1.1 {reply.status} X", f"content-type: {reply.content_type}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        head.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for count, piece in enumerate(reply.pieces()):
            if reply.drop_after is not None and count >= reply.drop_after:
                writer.transport.abort()
                return False
            if piece:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
        if reply.drop_after is not None:
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
