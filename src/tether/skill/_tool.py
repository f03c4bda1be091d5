"""The `Skill` tool: the model opens a skill by name and reads its instructions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.message import ToolResultBlock, ToolResultState
from tether.permission import PermissionBehavior, PermissionContext, PermissionDecision
from tether.skill._skill import SKILL_FILE, Skill
from tether.tool import ToolBase, ToolContext, ToolOutput

__all__ = ["SkillInput", "SkillTool", "render_skill"]

_MAX_FILES = 50


class SkillInput(BaseModel):
    """Open a skill."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """The skill's name, exactly as listed under "Skills" in the system prompt."""


SkillsFn = Callable[[Any], Awaitable[list[Skill]]]


def _files(directory: str) -> list[str]:
    root = Path(directory)
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != SKILL_FILE and not path.name.startswith("."):
            found.append(str(path.relative_to(root)))
            if len(found) > _MAX_FILES:
                break
    return found


def render_skill(skill: Skill, files: list[str]) -> str:
    """What the model reads when it opens `skill`."""
    lines = [
        f"# Skill: {skill.name}",
        f"Folder: {skill.directory}",
        "(Paths in these instructions are relative to this folder; run its scripts with "
        "Bash and read its files with Read.)",
    ]
    if files:
        shown = files[:_MAX_FILES]
        more = " ..." if len(files) > _MAX_FILES else ""
        lines.append("Files: " + ", ".join(shown) + more)
    lines += ["", skill.body or "(This skill has no instructions beyond its description.)"]
    return "\n".join(lines)


class SkillTool(ToolBase):
    """Returns a skill's instructions; read-only and always allowed."""

    input_model = SkillInput
    is_read_only = True
    is_concurrency_safe = True

    def __init__(self, skills: SkillsFn, name: str = "Skill") -> None:
        self.name = name
        self.description = (
            "Open a skill: returns its full instructions and the folder with its scripts "
            "and resources. Call it before a task that matches a skill's description."
        )
        self._skills = skills

    is_permission_check_local = True  # decides from the arguments alone

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """Reading a skill's instructions is always allowed."""
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="skills are readable")

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Return the skill's instructions, or an error naming the skills there are."""
        assert isinstance(tool_input, SkillInput)
        skills = await self._skills(context.session_state)
        by_name = {s.name: s for s in skills}
        skill = by_name.get(tool_input.name.strip())
        if skill is None:
            names = ", ".join(sorted(by_name)) or "(none)"
            return ToolResultBlock(
                id="",
                name="",
                output=f"Error: there is no skill named {tool_input.name!r}. Skills: {names}.",
                state=ToolResultState.ERROR,
            )
        files = await asyncio.to_thread(_files, skill.directory)
        return render_skill(skill, files)
