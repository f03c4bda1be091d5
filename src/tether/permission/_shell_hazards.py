"""Rules grant words, never capabilities: the hazards checked for a command a rule allows.

A `Bash(prefix:*)` allow rule says the program may run with those words. It never says
the program may run another one (`sed 's/x/id/e'`, `sort --compress-program`), write or
read outside the work dirs (`sort -o ~/.local/bin/git`, `git diff --output=/x`), read a
list of files (`sort --files0-from`), or load repository config that names a program
(`cd sub && git diff` in an embedded bare repository with `core.fsmonitor`). The
hazards come from the shell package's one option table (`ShellCommand.hazards`), the same
table that decides the read-only list. An exact rule (the whole command, as the user saw
it) allows what the words show; config git would read is never shown, so it is checked
under every rule.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tether.permission._path_rules import PathScope
from tether.permission._resolve import ResolvedPath, resolve_path
from tether.shell import (
    Hazard,
    ShellCommand,
    analyze_command,
    expand_glob,
    git_config_problem,
    local_remotes,
    possible_dirs,
    repository_problem,
)

if TYPE_CHECKING:
    from tether.permission._shell_check import _Env, _Verdict

__all__ = ["check_ruled", "config_problem"]

_FINE = frozenset({"inside", "allow"})
_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "-"})


def check_ruled(part: ShellCommand, *, exact: bool, env: _Env, verdict: _Verdict) -> None:
    """Ask for every hazard of a part an allow rule matched.

    Args:
        part: The simple command.
        exact: Whether the matching rule is the whole command (it then allows the hazards
            its words show; git config is still checked).
        env: The decision's shared state (work dirs, rules, resolved paths).
        verdict: Collects the reasons to ask.
    """
    assert env.dirs is not None
    if part.name == "git" and _REACHING.intersection(w.value for w in part.words[1:]):
        _check_repositories(part, env, verdict)
    for hazard in part.hazards:
        if hazard.kind == "git":
            _check_git_dir(hazard, env, verdict)
        elif exact:
            continue
        elif hazard.kind in ("exec", "names"):
            verdict.ask(f"{hazard.reason} (an allow rule grants words, not this)", changes=True)
        else:
            _check_hazard_path(hazard, env, verdict)
    if not exact:
        _check_outside(part, env, verdict)


def _kind(scope: PathScope, access: str, resolved: ResolvedPath) -> str:
    tool = "Read" if access == "read" else "Edit"
    return scope.verdict(tool, "read" if access == "read" else "write", resolved).kind


def _check_hazard_path(hazard: Hazard, env: _Env, verdict: _Verdict) -> None:
    path = hazard.path
    if path in _HARMLESS:
        return
    if not path:
        verdict.ask(f"{hazard.reason}, a file tether cannot name", changes=True)
        return
    for cwd in env.dirs or ():
        kind = _kind(env.scope, hazard.kind, resolve_path(path, cwd, env.memo))
        if kind not in _FINE:
            where = "a sensitive path" if kind == "sensitive" else "outside the allowed paths"
            verdict.ask(f"{hazard.reason} ({where})", changes=hazard.kind == "write")
            return


def _check_outside(part: ShellCommand, env: _Env, verdict: _Verdict) -> None:
    """A ruled command's words and directory stay inside the work dirs and off sensitive paths."""
    args = part.args
    for cwd in env.dirs or ():
        paths = [".", *args.paths]
        for pattern in args.globs:
            matches = expand_glob(pattern, cwd)
            if matches is None:
                verdict.ask(f"can't tell which files `{pattern}` names")
                return
            paths.extend(matches)
        env.prepare(cwd, paths, full=True)
        for path in paths:
            if path in _HARMLESS:
                continue
            kind = _kind(env.scope, "read", resolve_path(path, cwd, env.memo))
            if kind == "sensitive":
                verdict.ask(f"`{part.text[:80]}` names a sensitive path: {path}")
                return
            if kind == "outside":
                where = "runs outside" if path == "." else f"names {path}, outside"
                verdict.ask(f"`{part.text[:80]}` {where} the working directories")
                return


def _check_git_dir(hazard: Hazard, env: _Env, verdict: _Verdict) -> None:
    """The config git reads from each directory it may run in (and `-C dir`)."""
    if hazard.path is None and env.git_checked:
        return
    if hazard.path is None:
        env.git_checked = True
    for cwd in env.dirs or ():
        where = cwd if hazard.path is None else os.path.join(cwd, os.path.expanduser(hazard.path))
        problem = git_config_problem(where, bare_hooks=True)
        if problem is not None:
            verdict.ask(problem, changes=True)
            return


_REMOTE_SUBCOMMANDS = frozenset({"push", "fetch", "pull", "ls-remote", "remote"})
_REACHING = _REMOTE_SUBCOMMANDS | {"clone", "send-pack", "fetch-pack", "archive", "submodule"}
"""Sub-commands that may run another repository's hooks or programs (a word equal to one
is enough: over-matching only checks more)."""


def _repositories(part: ShellCommand, cwd: str) -> list[str]:
    """The local repositories a git command may reach: named, or through a remote."""
    found = [
        os.path.join(cwd, os.path.expanduser(path.removeprefix("file://")))
        for path in part.args.paths
    ]
    if _REMOTE_SUBCOMMANDS.intersection(v for v in part.values[1:] if v is not None):
        found.extend(local_remotes(cwd))
    return found


def _check_repositories(part: ShellCommand, env: _Env, verdict: _Verdict) -> None:
    """A repository git is pointed at (`git push ./emb`, a remote) runs its hooks."""
    for cwd in env.dirs or ():
        for where in _repositories(part, cwd):
            if os.path.isdir(where):
                problem = repository_problem(where)
                if problem is not None:
                    verdict.ask(problem, changes=True)
                    return


def config_problem(command: str, cwd: str) -> str | None:
    """Why git in some part of `command` would load config that names a program, if it would.

    For rules that match by the whole text (`Bash(cd sub && git diff)`): the words are what
    the user saw, the repository config is not.
    """
    analysis = analyze_command(command)
    dirs = possible_dirs(analysis, cwd)
    for part in analysis.commands:
        for hazard in part.hazards:
            if hazard.kind != "git":
                continue
            if dirs is None:
                return "git may run in a directory known only when the command runs"
            for where in dirs:
                if hazard.path is not None:
                    where = os.path.join(where, os.path.expanduser(hazard.path))
                problem = git_config_problem(where, bare_hooks=True)
                if problem is not None:
                    return problem
        if part.name == "git" and _REACHING.intersection(w.value for w in part.words[1:]):
            for where in dirs or ():
                for full in _repositories(part, where):
                    problem = repository_problem(full) if os.path.isdir(full) else None
                    if problem is not None:
                        return problem
    return None
