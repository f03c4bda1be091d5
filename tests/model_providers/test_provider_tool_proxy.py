"""The proxy tool of chat-completions caching on the wire (OpenAI, DashScope): the tools array
stays the same when a plugin wakes, the wake's answer carries the woken tools' definitions,
calls of them go through the proxy, and the model's proxy calls come back as the real ones."""

import json

import pytest
from provider_replay import ReplayServer
from provider_wire import make_model, stream_reply

from tether.message import AssistantMsg, SystemMsg, ToolCallBlock, ToolResultBlock, UserMsg
from tether.model import ChatRequest, PromptCache
from tether.model._assembler import StreamAssembler
from tether.tool import DEFERRABLE_KEY, TOOL_REFERENCES_KEY

PROXY = "call_plugin_tool"
ACTIVATE = {"name": "activate_plugin", "description": "Wake.", "parameters": {"type": "object"}}
ADD = {
    "name": "add_note",
    "description": "Add a note.",
    "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
}
LIST = {"name": "list_notes", "description": "List notes.", "parameters": {"type": "object"}}
STABLE = [ACTIVATE, {**ADD, DEFERRABLE_KEY: True}, {**LIST, DEFERRABLE_KEY: True}]
CHAT = ["openai", "dashscope"]


def woken(*, used: bool) -> ChatRequest:
    """A request after `note` woke (its answer loads both tools); `used`: add_note ran."""
    wake = ToolCallBlock(id="c1", name="activate_plugin", input='{"module_name": "note"}')
    answer = ToolResultBlock(
        id="c1",
        name="activate_plugin",
        output="Plugin `note` is now activated.",
        metadata={TOOL_REFERENCES_KEY: ["add_note", "list_notes"]},
    )
    steps = [wake, answer]
    if used:
        call = ToolCallBlock(id="c2", name="add_note", input='{"title": "a"}')
        steps += [call, ToolResultBlock(id="c2", name="add_note", output="saved")]
    messages = [
        SystemMsg("system", "Be brief."),
        UserMsg("user", "note a"),
        AssistantMsg("a", steps),
    ]
    return ChatRequest(messages, tools=[ACTIVATE, ADD, LIST], stable_tools=STABLE)


def asleep() -> ChatRequest:
    messages = [SystemMsg("system", "Be brief."), UserMsg("user", "note a")]
    return ChatRequest(messages, tools=[ACTIVATE], stable_tools=STABLE)


async def send(server: ReplayServer, provider: str, request: ChatRequest, script, **kwargs):
    server.add(stream_reply(provider, script))
    assembler = StreamAssembler(reply_id="r1", emit=False)
    async for delta in make_model(provider, server.url, **kwargs).stream(request):
        assembler.feed(delta)
    assembler.close()
    body = server.requests[-1].json()
    if provider == "dashscope":  # the native protocol nests them
        body = {"messages": body["input"]["messages"], "tools": body["parameters"]["tools"]}
    return assembler.blocks, body


def names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]


def text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


@pytest.mark.parametrize("provider", CHAT)
async def test_a_wake_leaves_the_tools_array_as_it_was(server, provider: str) -> None:
    _, before = await send(server, provider, asleep(), [("text", "ok")])
    _, after = await send(server, provider, woken(used=True), [("text", "ok")])
    assert names(before) == ["activate_plugin", PROXY]
    assert after["tools"] == before["tools"]  # byte-identical: the cached prefix holds
    messages = after["messages"]
    result = next(m for m in messages if m["role"] == "tool")
    definitions = text(result).split('<tool_definitions call_with="call_plugin_tool">\n')[1]
    loaded = [json.loads(line) for line in definitions.split("\n")[:-1]]
    assert loaded == [ADD, LIST]  # the definitions as the tools' own schemas, in the order asked
    calls = [c for m in messages for c in m.get("tool_calls") or ()]
    assert [c["function"]["name"] for c in calls] == ["activate_plugin", PROXY]
    proxied = json.loads(calls[1]["function"]["arguments"])
    assert proxied == {"name": "add_note", "arguments": {"title": "a"}}
    if provider == "dashscope":  # a tool message names the function that was called
        assert [m["name"] for m in messages if m["role"] == "tool"] == ["activate_plugin", PROXY]


@pytest.mark.parametrize("provider", CHAT)
async def test_a_proxy_call_comes_back_as_the_call_it_stands_for(server, provider: str) -> None:
    script = [
        ("call", 0, "c3", PROXY),
        ("args", 0, '{"name": "add_'),
        ("args", 0, 'note", "arguments": {"title": "b"}}'),
        ("call", 1, "c4", "activate_plugin"),
        ("args", 1, '{"module_name": "x"}'),
    ]
    blocks, _ = await send(server, provider, woken(used=False), script)
    calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
    assert sorted((c.id, c.name, json.loads(c.input)) for c in calls) == [
        ("c3", "add_note", {"title": "b"}),
        ("c4", "activate_plugin", {"module_name": "x"}),
    ]


@pytest.mark.parametrize("provider", CHAT)
async def test_a_garbled_proxy_call_stays_a_call_of_the_proxy(server, provider: str) -> None:
    script = [("call", 0, "c3", PROXY), ("args", 0, '{"name": 3}')]
    blocks, _ = await send(server, provider, woken(used=False), script)
    calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
    assert [(c.name, c.input) for c in calls] == [(PROXY, '{"name": 3}')]


