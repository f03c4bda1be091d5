"""Permission modes, rules and the engine that decides each tool call.

Besides the engine this package holds the checks the built-in tools use: shell-command
decisions (`check_shell_command`, `match_shell_rule`, ...) on the analysis of
`tether.shell`, and path rules (`check_path_access`, `match_path_rule`, ...). It imports
nothing above itself; the tree-sitter grammar is loaded on the first shell analysis, not
on import. The `Shell*` names and `analyze_command` are re-exported from `tether.shell`.
"""

from typing import TYPE_CHECKING, Any

from tether.permission._engine import PermissionEngine, PermissionSubject
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    from tether.permission._paths import (
        FileAccess,
        check_path_access,
        match_path_rule,
        suggest_path_rules,
    )
    from tether.permission._rule_scope import exact_path_rule_problem, narrower_than
    from tether.permission._search import search_filter
    from tether.permission._sensitive import is_sensitive_path
    from tether.permission._server_requests import server_request_behavior
    from tether.permission._shell_check import (
        check_shell_command,
        is_read_only_command,
        match_allow_rule,
    )
    from tether.permission._shell_rules import match_shell_rule, suggest_shell_rules
    from tether.shell import ShellAnalysis, ShellCommand, ShellRedirect, ShellWord, analyze_command

__all__ = [
    "FileAccess",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionEngine",
    "PermissionMode",
    "PermissionRule",
    "PermissionSubject",
    "ShellAnalysis",
    "ShellCommand",
    "ShellRedirect",
    "ShellWord",
    "analyze_command",
    "check_path_access",
    "check_shell_command",
    "exact_path_rule_problem",
    "is_read_only_command",
    "is_sensitive_path",
    "match_allow_rule",
    "match_path_rule",
    "match_shell_rule",
    "narrower_than",
    "search_filter",
    "server_request_behavior",
    "suggest_path_rules",
    "suggest_shell_rules",
]

# The shell and path checks (pathspec, the bash grammar) load on first use, so that
# `import tether` stays light; the engine and the vocabulary above load eagerly.
_LAZY = {
    "FileAccess": "_paths",
    "check_path_access": "_paths",
    "match_path_rule": "_paths",
    "suggest_path_rules": "_paths",
    "is_sensitive_path": "_sensitive",
    "search_filter": "_search",
    "exact_path_rule_problem": "_rule_scope",
    "narrower_than": "_rule_scope",
    "check_shell_command": "_shell_check",
    "is_read_only_command": "_shell_check",
    "match_allow_rule": "_shell_check",
    "ShellAnalysis": "tether.shell",
    "ShellCommand": "tether.shell",
    "ShellRedirect": "tether.shell",
    "analyze_command": "tether.shell",
    "match_shell_rule": "_shell_rules",
    "suggest_shell_rules": "_shell_rules",
    "ShellWord": "tether.shell",
    "server_request_behavior": "_server_requests",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.permission' has no attribute {name!r}")
    from tether import _lazy

    full = module if module.startswith("tether.") else f"tether.permission.{module}"
    value = _lazy.load(__name__, name, full)
    globals()[name] = value
    return value
