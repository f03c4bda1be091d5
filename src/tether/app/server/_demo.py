"""The agent `tether serve` runs with no `--agents`: offline, with a model that follows rules.

Its model needs no network: it reads the last user message and answers with tool calls
(`count ...` → `word_count`, `save ...` → `save_note`, which asks first, `open <url>` →
`open_page`, run by the client) or a short text; after tool results it reports them.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from tether.agent import Agent
from tether.message import ToolResultBlock
from tether.model import ChatModelBase, ChatRequest, ModelDelta, TextDelta, ToolCallDelta
from tether.tool import Toolkit, tool

__all__ = ["RuleChatModel", "demo_agents"]

_HELP = (
    "I am tether's offline demo agent. Try: `count the words of tether keeps agents "
    "honest`, `save a note: buy milk` (I ask before writing), or `open https://example.org` "
    "(your client runs that one)."
)


class RuleChatModel(ChatModelBase):
    """A deterministic offline model: keywords in the last user message pick a tool."""

    def __init__(self) -> None:
        super().__init__("rule-demo", context_length=128_000)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """Answer by rule (see the module docstring)."""
        last = request.messages[-1] if request.messages else None
        results = last.get_content_blocks(ToolResultBlock) if last is not None else []
        if last is not None and last.role == "assistant" and results:
            text = "Done. " + " ".join(f"{r.name}: {r.get_text()}." for r in results)
            yield TextDelta(text=text)
            return
        user = next((m for m in reversed(request.messages) if m.role == "user"), None)
        said = (user.get_text_content() or "") if user is not None else ""
        call = _pick(said)
        if call is None:
            yield TextDelta(text=_HELP if not said else f"You said: {said}. {_HELP}")
            return
        name, arguments = call
        yield ToolCallDelta(
            index=0, id=f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=json.dumps(arguments)
        )


def _pick(said: str) -> tuple[str, dict[str, str]] | None:
    lowered = said.lower()
    url = re.search(r"https?://\S+", said)
    if "open" in lowered and url:
        return "open_page", {"url": url.group(0)}
    if "save" in lowered:
        text = said.split(":", 1)[1].strip() if ":" in said else said
        name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:30] or "note"
        return "save_note", {"name": name, "text": text}
    if "count" in lowered:
        text = re.split(r"\bof\b", said, maxsplit=1)[-1].strip()
        return "word_count", {"text": text}
    return None


def demo_agents(notes_dir: str | Path = ".tether/notes") -> dict[str, Agent]:
    """The offline demo agent, `notes`, keeping notes as markdown files in `notes_dir`."""
    folder = Path(notes_dir)

    @tool(is_read_only=True, is_concurrency_safe=True)
    def word_count(text: str) -> int:
        """Count the words of a text."""
        return len(text.split())

    @tool(requires_confirmation=True)
    def save_note(name: str, text: str) -> str:
        """Save a note as a markdown file (asks before writing)."""
        safe = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "note"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{safe}.md").write_text(text)
        return f"saved {safe}.md"

    @tool(is_external_tool=True)
    def open_page(url: str) -> str:
        """Open a web page in the user's browser (the client runs it and sends the result)."""
        raise NotImplementedError("run by the client")  # pragma: no cover

    agent = Agent(
        name="notes",
        system_prompt="You keep the user's notes (tether's offline demo agent).",
        model=RuleChatModel(),
        toolkit=Toolkit(tools=[word_count, save_note, open_page]),
    )
    return {"notes": agent}
