"""Hand-built responses in each provider's published wire format, from one abstract script.

A script is a list of steps: `("text", s)`, `("thinking", s)`, `("signature", s)`,
`("call", index, id, name)`, `("args", index, piece)`, `("usage", input, output[, cache
read[, cache write]])` (where the provider reports them),
`("stop", raw_reason)` (the provider's own finish reason, e.g. `"length"`, `"max_tokens"`,
`"MAX_TOKENS"`; otherwise the normal one), and for Anthropic only `("redacted", data)` (a
`redacted_thinking` block). Every reply ends with the provider's end-of-answer marker.
Providers that send whole calls (Gemini, Ollama) get each call complete at its `call`.
"""

from __future__ import annotations

import json
from typing import Any

from provider_replay import Reply

from tether.credential import (
    AnthropicCredential,
    DashScopeCredential,
    GeminiCredential,
    OllamaCredential,
    OpenAICredential,
)
from tether.model import (
    AnthropicChatModel,
    ChatModelBase,
    DashScopeChatModel,
    GeminiChatModel,
    OllamaChatModel,
    OpenAIChatModel,
)

PROVIDERS = ["openai", "anthropic", "gemini", "dashscope", "ollama"]
SSE = "text/event-stream"


def make_model(provider: str, server_url: str, **kwargs: Any) -> ChatModelBase:
    """A model of `provider` pointed at the local server."""
    if provider == "openai":
        return OpenAIChatModel(
            OpenAICredential(api_key="sk-test", base_url=server_url + "/v1"), "gpt-4o", **kwargs
        )
    if provider == "anthropic":
        return AnthropicChatModel(
            AnthropicCredential(api_key="sk-ant", base_url=server_url),
            "claude-sonnet-4-6",
            **kwargs,
        )
    if provider == "gemini":
        return GeminiChatModel(
            GeminiCredential(api_key="g-key", base_url=server_url), "gemini-2.5-flash", **kwargs
        )
    if provider == "dashscope":
        return DashScopeChatModel(
            DashScopeCredential(api_key="sk-ds", base_url=server_url + "/api/v1"),
            "qwen-max",
            **kwargs,
        )
    if provider == "ollama":
        return OllamaChatModel(OllamaCredential(base_url=server_url), "llama3.1", **kwargs)
    raise ValueError(provider)


def _call_args(script: list[tuple]) -> dict[int, str]:
    args: dict[int, str] = {}
    for step in script:
        if step[0] == "args":
            args[step[1]] = args.get(step[1], "") + step[2]
    return args


def _finish(script: list[tuple], normal: str | None = None) -> str:
    given = next((s[1] for s in script if s[0] == "stop"), None)
    if given is not None:
        return str(given)
    if normal is not None:
        return normal
    return "tool_calls" if any(s[0] == "call" for s in script) else "stop"


def openai_reply(script: list[tuple]) -> Reply:
    def chunk(delta: dict | None, finish: str | None = None, usage: dict | None = None) -> bytes:
        choices = (
            []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        )
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o",
            "choices": choices,
            "usage": usage,
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    pieces = [chunk({"role": "assistant", "content": None})]
    usage = None
    for step in script:
        kind = step[0]
        if kind == "text":
            pieces.append(chunk({"content": step[1]}))
        elif kind == "thinking":
            pieces.append(chunk({"content": None, "reasoning_content": step[1]}))
        elif kind == "call":
            call = {
                "index": step[1],
                "id": step[2],
                "type": "function",
                "function": {"name": step[3], "arguments": ""},
            }
            pieces.append(chunk({"tool_calls": [call]}))
        elif kind == "args":
            pieces.append(
                chunk({"tool_calls": [{"index": step[1], "function": {"arguments": step[2]}}]})
            )
        elif kind == "usage":
            usage = {
                "prompt_tokens": step[1],
                "completion_tokens": step[2],
                "total_tokens": step[1] + step[2],
                "prompt_tokens_details": {"cached_tokens": step[3] if len(step) > 3 else 0},
            }
    pieces.append(chunk({}, finish=_finish(script)))
    if usage is not None:
        pieces.append(chunk(None, usage=usage))  # the usage-only final chunk
    pieces.append(b"data: [DONE]\n\n")
    return Reply(pieces, content_type=SSE, path="/v1/chat/completions")


def _sse_event(body: dict) -> bytes:
    return f"event: {body['type']}\ndata: {json.dumps(body)}\n\n".encode()


