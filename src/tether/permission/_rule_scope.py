"""Whether a rule sent with a confirmation stays within what the call was offered.

Checked by meaning, not by shape: a rule is accepted if it is narrower than a suggested
one (same tool, the same command prefix extended, a path pattern whose fixed part lies
inside the suggested folder) or names exactly the call (the whole command; one file,
never a directory: a directory pattern covers its subtree, however plain it looks).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from tether.permission._resolve import inside, real_dir, work_dir_tuple
from tether.permission._shell_rules import shell_words
from tether.permission._types import PermissionContext, PermissionRule

__all__ = ["exact_path_rule_problem", "narrower_than"]

_WILD = frozenset("*?[\\!")
_WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_READ_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"})


@dataclass(frozen=True, slots=True)
class _Anchored:
    """A path pattern as fixed directories (one per base) and the rest after them."""

    bases: tuple[str, ...]
    rest: tuple[str, ...]


def _anchored(pattern: str, context: PermissionContext) -> _Anchored | None:
    """The fixed part of a gitignore-style path pattern; `None` if it floats or climbs.

    `name` without a slash matches at any depth (broader than any one folder), and a `..`
    may climb out, so neither is ever provably inside anything.
    """
    if pattern.startswith("//"):
        roots: tuple[str, ...] = ("/",)
        body = pattern[2:]
    elif pattern == "~" or pattern.startswith("~/"):
        roots = (real_dir(os.path.expanduser("~")),)
        body = pattern[2:]
    else:
        body = pattern.removeprefix("./")
        if "/" not in body.rstrip("/"):
            if not pattern.startswith(("/", "./")):
                return None  # floats: matches at any depth
        roots = work_dir_tuple(context)
        body = body.lstrip("/")
    parts = [p for p in body.split("/") if p]
    if ".." in parts or "." in parts:
        return None
    fixed: list[str] = []
    for part in parts:
        if any(c in _WILD for c in part):
            break
        fixed.append(part)
    rest = tuple(parts[len(fixed) :])
    return _Anchored(tuple(os.path.join(root, *fixed) for root in roots), rest)


def _tool_within(rule: str, offered: str) -> bool:
    if rule == offered:
        return True
    return (offered == "Edit" and rule in _WRITE_TOOLS) or (
        offered == "Read" and rule in _READ_TOOLS
    )


def _path_within(rule: str, offered: str, context: PermissionContext) -> bool:
    outer = _anchored(offered, context)
    inner = _anchored(rule, context)
    if outer is None or inner is None or outer.rest != ("**",):
        return False  # only a folder (`dir/**`) has a provable inside
    return all(any(inside(base, o) for o in outer.bases) for base in inner.bases)


def _shell_within(rule: str, offered: str) -> bool:
    inner, outer = shell_words(rule), shell_words(offered)
    if inner is None or outer is None:
        return False
    (inner_words, inner_prefix), (outer_words, outer_prefix) = inner, outer
    if not outer_prefix:
        return not inner_prefix and inner_words == outer_words
    return inner_words[: len(outer_words)] == outer_words


def narrower_than(
    rule: PermissionRule,
    offered: Sequence[PermissionRule],
    context: PermissionContext,
    *,
    shell: bool,
) -> bool:
    """Whether `rule` matches a subset of what one of the `offered` rules matches.

    Args:
        rule: The rule sent with the confirmation.
        offered: The rules suggested for the call.
        context: Gives the work dirs that relative patterns are taken from.
        shell: True for `Bash` rules (command words), False for path patterns.
    """
    content = rule.rule_content
    for outer in offered:
        if not _tool_within(rule.tool_name, outer.tool_name):
            continue
        if outer.rule_content is None:
            return True
        if content is None:
            continue
        if content == outer.rule_content:
            return True
        if shell and _shell_within(content, outer.rule_content):
            return True
        if not shell and _path_within(content, outer.rule_content, context):
            return True
    return False


def exact_path_rule_problem(rule: PermissionRule, context: PermissionContext) -> str | None:
    """Why a path rule is not one file exactly (`None` if it is).

    Exact means anchored (`/x`, `a/b`, `~/x`, `//abs`), no wildcard, no `..`, and not a
    directory: a directory pattern covers its whole subtree.
    """
    content = rule.rule_content
    if content is None:
        return "names no path, so it covers every path"
    found = _anchored(content, context)
    if found is None:
        return "matches at any depth or climbs with `..`"
    if found.rest:
        return "has wildcards"
    if any(os.path.isdir(base) for base in found.bases) or content.endswith("/"):
        return "names a directory, which covers everything below it"
    return None
