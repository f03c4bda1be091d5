"""Bash command analysis: what a command runs, reads and writes, read as bash reads it.

The command is parsed with the tree-sitter bash grammar (loaded on the first analysis, not
on import) into its simple commands, redirects and `cd` targets, with every place where
the grammar and bash disagree reported as a *problem*. Besides the parse: how known
programs read their arguments (`--`, value-taking options, `find`'s expression), which
directories a command may run in, how a recursive reader walks a tree, and whether a
repository's git config makes git run programs.

The package knows nothing of permissions: `tether.permission` turns the analysis into
decisions. It imports nothing of tether above the standard library.
"""

from tether.shell._commands import (
    command_name,
    is_trusted_location,
    looks_through,
    read_only_spec,
)
from tether.shell._git_config import git_config_problem, local_remotes, repository_problem
from tether.shell._hazard import Hazard
from tether.shell._options import EXACT_ONLY, command_hazards
from tether.shell._parse import (
    MAX_COMMAND_LENGTH,
    ShellAnalysis,
    ShellCommand,
    ShellRedirect,
    analyze_command,
)
from tether.shell._paths import expand_glob, possible_dirs
from tether.shell._walk import MAX_WALK_ENTRIES, Judge, walk_problem
from tether.shell._walkers import WalkSpec, walk_of
from tether.shell._words import ShellWord

__all__ = [
    "EXACT_ONLY",
    "MAX_COMMAND_LENGTH",
    "MAX_WALK_ENTRIES",
    "Hazard",
    "Judge",
    "ShellAnalysis",
    "ShellCommand",
    "ShellRedirect",
    "ShellWord",
    "WalkSpec",
    "analyze_command",
    "command_hazards",
    "command_name",
    "expand_glob",
    "git_config_problem",
    "is_trusted_location",
    "local_remotes",
    "looks_through",
    "possible_dirs",
    "read_only_spec",
    "repository_problem",
    "walk_of",
    "walk_problem",
]