def _anthropic_start(usage: tuple) -> bytes:
    counts = {
        "input_tokens": usage[1],
        "output_tokens": 1,
        "cache_read_input_tokens": usage[3] if len(usage) > 3 else 0,
        "cache_creation_input_tokens": usage[4] if len(usage) > 4 else 0,
    }
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6"}
    message |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": counts}
    return _sse_event({"type": "message_start", "message": message})


_ANTHROPIC_BLOCKS = {
    "text": {"type": "text", "text": ""},
    "thinking": {"type": "thinking", "thinking": "", "signature": ""},
}


def _anthropic_delta(step: tuple) -> dict | None:
    kind = step[0]
    if kind == "text":
        return {"type": "text_delta", "text": step[1]}
    if kind == "thinking":
        return {"type": "thinking_delta", "thinking": step[1]}
    if kind == "signature":
        return {"type": "signature_delta", "signature": step[1]}
    if kind == "args":
        return {"type": "input_json_delta", "partial_json": step[2]}
    return None


def anthropic_reply(script: list[tuple]) -> Reply:
    usage = next((s for s in script if s[0] == "usage"), ("usage", 10, 5))
    pieces = [_anthropic_start(usage)]
    index, open_kind = -1, None
    for step in script:
        kind = step[0]
        block = None
        if kind == "call":
            block = {"type": "tool_use", "id": step[2], "name": step[3], "input": {}}
        elif kind == "redacted":  # a whole block, no deltas
            block = {"type": "redacted_thinking", "data": step[1]}
        elif kind in _ANTHROPIC_BLOCKS and open_kind != kind:
            block = _ANTHROPIC_BLOCKS[kind]
        if block is not None:  # close the open block, start the next one
            if open_kind is not None:
                pieces.append(_sse_event({"type": "content_block_stop", "index": index}))
            index, open_kind = index + 1, kind
            start = {"type": "content_block_start", "index": index, "content_block": block}
            pieces.append(_sse_event(start))
        delta = _anthropic_delta(step)
        if delta is not None:
            pieces.append(
                _sse_event({"type": "content_block_delta", "index": index, "delta": delta})
            )
    if open_kind is not None:
        pieces.append(_sse_event({"type": "content_block_stop", "index": index}))
    stop = "tool_use" if any(s[0] == "call" for s in script) else "end_turn"
    end = {"stop_reason": _finish(script, stop), "stop_sequence": None}
    pieces.append(
        _sse_event({"type": "message_delta", "delta": end, "usage": {"output_tokens": usage[2]}})
    )
    pieces.append(_sse_event({"type": "message_stop"}))
    return Reply(pieces, content_type="text/event-stream; charset=utf-8", path="/v1/messages")


def gemini_reply(script: list[tuple], model: str = "gemini-2.5-flash") -> Reply:
    args = _call_args(script)

    def response(parts: list[dict]) -> bytes:
        body: dict[str, Any] = {"modelVersion": model, "responseId": "r1"}
        body["candidates"] = [{"content": {"parts": parts, "role": "model"}, "index": 0}]
        return f"data: {json.dumps(body)}\r\n\r\n".encode()

    pieces, signature, usage = [], None, None
    for step in script:
        kind = step[0]
        if kind == "text":
            pieces.append(response([{"text": step[1]}]))
        elif kind == "thinking":
            pieces.append(response([{"text": step[1], "thought": True}]))
        elif kind == "signature":
            signature = step[1]
        elif kind == "call":
            part: dict[str, Any] = {
                "functionCall": {
                    "name": step[3],
                    "args": json.loads(args.get(step[1], "{}") or "{}"),
                }
            }
            if signature is not None:
                part["thoughtSignature"], signature = signature, None
            pieces.append(response([part]))
        elif kind == "usage":
            usage = {
                "promptTokenCount": step[1],
                "candidatesTokenCount": step[2],
                "totalTokenCount": step[1] + step[2],
            }
            if len(step) > 3:
                usage["cachedContentTokenCount"] = step[3]
    # the last event: the finish reason, with the usage (Gemini sends usage on every event;
    # the last one counts)
    body: dict[str, Any] = {"modelVersion": model, "responseId": "r1"}
    body["candidates"] = [{"finishReason": _finish(script, "STOP"), "index": 0}]
    if usage is not None:
        body["usageMetadata"] = usage
    pieces.append(f"data: {json.dumps(body)}\r\n\r\n".encode())
    return Reply(pieces, content_type=SSE, path=f"/v1beta/models/{model}:streamGenerateContent")


