"""Parse throughput of a 5,000-chunk streamed answer, per provider, through the official SDK.

For each provider a local HTTP server (in its own thread) sends a stream of 5,000 text
chunks plus usage, in the provider's wire format. Each round reads that answer three ways:
the SDK's stream alone (network reads, SSE/NDJSON parsing, SDK models, nothing else); then
`model.stream()` (the SDK, tether's chunk-to-delta translation and error guard) into the
`StreamAssembler`, once building only the blocks (`reply()` with no observer) and once
also one event per delta (`reply_stream()`). Tether's share is the time it adds to the SDK
alone, over the time through tether. No timers sit inside the stream, so none is counted
as tether's. The assembler's own cost per chunk is measured apart, on the deltas of the
same answer collected beforehand. Rounds interleave the three ways; the best of each is
kept, timed by the reading thread's CPU clock (`time.thread_time`: the server thread's
work and waits for a core are not counted), so the machine's load moves it less.

`--instructions` gives a load-proof figure instead: each way runs in its own process under
`valgrind --tool=cachegrind` (the servers stay in this process, outside valgrind), once
with `--few` and once with `--many` chunks; the difference divided by the extra chunks is
what one chunk costs that way (start-up, imports and warm-up cancel out), and tether's
share is what it adds to the SDK's per-chunk instructions. Run:

    PYTHONPATH=src python benchmarks/provider_stream.py [--chunks N] [--rounds R]
    PYTHONPATH=src python benchmarks/provider_stream.py --instructions [--few 200 --many 2200]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
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
_clock = time.thread_time
"""CPU seconds of the reading thread: neither the server thread nor the waits count."""


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
    parts.append(chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
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
    last = {**one, "candidates": [{**one["candidates"][0], "finishReason": "STOP"}]}
    body = f"data: {json.dumps(one)}\r\n\r\n" * (n - 1) + f"data: {json.dumps(last)}\r\n\r\n"
    return "text/event-stream", body.encode()


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


def make_model(name: str, url: str) -> Any:
    """A model of provider `name` pointed at the local server."""
    if name == "openai":
        return OpenAIChatModel(OpenAICredential(api_key="k", base_url=url + "/v1"), "gpt-4o")
    if name == "anthropic":
        return AnthropicChatModel(
            AnthropicCredential(api_key="k", base_url=url), "claude-sonnet-4-6"
        )
    if name == "gemini":
        return GeminiChatModel(GeminiCredential(api_key="k", base_url=url), "gemini-2.5-flash")
    if name == "dashscope":
        return DashScopeChatModel(
            DashScopeCredential(api_key="k", base_url=url + "/api/v1"), "qwen-max"
        )
    return OllamaChatModel(OllamaCredential(base_url=url), "llama3.1")


BODIES = {
    "openai": openai_body,
    "anthropic": anthropic_body,
    "gemini": gemini_body,
    "dashscope": dashscope_body,
    "ollama": ollama_body,
}
REQUEST = ChatRequest([UserMsg("user", "go")])


async def sdk_alone(model: Any, chunks: int) -> float:
    """Seconds to send the request and read every chunk through the SDK, and nothing else."""
    start = _clock()
    opened = await model._open(REQUEST)
    async for _ in opened.chunks:
        pass
    return _clock() - start


async def through_tether(model: Any, chunks: int, *, emit: bool) -> float:
    """Seconds for the same answer through `model.stream()` into the `StreamAssembler`."""
    assembler = StreamAssembler(reply_id="bench", emit=emit)
    start = _clock()
    async for delta in model.stream(REQUEST):
        assembler.feed(delta)
    assembler.close()
    elapsed = _clock() - start
    text = assembler.blocks[0].text if assembler.blocks else ""  # type: ignore[union-attr]
    assert text == TOKEN * chunks, "the assembled text is wrong"
    return elapsed


async def assembler_alone(model: Any, *, emit: bool) -> float:
    """Seconds to feed the answer's deltas (collected beforehand) into a `StreamAssembler`."""
    deltas = [delta async for delta in model.stream(REQUEST)]
    assembler = StreamAssembler(reply_id="bench", emit=emit)
    start = _clock()
    for delta in deltas:
        assembler.feed(delta)
    assembler.close()
    return _clock() - start


async def bench(name: str, chunks: int, rounds: int) -> dict[str, Any]:
    """Best-of-`rounds` seconds of each way of reading one provider's answer."""
    content_type, body = BODIES[name](chunks)
    server = serve(content_type, body)
    best: dict[str, float] = {}
    try:
        model = make_model(name, f"http://127.0.0.1:{server.server_address[1]}")
        await through_tether(model, chunks, emit=True)  # warm up: imports, connection
        for _ in range(rounds):  # interleaved, so drift of the machine hits all alike
            for key, run in (
                ("sdk", lambda: sdk_alone(model, chunks)),
                ("events", lambda: through_tether(model, chunks, emit=True)),
                ("blocks", lambda: through_tether(model, chunks, emit=False)),
                ("asm_events", lambda: assembler_alone(model, emit=True)),
                ("asm_blocks", lambda: assembler_alone(model, emit=False)),
            ):
                gc.collect()
                seconds = await run()
                best[key] = min(best.get(key, seconds), seconds)
        await model.aclose()
    finally:
        server.shutdown()
    return {"provider": name, "chunks": chunks, **best}


