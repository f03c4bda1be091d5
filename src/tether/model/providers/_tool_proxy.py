"""One fixed tool through which a chat-completions model calls the tools of woken plugins.

Chat-completions APIs (OpenAI, DashScope) put the tools before every message in the cached
prefix and have no deferred loading, so a tool list that grows when a plugin wakes (or
shrinks when it sleeps) re-bills the whole request. With prompt caching on, a plugin's
deferrable tools whose definitions a tool result loaded (a wake's answer, see
`TOOL_REFERENCES_KEY`) are not sent as functions: that result carries their definitions as
text, and the model calls them through `PROXY_TOOL` (`{"name": ..., "arguments": {...}}`),
which the parser turns back into the real call. The tools array stays byte-identical for
the whole session (until a compression removes a wake).
"""

from __future__ import annotations

import json
from typing import Any

from tether.message import ToolResultBlock
from tether.model._types import ChatRequest, NamedToolChoice, ToolCallDelta
from tether.model.providers._cache import referenced_tools
from tether.tool import DEFERRABLE_KEY, TOOL_REFERENCES_KEY

__all__ = [
    "PROXY_TOOL",
    "ProxyCalls",
    "ToolProxy",
    "proxy_arguments",
    "proxy_plan",
    "sends_proxy",
    "with_definitions",
]

PROXY_TOOL = "call_plugin_tool"
"""The name of the fixed tool that stands for every loaded plugin tool."""

_PROXY_SCHEMA: dict[str, Any] = {
    "name": PROXY_TOOL,
    "description": (
        "Call a tool of an awake plugin. Its definition (name, description, parameters) is "
        "in the answer that woke the plugin. `name`: that tool's name; `arguments`: an "
        "object matching its parameters."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The plugin tool to call."},
            "arguments": {"type": "object", "description": "Its arguments."},
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    },
}


class ToolProxy:
    """What a request sends through the proxy: the tools to send and the proxied names."""

    __slots__ = ("definitions", "names", "tools")

    def __init__(
        self, tools: list[dict[str, Any]], names: set[str], definitions: dict[str, dict[str, Any]]
    ) -> None:
        self.tools = tools
        """The tools array: fixed tools, the proxy, then loaded tools no result defines."""
        self.names = names
        """Deferrable tools called through the proxy (their calls in history too)."""
        self.definitions = definitions
        """Each proxied tool's definition, as a wake's answer carries it."""


def proxy_plan(request: ChatRequest) -> ToolProxy | None:
    """The proxy for `request`, or `None` when it has no deferrable tools (send as is).

    Proxied: every deferrable tool a tool result in the conversation loads. A callable
    deferrable tool no result loads (a compression removed its plugin's wake) is sent as a
    function after the proxy; tools the stable list lacks (wrapped sources) follow. A
    request that forces a deferrable tool by name is sent as is.
    """
    stable = request.stable_tools
    if stable is None or not request.tools or not any(t.get(DEFERRABLE_KEY) for t in stable):
        return None
    if any(t["name"] == PROXY_TOOL for t in request.tools):
        return None  # a tool of the agent has the name: send as is
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice) and any(
        t["name"] == choice.name and t.get(DEFERRABLE_KEY) for t in stable
    ):
        return None
    callable_ = {t["name"]: t for t in request.tools}
    loaded = referenced_tools(request)
    fixed = [t for t in stable if not t.get(DEFERRABLE_KEY)]
    deferrable = {t["name"]: t for t in stable if t.get(DEFERRABLE_KEY)}
    names = {n for n in deferrable if n in loaded}
    unloaded = [t for n, t in deferrable.items() if n in callable_ and n not in names]
    listed = {t["name"] for t in stable}
    extra = [t for t in request.tools if t["name"] not in listed]
    definitions = {
        n: {k: v for k, v in deferrable[n].items() if k != DEFERRABLE_KEY} for n in names
    }
    return ToolProxy([*fixed, _PROXY_SCHEMA, *unloaded, *extra], names, definitions)


def with_definitions(result: ToolResultBlock, text: str, proxy: ToolProxy) -> str:
    """`text` and, after it, the definitions of the proxied tools `result` loads."""
    wanted = result.metadata.get(TOOL_REFERENCES_KEY) if result.metadata else None
    lines = [
        json.dumps(proxy.definitions[n], ensure_ascii=False, separators=(",", ":"))
        for n in wanted or ()
        if n in proxy.definitions
    ]
    if not lines:
        return text
    body = "\n".join(lines)
    return f'{text}\n\n<tool_definitions call_with="{PROXY_TOOL}">\n{body}\n</tool_definitions>'


def proxy_arguments(name: str, arguments: str) -> str:
    """The proxy's arguments for a call of `name` with `arguments` (a JSON object text)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        value = {}
    if not isinstance(value, dict):
        value = {}
    return json.dumps({"name": name, "arguments": value}, ensure_ascii=False)


class ProxyCalls:
    """Holds back the streamed calls of the proxy and gives each as the real call at the end.

    A proxy call whose arguments are not `{"name": str, "arguments": object}` is given as
    it came (the loop answers it with an unknown-tool error the model reads).
    """

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[int, list[Any]] = {}  # slot -> [id, arguments text]

    def take(self, delta: ToolCallDelta) -> bool:
        """Keep `delta` if it belongs to a proxy call (it is then not passed on)."""
        held = self._calls.get(delta.index)
        if held is None:
            if delta.name != PROXY_TOOL:
                return False
            held = self._calls[delta.index] = [delta.id, ""]
        held[0] = held[0] or delta.id
        held[1] += delta.arguments or ""
        return True

    def release(self) -> list[ToolCallDelta]:
        """The held calls, each as the call it stands for."""
        out: list[ToolCallDelta] = []
        for slot, (call_id, text) in sorted(self._calls.items()):
            name, arguments = PROXY_TOOL, text
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                value = None
            if (
                isinstance(value, dict)
                and isinstance(value.get("name"), str)
                and isinstance(value.get("arguments", {}), dict)
            ):
                name = value["name"]
                arguments = json.dumps(value.get("arguments", {}), ensure_ascii=False)
            out.append(ToolCallDelta(index=slot, id=call_id, name=name, arguments=arguments))
        self._calls.clear()
        return out


def sends_proxy(params: dict[str, Any]) -> bool:
    """Whether chat-completions `params` send the proxy tool (its calls are turned back).

    The proxy, not an agent's own tool of that name (which turns the proxy off).
    """
    return any(t["function"] == _PROXY_SCHEMA for t in params.get("tools", ()))
