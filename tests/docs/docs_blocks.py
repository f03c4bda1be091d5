"""Find the ```python blocks of the docs pages, with their test marks.

A block runs as written unless the line before its fence is a mark:

- `<!-- docs-test: skip REASON -->`: not run (the reason is shown as the skip reason);
- `<!-- docs-test: fake-openai -->`: run with `OPENAI_BASE_URL` and `OPENAI_API_KEY` pointing
  at a local server that speaks the OpenAI wire format and answers "Hello from the fake."
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
MARK = re.compile(r"^<!--\s*docs-test:\s*([\w-]+)\s*(.*?)\s*-->$")
MODES = ("run", "skip", "fake-openai")


@dataclass(frozen=True)
class Block:
    """One ```python block of a page."""

    page: str
    line: int
    code: str
    mode: str = "run"
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The user guide's pages (the design notes are decision logs, not guides)."""
    return sorted(p for p in DOCS.rglob("*.md") if "decisions" not in p.relative_to(DOCS).parts[0])


def blocks(path: Path) -> list[Block]:
    """The page's python blocks, in order."""
    page = str(path.relative_to(DOCS))
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```python":
            i += 1
            continue
        mode, reason = "run", ""
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(before)
        if mark:
            mode, reason = mark.group(1), mark.group(2)
        end = i + 1
        while lines[end].strip() != "```":
            end += 1
        indent = len(lines[i]) - len(lines[i].lstrip())
        code = "\n".join(line[indent:] for line in lines[i + 1 : end])
        found.append(Block(page, i + 1, code, mode, reason))
        i = end + 1
    return found