@pytest.mark.parametrize("provider", CHAT)
@pytest.mark.parametrize("cache", [PromptCache(proxy_tools=False), False])
async def test_without_the_proxy_the_woken_tools_are_functions(server, provider, cache) -> None:
    _, body = await send(server, provider, woken(used=True), [("text", "ok")], prompt_cache=cache)
    assert names(body) == ["activate_plugin", "add_note", "list_notes"]
    assert "<tool_definitions" not in json.dumps(body["messages"])
    calls = [c for m in body["messages"] for c in m.get("tool_calls") or ()]
    assert [c["function"]["name"] for c in calls] == ["activate_plugin", "add_note"]


@pytest.mark.parametrize("provider", CHAT)
async def test_a_woken_tool_no_answer_loads_is_sent_as_a_function(server, provider) -> None:
    # a compression removed the wake: the tool is callable but nothing defines it
    request = woken(used=False)
    request.messages[:] = [request.messages[0], UserMsg("user", "summary: note is awake")]
    _, body = await send(server, provider, request, [("text", "ok")])
    assert names(body) == ["activate_plugin", PROXY, "add_note", "list_notes"]


@pytest.mark.parametrize("provider", CHAT)
async def test_an_agent_tool_named_like_the_proxy_turns_the_proxy_off(server, provider) -> None:
    own = {"name": PROXY, "description": "Mine.", "parameters": {"type": "object"}}
    request = woken(used=True)
    request.tools.append(own)
    args = '{"name": "add_note", "arguments": {}}'
    script = [("call", 0, "c5", PROXY), ("args", 0, args)]
    blocks, body = await send(server, provider, request, script)
    assert names(body) == ["activate_plugin", "add_note", "list_notes", PROXY]
    assert [(b.name, b.input) for b in blocks if isinstance(b, ToolCallBlock)] == [(PROXY, args)]


def test_a_whole_completion_gives_the_proxy_call_as_the_real_one() -> None:
    from types import SimpleNamespace as NS

    from tether.model import ToolCallDelta
    from tether.model.providers._chat_stream import ChatChunkParser

    args = '{"name": "list_notes", "arguments": {"limit": 2}}'
    call = NS(id="c7", index=0, function=NS(name=PROXY, arguments=args))
    message = NS(content="Looking.", tool_calls=[call])
    completion = NS(choices=[NS(message=message, finish_reason="tool_calls")], usage=None)
    deltas = ChatChunkParser(lambda u: u, proxy=True).completion(completion)
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c7", "list_notes", {"limit": 2})
    ]
    plain = ChatChunkParser(lambda u: u).completion(completion)
    assert [d.name for d in plain if isinstance(d, ToolCallDelta)] == [PROXY]


def note_agent(model):
    from tether.agent import Agent
    from tether.plugin import Plugin
    from tether.tool import Toolkit

    saved: dict[str, str] = {}

    def add_note(title: str, content: str) -> str:
        """Save a note.

        Args:
            title: A short title.
            content: The note's text.
        """
        saved[title] = content
        return f"saved {title}"

    plugin = Plugin(
        name="Notes",
        module_name="note",
        description="Manages user notes",
        tools=[add_note],
        allow_sleep=True,
        sleep_brief="Notes; activate to record or look up notes.",
    )
    agent = Agent("a", "Be brief.", model, Toolkit(plugins=[plugin]))
    return agent, saved


def proxy_call(call_id: str, name: str, arguments: dict) -> list:
    args = json.dumps({"name": name, "arguments": arguments})
    return [("call", 0, call_id, PROXY), ("args", 0, args[:9]), ("args", 0, args[9:])]


@pytest.mark.parametrize("provider", CHAT)
async def test_an_agent_wakes_a_plugin_and_runs_its_tool_through_the_proxy(
    server, provider
) -> None:
    note = {"title": "a", "content": "b"}
    server.add(
        stream_reply(
            provider, [("call", 0, "c1", "activate_plugin"), ("args", 0, '{"module_name": "note"}')]
        ),
        stream_reply(provider, proxy_call("c2", "add_note", note)),
        stream_reply(provider, [("text", "Saved.")]),
    )
    agent, saved = note_agent(make_model(provider, server.url))
    reply = await agent.reply(UserMsg("user", "note that a is b"))
    server.assert_done()
    assert saved == {"a": "b"}  # the real tool ran, with the arguments the proxy carried
    assert reply.get_text_content() == "Saved."
    bodies = [r.json() for r in server.requests[-3:]]
    tools = [b["tools"] if "tools" in b else b["parameters"]["tools"] for b in bodies]
    assert tools[0] == tools[1] == tools[2]  # the wake left the tools array as it was
    calls = [b for m in agent.state.context for b in m.content if isinstance(b, ToolCallBlock)]
    assert [c.name for c in calls] == ["activate_plugin", "add_note"]


@pytest.mark.parametrize("provider", CHAT)
async def test_a_proxy_call_of_a_sleeping_plugin_is_refused(server, provider) -> None:
    server.add(
        stream_reply(provider, proxy_call("c1", "add_note", {"title": "a", "content": "b"})),
        stream_reply(provider, [("text", "It sleeps.")]),
    )
    agent, saved = note_agent(make_model(provider, server.url))
    await agent.reply(UserMsg("user", "note that a is b"))
    server.assert_done()
    assert saved == {}  # refused by the loop as before: the plugin sleeps
    results = [b for m in agent.state.context for b in m.content if isinstance(b, ToolResultBlock)]
    assert [r.name for r in results] == ["add_note"] and "activate_plugin" in str(results[0].output)
