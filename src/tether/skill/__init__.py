"""Skills: folders with a `SKILL.md`, listed by name and description, opened on demand."""

from tether.skill._loader import LocalSkillLoader, SkillLoaderBase, render_skill_list
from tether.skill._skill import SKILL_FILE, Skill, parse_skill
from tether.skill._tool import SkillInput, SkillTool, render_skill

__all__ = [
    "SKILL_FILE",
    "LocalSkillLoader",
    "Skill",
    "SkillInput",
    "SkillLoaderBase",
    "SkillTool",
    "parse_skill",
    "render_skill",
    "render_skill_list",
]
