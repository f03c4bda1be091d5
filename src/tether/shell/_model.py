"""What the analysis of a shell command produces: its simple commands and redirects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tether.shell._args import PathArgs
from tether.shell._commands import command_name
from tether.shell._hazard import Hazard
from tether.shell._walkers import WalkSpec
from tether.shell._words import ShellWord

__all__ = ["ShellAnalysis", "ShellCommand", "ShellRedirect"]


@dataclass(frozen=True, slots=True)
class ShellRedirect:
    """A redirect that opens a file."""

    operator: str
    """`>`, `>>`, `<`, `&>`, ..."""
    target: ShellWord
    """The file, as a word."""
    access: Literal["read", "write", "readwrite"]
    """What the redirect does to the file."""


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """One simple command of a (possibly compound) shell command."""

    text: str
    """The command as written."""
    words: tuple[ShellWord, ...]
    """Its words, the command name first (after `time`/`nohup`/`command` wrappers)."""
    assignments: tuple[str, ...]
    """Names of `NAME=value` prefixes."""
    problems: tuple[str, ...]
    """Why it can never be allowed without asking (wrapper, interpreter given code, ...)."""
    nested: bool
    """True if it runs inside a substitution or a `bash -c`/`eval` string."""
    read_only: bool
    """True if it is on the read-only list as called (its file arguments still need checks)."""
    reads_paths: bool
    """True if its arguments may name files it reads."""
    suggestion: str | None
    """The narrowest `Bash(...)` specifier that would allow it, if any."""
    all_words: tuple[ShellWord, ...] = ()
    """Every word, wrappers included (deny rules look through wrappers)."""
    args: PathArgs = PathArgs()
    """The arguments that may name files."""
    walk: WalkSpec | None = None
    """How it walks directory trees, if it does (`grep -r`, `find`, `du`)."""
    hazards: tuple[Hazard, ...] = ()
    """What its options and script do beyond its words (`_options`); for a static command."""

    @property
    def name(self) -> str | None:
        """The command it runs, without directory; `None` if computed at run time."""
        if not self.words or self.words[0].value is None:
            return None
        return command_name(self.words[0].value)

    @property
    def values(self) -> list[str | None]:
        """The word values; `None` for a word that expands at run time."""
        return [w.value if w.static else None for w in self.words]


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """The parsed form of a shell command, cached per command string."""

    command: str
    """The command analysed."""
    commands: tuple[ShellCommand, ...]
    """Every simple command, in source order, nested ones included."""
    redirects: tuple[ShellRedirect, ...]
    """Every redirect to or from a file."""
    problems: tuple[str, ...]
    """Whole-command reasons to ask: parse errors, substitutions, functions, ..."""
    cd_targets: tuple[str | None, ...]
    """Targets of `cd`/`pushd` in source order (`None` if unknown, `~` for none given)."""
    parse_error: bool = False
    """True if the grammar could not parse the command."""
    heredocs: tuple[str, ...] = ()
    """Here-document bodies (deny rules look into them: they may be code fed to a shell)."""