def share(row: dict[str, Any], key: str) -> str:
    """Tether's share of the time of reading through tether: what it adds to the SDK alone."""
    return f"{max(row[key] - row['sdk'], 0.0) / row[key]:.1%}"


WAYS = ("sdk", "blocks", "events")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


async def child(name: str, warm_url: str, url: str, way: str, chunks: int) -> None:
    """One way of reading `url`'s answer of `chunks` chunks, after a warm-up on `warm_url`.

    Each URL ends in `#<its answer's chunks>`."""
    warm_base, warm_chunks = warm_url.rsplit("#", 1)
    warm = make_model(name, warm_base)
    await sdk_alone(warm, 0)
    await through_tether(warm, int(warm_chunks), emit=way == "events")
    await warm.aclose()
    model = make_model(name, url.rsplit("#", 1)[0])
    if way == "sdk":
        await sdk_alone(model, chunks)
    else:
        await through_tether(model, chunks, emit=way == "events")
    await model.aclose()


def instructions(name: str, warm_url: str, url: str, way: str, chunks: int) -> int:
    """Instructions of a process reading one answer one way (valgrind, cachegrind)."""
    out = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--child",
            name,
            warm_url,
            url,
            way,
            str(chunks),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=True,
    )
    found = _REFS.search(out.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out.stderr}")
    return int(found.group(1).replace(",", ""))


def per_chunk_instructions(name: str, few: int, many: int) -> dict[str, float]:
    """Instructions per chunk of each way: (run of `many` - run of `few`) / (many - few)."""
    servers = {n: serve(*BODIES[name](n)) for n in (few, many)}
    urls = {n: f"http://127.0.0.1:{s.server_address[1]}#{n}" for n, s in servers.items()}
    try:
        jobs = [(way, n) for way in WAYS for n in (few, many)]
        with ThreadPoolExecutor(2) as pool:  # the servers answer from this process's threads
            counts = dict(
                zip(
                    jobs,
                    pool.map(lambda job: instructions(name, urls[few], urls[job[1]], *job), jobs),
                    strict=True,
                )
            )
    finally:
        for server in servers.values():
            server.shutdown()
    return {way: (counts[way, many] - counts[way, few]) / (many - few) for way in WAYS}


def instruction_table(providers: list[str], few: int, many: int) -> None:
    print(f"instructions per streamed chunk (runs of {many} minus runs of {few} chunks)\n")
    print(
        "| provider  | SDK alone | + blocks | + events | tether, blocks | tether, events "
        "| tether share, blocks | tether share, events |"
    )
    print(
        "|-----------|----------:|---------:|---------:|---------------:|---------------:"
        "|---------------------:|---------------------:|"
    )
    for name in providers:
        r = per_chunk_instructions(name, few, many)
        sdk, blocks, events = r["sdk"], r["blocks"], r["events"]
        print(
            f"| {name:<9} | {sdk:9,.0f} | {blocks:8,.0f} | {events:8,.0f} "
            f"| {blocks - sdk:14,.0f} | {events - sdk:14,.0f} "
            f"| {(blocks - sdk) / blocks:>20.1%} | {(events - sdk) / events:>20.1%} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--instructions", action="store_true", help="count instructions instead")
    parser.add_argument("--few", type=int, default=200)
    parser.add_argument("--many", type=int, default=2200)
    parser.add_argument("--providers", nargs="+", choices=list(BODIES), default=list(BODIES))
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, warm_url, url, way, chunks = args.child
        asyncio.run(child(name, warm_url, url, way, int(chunks)))
        return
    if args.instructions:
        instruction_table(args.providers, args.few, args.many)
        return
    rows = [asyncio.run(bench(name, args.chunks, args.rounds)) for name in args.providers]
    print(f"{args.chunks} streamed text chunks per provider; best of {args.rounds} rounds")
    print("'blocks': the answer assembled into its message, as `reply()` does when no one")
    print("watches; 'events': also one pydantic event per delta, as `reply_stream()` does.\n")
    print(
        "| provider  | SDK alone (s) | + blocks (s) | + events (s) | chunks/s (events) "
        "| tether share, blocks | tether share, events | assembler µs/chunk blocks / events |"
    )
    print(
        "|-----------|--------------:|-------------:|-------------:|------------------:"
        "|---------------------:|---------------------:|-----------------------------------:|"
    )
    for r in rows:
        per_chunk = (
            f"{r['asm_blocks'] / r['chunks'] * 1e6:.2f} / {r['asm_events'] / r['chunks'] * 1e6:.2f}"
        )
        print(
            f"| {r['provider']:<9} | {r['sdk']:13.3f} | {r['blocks']:12.3f} | {r['events']:12.3f} "
            f"| {r['chunks'] / r['events']:17,.0f} | {share(r, 'blocks'):>20} "
            f"| {share(r, 'events'):>20} | {per_chunk:>34} |"
        )


if __name__ == "__main__":
    main()
