"""`@server:uri` in a chat message: the MCP server's resource is read and attached.

Each mention of a configured server's resource is read when the message is sent; its text
follows the message in a `<resource>` block the model reads. A resource that cannot be
read, or has no text, is reported and left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tether.cli._sanitize import visible

if TYPE_CHECKING:
    from tether.mcp import MCPClient

__all__ = ["MAX_RESOURCE_CHARS", "attach_resources"]

MAX_RESOURCE_CHARS = 100_000
"""The most characters of one resource attached (the rest is cut with a note)."""

_MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_-]{1,40}):(\S+)")


async def attach_resources(mcps: Sequence[MCPClient], text: str, say: Callable[[str], None]) -> str:
    """`text` with the resources it mentions (`@server:uri`) attached after it."""
    servers = {client.name: client for client in mcps}
    blocks: list[str] = []
    seen: set[tuple[str, str]] = set()
    for match in _MENTION.finditer(text):
        name, uri = match.group(1), match.group(2).rstrip(".,;:!?)")
        client = servers.get(name)
        if client is None or (name, uri) in seen:
            continue
        seen.add((name, uri))
        try:
            contents = await client.read_resource(uri)
        except Exception as exc:  # the server says why (unknown URI, down, ...)
            say(f"@{name}:{uri} not attached: {exc}")
            continue
        texts = [c["text"] for c in contents if isinstance(c.get("text"), str)]
        if not texts:
            say(f"@{name}:{uri} not attached: it has no text (binary content)")
            continue
        body = "\n".join(texts)
        if len(body) > MAX_RESOURCE_CHARS:
            body = body[:MAX_RESOURCE_CHARS] + f"\n[cut: {len(body)} characters in all]"
        blocks.append(f'<resource server="{name}" uri="{uri}">\n{body}\n</resource>')
        say(f"attached @{visible(name)}:{visible(uri)} ({len(body)} characters)")
    return "\n\n".join([text, *blocks]) if blocks else text