def _dashscope_message(step: tuple) -> dict | None:
    kind = step[0]
    if kind == "text":
        return {"role": "assistant", "content": step[1]}
    if kind == "thinking":
        return {"role": "assistant", "content": "", "reasoning_content": step[1]}
    if kind == "call":
        function: dict[str, Any] = {"name": step[3], "arguments": ""}
        call = {"index": step[1], "id": step[2], "type": "function", "function": function}
    elif kind == "args":  # later frames: empty id, no name
        call = {"index": step[1], "id": "", "type": "function", "function": {"arguments": step[2]}}
    else:
        return None
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def dashscope_reply(script: list[tuple]) -> Reply:
    usage_step = next((s for s in script if s[0] == "usage"), ("usage", 10, 5))
    frames = [m for m in map(_dashscope_message, script) if m is not None]
    frames.append({"role": "assistant", "content": ""})
    pieces = []
    for number, message in enumerate(frames, 1):
        last = number == len(frames)
        out = usage_step[2] if last else min(number, usage_step[2])  # cumulative counts
        finish = _finish(script) if last else "null"  # the string "null", as DashScope sends it
        body = {
            "output": {"choices": [{"message": message, "index": 0, "finish_reason": finish}]},
            "usage": {
                "input_tokens": usage_step[1],
                "output_tokens": out,
                "total_tokens": usage_step[1] + out,
                "prompt_tokens_details": {
                    "cached_tokens": usage_step[3] if len(usage_step) > 3 else 0,
                    "cache_creation_input_tokens": usage_step[4] if len(usage_step) > 4 else 0,
                },
            },
            "request_id": "req-1",
        }
        frame = f"id:{number}\nevent:result\n:HTTP_STATUS/200\ndata:{json.dumps(body)}\n\n"
        pieces.append(frame.encode())
    path = "/api/v1/services/aigc/text-generation/generation"
    return Reply(pieces, content_type="text/event-stream;charset=UTF-8", path=path)


def ollama_reply(script: list[tuple]) -> Reply:
    args = _call_args(script)
    lines, usage = [], ("usage", 10, 5)

    def line(message: dict, **extra: Any) -> bytes:
        body = {
            "model": "llama3.1",
            "created_at": "2026-11-30T00:00:00Z",
            "message": {"role": "assistant", "content": "", **message},
            "done": False,
            **extra,
        }
        return (json.dumps(body) + "\n").encode()

    for step in script:
        kind = step[0]
        if kind == "text":
            lines.append(line({"content": step[1]}))
        elif kind == "thinking":
            lines.append(line({"thinking": step[1]}))
        elif kind == "call":
            call = {
                "function": {
                    "name": step[3],
                    "arguments": json.loads(args.get(step[1], "{}") or "{}"),
                }
            }
            lines.append(line({"tool_calls": [call]}))
        elif kind == "usage":
            usage = step
    lines.append(
        line(
            {},
            done=True,
            done_reason=_finish(script, "stop"),
            prompt_eval_count=usage[1],
            eval_count=usage[2],
        )
    )
    return Reply(lines, content_type="application/x-ndjson", path="/api/chat")


BUILDERS = {
    "openai": openai_reply,
    "anthropic": anthropic_reply,
    "gemini": gemini_reply,
    "dashscope": dashscope_reply,
    "ollama": ollama_reply,
}


def stream_reply(provider: str, script: list[tuple]) -> Reply:
    return BUILDERS[provider](script)


def error_reply(
    provider: str, status: int, message: str, *, code: str = "", headers: dict | None = None
) -> Reply:
    """An error answer in the provider's published error envelope."""
    if provider == "openai":
        body: dict[str, Any] = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": code or None,
            }
        }
    elif provider == "anthropic":
        body = {
            "type": "error",
            "error": {"type": code or "invalid_request_error", "message": message},
            "request_id": "req_1",
        }
    elif provider == "gemini":
        body = {"error": {"code": status, "message": message, "status": code or "INVALID_ARGUMENT"}}
        if headers and "retryDelay" in headers:
            body["error"]["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": headers.pop("retryDelay"),
                }
            ]
    elif provider == "dashscope":
        body = {"code": code or "InvalidParameter", "message": message, "request_id": "req-1"}
    else:
        body = {"error": message}
    return Reply(json.dumps(body).encode(), status=status, headers=dict(headers or {}))
