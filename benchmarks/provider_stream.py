"""Parse throughput of a 5,000-chunk streamed answer, per provider, through the official SDK.

For each provider a local HTTP server (in its own thread) sends a stream of 5,000 text
chunks plus usage, in the provider's wire format. The client runs `model.stream()` (the
SDK, then tether's chunk-to-delta translation and error guard) into the
`StreamAssembler`, which builds the block and its events. The SDK's stream is wrapped so
the time spent inside it (network reads, SSE/NDJSON parsing, SDK models) is measured in
the same run; tether's share is everything else. The best of several rounds is kept. Run: `PYTHONPATH=src python benchmarks/provider_stream.py [--chunks N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tether.credential import (
    AnthropicCredential,
    DashScopeCredential,
    GeminiCredential,
    OllamaCredential,
    OpenAICredential,
)
from tether.message import UserMsg
from tether.model import (
    AnthropicChatModel,
    ChatRequest,
    DashScopeChatModel,
    GeminiChatModel,
    OllamaChatModel,
    OpenAIChatModel,
    StreamAssembler,
)

TOKEN = "tok "


def openai_body(n: int) -> tuple[str, bytes]:
    def chunk(choices: list[Any], usage: Any = None) -> str:
        body = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o",
            "choices": choices,
            "usage": usage,
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [
        chunk([{"index": 0, "delta": {"content": TOKEN}, "finish_reason": None}]) for _ in range(n)
    ]
    parts.append(chunk([], {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": n + 10}))
    return "text/event-stream", ("".join(parts) + "data: [DONE]\n\n").encode()


def anthropic_body(n: int) -> tuple[str, bytes]:
    def event(body: dict[str, Any]) -> str:
        return f"event: {body['type']}\ndata: {json.dumps(body)}\n\n"

    message: dict[str, Any] = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    parts = [
        event({"type": "message_start", "message": message}),
        event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        ),
    ]
    parts += [
        event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": TOKEN},
            }
        )
    ] * n
    parts += [
        event({"type": "content_block_stop", "index": 0}),
        event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": n},
            }
        ),
        event({"type": "message_stop"}),
    ]
    return "text/event-stream", "".join(parts).encode()


def gemini_body(n: int) -> tuple[str, bytes]:
    one = {
        "candidates": [{"content": {"parts": [{"text": TOKEN}], "role": "model"}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10},
        "modelVersion": "gemini-2.5-flash",
    }
    return "text/event-stream", (f"data: {json.dumps(one)}\r\n\r\n" * n).encode()


def dashscope_body(n: int) -> tuple[str, bytes]:
    parts = []
    for i in range(1, n + 1):
        body = {
            "output": {
                "choices": [
                    {
                        "message": {"role": "assistant", "content": TOKEN},
                        "index": 0,
                        "finish_reason": "null" if i < n else "stop",
                    }
                ]
            },
            "usage": {"input_tokens": 10, "output_tokens": i, "total_tokens": 10 + i},
            "request_id": "r",
        }
        parts.append(f"id:{i}\nevent:result\n:HTTP_STATUS/200\ndata:{json.dumps(body)}\n\n")
    return "text/event-stream;charset=UTF-8", "".join(parts).encode()


def ollama_body(n: int) -> tuple[str, bytes]:
    line = json.dumps(
        {
            "model": "llama3.1",
            "created_at": "2026-11-30T00:00:00Z",
            "message": {"role": "assistant", "content": TOKEN},
            "done": False,
        }
    )
    last = json.dumps(
        {
            "model": "llama3.1",
            "created_at": "2026-11-30T00:00:00Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 10,
            "eval_count": n,
        }
    )
    return "application/x-ndjson", ((line + "\n") * n + last + "\n").encode()


def serve(content_type: str, body: bytes) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            for i in range(0, len(body), 65536):
                self.wfile.write(body[i : i + 65536])

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class TimedStream:
    """Wraps an SDK stream and adds the time spent inside its `__anext__` to `clock[0]`."""

    def __init__(self, inner: Any, clock: list[float]) -> None:
        self._inner = inner.__aiter__()
        self._clock = clock

    def __aiter__(self) -> TimedStream:
        return self

    async def __anext__(self) -> Any:
        start = time.perf_counter()
        try:
            return await self._inner.__anext__()
        finally:
            self._clock[0] += time.perf_counter() - start


def timed(owner: Any, method: str, clock: list[float]) -> None:
    """Make `owner.method(...)` return its stream wrapped in a `TimedStream`."""
    original = getattr(owner, method)

    async def call(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        stream = await original(*args, **kwargs)
        clock[0] += time.perf_counter() - start  # sending the request, reading the headers
        return TimedStream(stream, clock)

    setattr(owner, method, call)


def make_model(name: str, url: str, clock: list[float]) -> Any:
    """A model of `name` whose SDK stream is timed."""
    if name == "openai":
        model: Any = OpenAIChatModel(OpenAICredential(api_key="k", base_url=url + "/v1"), "gpt-4o")
        timed(model.client.chat.completions, "create", clock)
    elif name == "anthropic":
        model = AnthropicChatModel(
            AnthropicCredential(api_key="k", base_url=url), "claude-sonnet-4-6"
        )
        timed(model.client.messages, "create", clock)
    elif name == "gemini":
        model = GeminiChatModel(GeminiCredential(api_key="k", base_url=url), "gemini-2.5-flash")
        timed(model.client.aio.models, "generate_content_stream", clock)
    elif name == "dashscope":
        model = DashScopeChatModel(
            DashScopeCredential(api_key="k", base_url=url + "/api/v1"), "qwen-max"
        )
        timed(model.client.chat.completions, "create", clock)
    else:
        model = OllamaChatModel(OllamaCredential(base_url=url), "llama3.1")
        timed(model.client, "chat", clock)
    return model


BODIES = {
    "openai": openai_body,
    "anthropic": anthropic_body,
    "gemini": gemini_body,
    "dashscope": dashscope_body,
    "ollama": ollama_body,
}


async def run_once(model: Any, clock: list[float], chunks: int) -> tuple[float, float, float]:
    """(total, SDK, assembler) seconds of one streamed answer through tether."""
    request = ChatRequest([UserMsg("user", "go")])
    assembler = StreamAssembler(reply_id="bench")
    clock[0] = 0.0
    feed_time = 0.0
    start = time.perf_counter()
    async for delta in model.stream(request):
        t = time.perf_counter()
        assembler.feed(delta)
        feed_time += time.perf_counter() - t
    assembler.close()
    total = time.perf_counter() - start
    text = assembler.blocks[0].text if assembler.blocks else ""  # type: ignore[union-attr]
    assert text == TOKEN * chunks, "the assembled text is wrong"
    return total, clock[0], feed_time


async def bench(name: str, chunks: int, rounds: int) -> dict[str, Any]:
    content_type, body = BODIES[name](chunks)
    server = serve(content_type, body)
    clock = [0.0]
    try:
        model = make_model(name, f"http://127.0.0.1:{server.server_address[1]}", clock)
        await run_once(model, clock, chunks)  # warm up: imports, connection
        best: tuple[float, float, float] | None = None
        for _ in range(rounds):
            gc.collect()
            result = await run_once(model, clock, chunks)
            if best is None or result[0] < best[0]:
                best = result
        await model.aclose()
    finally:
        server.shutdown()
    assert best is not None
    total, sdk, feed = best
    return {"provider": name, "total": total, "sdk": sdk, "feed": feed, "chunks": chunks}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = [asyncio.run(bench(name, args.chunks, args.rounds)) for name in BODIES]
    print(f"{args.chunks} streamed text chunks per provider; best of {args.rounds} rounds\n")
    print(
        "| provider  | total (s) | in SDK (s) | in tether (s) | chunks/s | tether share | of which assembler |"
    )
    print(
        "|-----------|----------:|-----------:|--------------:|---------:|-------------:|-------------------:|"
    )
    for r in rows:
        own = r["total"] - r["sdk"]
        print(
            f"| {r['provider']:<9} | {r['total']:9.3f} | {r['sdk']:10.3f} | {own:13.3f} "
            f"| {r['chunks'] / r['total']:8,.0f} | {own / r['total']:11.1%} | {r['feed'] / r['total']:17.1%} |"
        )


if __name__ == "__main__":
    main()
