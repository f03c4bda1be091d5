"""Skill loaders: tool sources that list skills in the prompt and open them with `Skill`."""

from __future__ import annotations

import asyncio
import logging
import os
from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import SkillError
from tether.plugin import Plugin
from tether.skill._skill import SKILL_FILE, Skill, parse_skill
from tether.skill._tool import SkillTool
from tether.tool import PromptParts, ToolBase, ToolSourceBase

if TYPE_CHECKING:
    from tether.state import AgentState

__all__ = ["LocalSkillLoader", "SkillLoaderBase", "render_skill_list"]

logger = logging.getLogger("tether.skill")


def render_skill_list(skills: list[Skill], tool_name: str = "Skill") -> str:
    """The system-prompt block: each skill's name, description and folder, nothing more."""
    lines = [
        "# Skills",
        "Skills are folders of instructions, scripts and resources for particular tasks. "
        "Only their names and descriptions are listed here. When a task matches a skill, "
        f"call the `{tool_name}` tool with its name to read its instructions, then follow them.",
        "",
    ]
    lines += [f"- {s.name}: {s.description} (folder: {s.directory})" for s in skills]
    return "\n".join(lines)


class SkillLoaderBase(ToolSourceBase):
    """A set of skills: listed (name and description) in the prompt, opened by a tool.

    Subclasses implement `skills(state)`; it is called at every step, so it should
    answer from a cache.
    """

    name = "skills"
    tool_name = "Skill"
    """The name of the tool that opens a skill."""

    @abstractmethod
    async def skills(self, state: AgentState) -> list[Skill]:
        """The skills available now."""

    @property
    def skill_tool(self) -> SkillTool:
        """The tool that returns a skill's instructions."""
        tool: SkillTool | None = self.__dict__.get("_skill_tool")
        if tool is None:
            tool = SkillTool(self.skills, self.tool_name)
            self.__dict__["_skill_tool"] = tool
        return tool

    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        """The `Skill` tool, when there is at least one skill."""
        return [self.skill_tool] if await self.skills(state) else []

    async def prompt(self, state: AgentState) -> PromptParts | None:
        """The list of skills (stable text: it changes only when the skills do)."""
        skills = await self.skills(state)
        if not skills:
            return None
        cached: tuple[list[Skill], str] | None = self.__dict__.get("_rendered")
        if cached is None or cached[0] is not skills:
            cached = (skills, render_skill_list(skills, self.tool_name))
            self.__dict__["_rendered"] = cached
        return PromptParts(stable=cached[1])

    def unavailable_hint(self, tool_name: str, state: AgentState) -> str | None:
        """Explain a call to the skill tool while no skill is installed."""
        if tool_name == self.tool_name:
            return f"Error: no skills are installed, so {tool_name!r} cannot be called."
        return None

    def as_plugin(
        self,
        module_name: str | None = None,
        description: str | None = None,
        sleep_brief: str | None = None,
        **kwargs: Any,
    ) -> Plugin:
        """These skills as a sleepable plugin: not even listed until the model wakes it.

        Args:
            module_name: The id the model activates it by (default: `skills`).
            description: What the skills are for (default: a generic line).
            sleep_brief: The line shown while it sleeps (default: `description`).
            **kwargs: Passed on to `tether.plugin.Plugin.from_source`.
        """
        text = description or "Skills: instructions and scripts for particular tasks."
        return Plugin.from_source(
            self,
            module_name=module_name or "skills",
            description=text,
            sleep_brief=text if sleep_brief is None else sleep_brief,
            **kwargs,
        )


Signature = tuple[tuple[str, int, int], ...]


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _candidates(root: Path) -> list[Path]:
    files = [root / SKILL_FILE]
    try:
        children = sorted(e.name for e in os.scandir(root) if e.is_dir() and e.name[0] != ".")
    except OSError:
        return []
    return files + [root / child / SKILL_FILE for child in children]


def signature(root: Path) -> Signature:
    """What changes when a skill is added, removed or edited (stats only, no reads)."""
    entries = []
    for path in _candidates(root):
        stat = _stat(str(path))
        if stat is not None:
            entries.append((str(path), *stat))
    return tuple(entries)


def load_folders(roots: Sequence[Path]) -> list[Skill]:
    """Read every `SKILL.md` of each folder (itself and its direct subfolders).

    A skill name used twice, in one folder or across folders, is an error naming both.
    """
    skills: list[Skill] = []
    seen: dict[str, Skill] = {}
    for path in (p for root in roots for p in _candidates(root)):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            raise SkillError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
        skill = parse_skill(path, text)
        if skill.name in seen:
            raise SkillError(
                f"{path}: skill name {skill.name!r} is already used by {seen[skill.name].file}; "
                "give one of them another `name:`"
            )
        seen[skill.name] = skill
        skills.append(skill)
    return skills


class LocalSkillLoader(SkillLoaderBase):
    """Skills in one or more folders: `<dir>/<name>/SKILL.md` (and `<dir>/SKILL.md`).

    All the folders' skills are opened by one tool, so `Toolkit(skills_or_loaders=[
    "./skills", "~/.tether/skills"])` works; two skills with the same name are an error.
    Loaded at construction (a malformed file raises `SkillError` naming it); files
    changed on disk are picked up at the next reply. A file that becomes malformed
    later is reported in the log and its previous version kept.
    """

    def __init__(
        self, directory: str | Path | Sequence[str | Path], *, tool_name: str = "Skill"
    ) -> None:
        given = [directory] if isinstance(directory, str | Path) else list(directory)
        if not given:
            raise SkillError("no skills folder given; pass a folder path")
        roots = []
        for item in given:
            root = Path(item).expanduser()
            if not root.is_dir():
                raise SkillError(
                    f"skills folder {str(item)!r} does not exist or is not a folder "
                    f"(resolved to {root.resolve()}); create it or fix the path"
                )
            roots.append(root.resolve())
        self.directories: list[Path] = list(dict.fromkeys(roots))
        """The folders, in the order given (a folder given twice is read once)."""
        self.directory = self.directories[0]
        """The first folder."""
        self.tool_name = tool_name
        self.name = "skills:" + ",".join(d.name for d in self.directories)
        self._signature = self._stats()
        self._skills = load_folders(self.directories)
        self._checked_for: object = object()

    def _stats(self) -> Signature:
        return tuple(entry for root in self.directories for entry in signature(root))

    async def skills(self, state: AgentState) -> list[Skill]:
        """The skills, re-checked on disk once per reply (by file stats)."""
        reply = getattr(state, "reply", None)
        key = getattr(reply, "reply_id", None)
        if key is None or key != self._checked_for:
            self._checked_for = key
            await asyncio.to_thread(self._reload_if_changed)
        return self._skills

    def _reload_if_changed(self) -> None:
        current = self._stats()
        if current == self._signature:
            return
        try:
            skills = load_folders(self.directories)
        except SkillError as exc:
            logger.warning("%s; keeping the skills loaded before", exc)
            return
        self._signature = current
        self._skills = skills

    def __repr__(self) -> str:
        folders = ", ".join(repr(str(d)) for d in self.directories)
        return f"<LocalSkillLoader {folders} ({len(self._skills)} skills)>"
