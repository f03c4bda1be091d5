"""The permission rule and its behaviour, below `message` so that blocks can carry rules.

`ToolCallBlock.suggested_rules` holds `PermissionRule`s, and `tether.permission` imports
`message`; the two types live here, at the ground level, and `tether.permission`
re-exports them (the public names are `tether.permission.PermissionRule` and
`tether.permission.PermissionBehavior`).
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from tether.errors import PermissionRuleError

__all__ = ["PermissionBehavior", "PermissionRule"]


class PermissionBehavior(StrEnum):
    """The outcome of a permission check."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


_RULE_RE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class PermissionRule(BaseModel):
    """A rule `Tool` or `Tool(specifier)` with the behaviour it grants.

    Examples: `Bash(git diff:*)`, `Read(src/**)`, `mcp__git__git_status`.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    tool_name: str
    """The tool the rule applies to."""
    rule_content: str | None = None
    """The specifier inside the parentheses; `None` matches every call of the tool."""
    behavior: PermissionBehavior = PermissionBehavior.ALLOW
    """What a match decides."""
    source: str = "user"
    """Where the rule came from (`user`, `session`, `config`, ...)."""

    @classmethod
    def parse(
        cls,
        text: str,
        behavior: PermissionBehavior = PermissionBehavior.ALLOW,
        source: str = "user",
    ) -> PermissionRule:
        """Parse the text form `Tool` or `Tool(specifier)`."""
        match = _RULE_RE.match(text)
        if match is None:
            raise PermissionRuleError(
                f"cannot parse permission rule {text!r}; write `Tool` or `Tool(specifier)`, "
                "e.g. `Bash(git diff:*)` or `Read(src/**)`"
            )
        content = match.group(2)
        if content is not None:
            content = content.strip()
            if not content:
                raise PermissionRuleError(
                    f"permission rule {text!r} has empty parentheses; "
                    f"write `{match.group(1)}` to match every call"
                )
        return cls(tool_name=match.group(1), rule_content=content, behavior=behavior, source=source)

    def __str__(self) -> str:
        if self.rule_content is None:
            return self.tool_name
        return f"{self.tool_name}({self.rule_content})"
