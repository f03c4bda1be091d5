"""Sub-agents of the chat: the general-purpose `Task`, and definitions from `*.md` files.

A definition is a Markdown file with YAML front matter (`name`, `description`, `tools`: the
built-in tools it may use, `model`: a `provider:model` string) and the system prompt as
its body. Definitions load from `~/.config/tether/agents/` (the user's own) and from the
project's `.tether/agents/` only when the user trusts the folder. A sub-agent never runs
in a wider permission mode than the chat, and its work dirs are the chat's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tether.agent import Agent, AgentTool
from tether.cli.chat._prompt import environment_prompt
from tether.errors import ChatConfigError
from tether.model import ChatModelBase
from tether.tool import ToolBase, Toolkit

__all__ = ["AgentDefinition", "chat_subagents", "load_definitions", "user_agents_dir"]

_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)
_NAME = re.compile(r"\A[A-Za-z][A-Za-z0-9_-]{0,63}\Z")
_TASK_PROMPT = (
    "You are a sub-agent of a coding assistant. Do the task you are given with your tools, "
    "then answer with what you found or did, briefly and completely: your answer is all "
    "the assistant that called you will see."
)


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One sub-agent definition file."""

    name: str
    description: str
    tools: tuple[str, ...] | None
    """Built-in tools it may use (None: all of them)."""
    model: str | None
    prompt: str
    path: Path


def user_agents_dir() -> Path:
    """`$XDG_CONFIG_HOME/tether/agents`, else `~/.config/tether/agents`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tether" / "agents"


def _parse(path: Path) -> AgentDefinition:
    import yaml  # only when there are definitions

    text = path.read_text(encoding="utf-8")
    match = _FRONT.match(text)
    if match is None:
        raise ChatConfigError(
            f"{path}: a sub-agent definition starts with YAML front matter between `---` "
            "lines (name, description, tools, model), then the system prompt"
        )
    try:
        data = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ChatConfigError(f"{path}: the front matter is not YAML ({exc})") from None
    if not isinstance(data, dict):
        raise ChatConfigError(f"{path}: the front matter must be a mapping")
    name = str(data.get("name") or path.stem)
    if not _NAME.match(name):
        raise ChatConfigError(
            f"{path}: sub-agent name {name!r} must be letters, digits, '_' or '-' (a tool name)"
        )
    tools = data.get("tools")
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",") if t.strip()]
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, str) for t in tools)
    ):
        raise ChatConfigError(
            f"{path}: `tools` is a list of tool names (or one comma-separated line)"
        )
    model = data.get("model")
    return AgentDefinition(
        name=name,
        description=str(data.get("description") or f"The {name} sub-agent."),
        tools=tuple(tools) if tools is not None else None,
        model=str(model) if model else None,
        prompt=match.group(2).strip(),
        path=path,
    )


def load_definitions(root: Path | None, *, trusted: bool) -> list[AgentDefinition]:
    """The user's definitions, then the project's (only if `trusted`); a project one wins."""
    folders = [user_agents_dir()]
    if trusted and root is not None:
        folders.append(root / ".tether" / "agents")
    found: dict[str, AgentDefinition] = {}
    for folder in folders:
        if folder.is_dir():
            for path in sorted(folder.glob("*.md")):
                definition = _parse(path)
                found[definition.name] = definition
    return list(found.values())


def _builtins() -> list[ToolBase]:
    from tether.tool.builtin import Bash, Edit, Glob, Grep, Read, Write

    return [Bash(), Read(), Write(), Edit(), Grep(), Glob()]


def _model(spec: str | None, default: ChatModelBase) -> ChatModelBase:
    if spec is None:
        return default
    from tether.model import from_string

    try:
        return from_string(spec)
    except Exception as exc:
        raise ChatConfigError(f"sub-agent model {spec!r}: {exc}") from None


def chat_subagents(
    definitions: list[AgentDefinition], model: ChatModelBase, cwd: Path, add_dirs: tuple[Path, ...]
) -> list[AgentTool]:
    """`Task` (every built-in tool) and one tool per definition, on the chat's model."""
    prompt = environment_prompt(cwd, add_dirs)
    task = Agent("Task", f"{_TASK_PROMPT}\n\n{prompt}", model, Toolkit(tools=_builtins()))
    tools = [
        task.as_tool(
            description="Hand a self-contained task (a search across the code, a focused "
            "change, a question that needs many reads) to a general-purpose sub-agent with "
            "the same tools; you get only its final answer, which keeps your context small. "
            "Write the task with everything it needs: it sees nothing else."
        )
    ]
    for d in definitions:
        builtins = _builtins()
        if d.tools is not None:
            unknown = sorted(set(d.tools) - {t.name for t in builtins})
            if unknown:
                raise ChatConfigError(
                    f"{d.path}: unknown tools {unknown}; use built-in tool names "
                    f"({', '.join(t.name for t in builtins)})"
                )
            builtins = [t for t in builtins if t.name in d.tools]
        agent = Agent(d.name, f"{d.prompt}\n\n{prompt}", _model(d.model, model),
                      Toolkit(tools=builtins))  # fmt: skip
        tools.append(agent.as_tool(description=d.description))
    return tools
