"""`Skill` and the `SKILL.md` parser: YAML front matter (`name`, `description`) and a body."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.errors import SkillError

__all__ = ["SKILL_FILE", "Skill", "parse_skill"]

SKILL_FILE = "SKILL.md"
_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class Skill(BaseModel):
    """A folder of instructions (and optional scripts and resources) for one kind of task."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
    """How the model opens it (letters, digits, `-`, `_`, `.`, `:`)."""
    description: str = Field(min_length=1, max_length=1024)
    """What it is for and when to use it: all the model sees until it opens the skill."""
    directory: str
    """The absolute path of its folder (scripts and resources are relative to it)."""
    file: str
    """The absolute path of its `SKILL.md`."""
    body: str = ""
    """The instructions after the front matter."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Other front-matter fields (e.g. `license`, `allowed-tools`)."""


def _field_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "front matter"
        parts.append(f"`{where}`: {err['msg']}")
    return "; ".join(parts)


def parse_skill(path: Path, text: str) -> Skill:
    """Parse the text of a `SKILL.md` at `path`; `SkillError` names the file and the fault."""
    match = _FRONT.match(text)
    if match is None:
        raise SkillError(
            f"{path}: a SKILL.md must start with YAML front matter between `---` lines, "
            "with at least `name:` and `description:`"
        )
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise SkillError(f"{path}: the front matter is not valid YAML{where}: {exc}") from None
    if not isinstance(data, dict):
        raise SkillError(
            f"{path}: the front matter must be a mapping with `name:` and `description:`, "
            f"got {type(data).__name__}"
        )
    known = {"name", "description"}
    fields = {k: v for k, v in data.items() if k in known}
    if isinstance(fields.get("description"), str):
        fields["description"] = " ".join(fields["description"].split())
    try:
        return Skill(
            **fields,
            directory=str(path.parent.resolve()),
            file=str(path.resolve()),
            body=text[match.end() :].strip(),
            metadata={str(k): v for k, v in data.items() if k not in known},
        )
    except ValidationError as exc:
        raise SkillError(f"{path}: invalid front matter: {_field_errors(exc)}") from None
