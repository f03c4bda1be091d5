"""Permission modes, rules and the engine that decides each tool call.

Besides the engine this package holds the checks the built-in tools use: shell-command
analysis (`check_shell_command`, `match_shell_rule`, ...) and path rules
(`check_path_access`, `match_path_rule`, ...). It imports nothing above itself; the
tree-sitter grammar is loaded on the first shell analysis, not on import.
"""

from tether.permission._engine import PermissionEngine, PermissionSubject
from tether.permission._paths import (
    FileAccess,
    check_path_access,
    match_path_rule,
    suggest_path_rules,
)
from tether.permission._sensitive import is_sensitive_path
from tether.permission._shell_check import check_shell_command, is_read_only_command
from tether.permission._shell_parse import (
    ShellAnalysis,
    ShellCommand,
    ShellRedirect,
    analyze_command,
)
from tether.permission._shell_rules import match_shell_rule, suggest_shell_rules
from tether.permission._shell_words import ShellWord
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

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
    "is_read_only_command",
    "is_sensitive_path",
    "match_path_rule",
    "match_shell_rule",
    "suggest_path_rules",
    "suggest_shell_rules",
]
