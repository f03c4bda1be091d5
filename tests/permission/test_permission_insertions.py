r"""Property: `--`, `\r`, `\v`, `\f` inserted into a known command never make it more allowed.

The corpus is the existing adversarial and property test commands plus issue 13's cases.
A control byte may go anywhere (the command then never runs unasked); `--` goes between
two words, where it may end options (or be an option's value), and the decision may only
get stricter. (Inside a word or after `>` it names another file, which is another command.)
"""

from __future__ import annotations

import pytest
import test_permission_adversarial as adversarial
import test_permission_properties as properties
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from permission_workspace import Workspace, permission_context
from test_permission_options import ISSUE_CASES, OWN_CASES

from tether.permission import (
    PermissionBehavior,
    PermissionMode,
    check_shell_command,
)

CORPUS = sorted(
    {
        *adversarial.ALLOWED,
        *adversarial.NOT_ALLOWED.values(),
        *properties.DENIED,
        *properties.ALLOWED_BY_RULE,
        *properties.READ_ONLY,
        *properties.OTHER,
        *properties.EDITS,
        *ISSUE_CASES,
        *OWN_CASES,
        "sort README.md",
        "find src/pkg -name '*.py'",
        "git log -3 -- src",
        "date -d yesterday",
        "tree src/pkg",
    }
    - {""}
)
_RANK = {PermissionBehavior.DENY: 0, PermissionBehavior.ASK: 1, PermissionBehavior.ALLOW: 2}
MODES = [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.EXPLORE]


@pytest.fixture(scope="module")
def ws(module_ws: Workspace) -> Workspace:
    return module_ws


def _decide(ws: Workspace, command: str, mode: PermissionMode) -> PermissionBehavior:
    context = permission_context(ws, mode, allow=["Bash(git commit:*)"], deny=["Bash(rm:*)"])
    return check_shell_command(command, context, cwd=str(ws.root)).behavior


@st.composite
def insertions(draw: st.DrawFn) -> tuple[str, str]:
    command = draw(st.sampled_from(CORPUS))
    token = draw(st.sampled_from(["\r", "\v", "\f", " \r", "\r--", "\f-- ", "-- \v"]))
    where = draw(st.integers(0, len(command)))
    return command, command[:where] + token + command[where:]


_KEYWORDS = frozenset(
    {"do", "then", "else", "elif", "if", "while", "until", "for", "case", "select", "function"}
    | {"!", "{", "(", "time", "coproc"}
)


def _after_a_word(before: str) -> bool:
    """Whether a word of a simple command ends here (so `--` becomes an argument)."""
    words = before.split()
    return bool(words) and words[-1] not in _KEYWORDS and before.rstrip()[-1] not in "<>&|;{("


@st.composite
def boundary_dashes(draw: st.DrawFn) -> tuple[str, str]:
    command = draw(st.sampled_from(CORPUS))
    # After an argument or a command name, not after a redirect operator (`> -- x`
    # writes a file named `--`) or a keyword (`{ -- rm` runs a command named `--`).
    gaps = [i for i, c in enumerate(command) if c == " " and _after_a_word(command[:i])]
    gaps = gaps or [len(command)]
    where = draw(st.sampled_from(gaps))
    return command, command[:where] + " --" + command[where:]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=insertions(), mode=st.sampled_from(MODES))
def test_an_insertion_never_makes_a_command_allowed(
    ws: Workspace, case: tuple[str, str], mode: PermissionMode
) -> None:
    original, changed = case
    after = _decide(ws, changed, mode)
    if after is PermissionBehavior.ALLOW:
        assert _decide(ws, original, mode) is PermissionBehavior.ALLOW, (original, changed)
    if any(c in changed for c in "\r\v\f"):
        assert after is not PermissionBehavior.ALLOW, repr(changed)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=boundary_dashes(), mode=st.sampled_from(MODES))
def test_a_dashdash_between_words_never_ranks_higher(
    ws: Workspace, case: tuple[str, str], mode: PermissionMode
) -> None:
    original, changed = case
    before, after = _decide(ws, original, mode), _decide(ws, changed, mode)
    assert _RANK[after] <= _RANK[before], (original, changed, before, after)
