"""What tether knows about individual commands: read-only ones, wrappers, interpreters."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from tether.shell._options import EXACT_ONLY, OPTION_MODELS, command_hazards

__all__ = [
    "ReadOnlySpec",
    "command_name",
    "is_trusted_location",
    "knowledge_problems",
    "looks_through",
    "read_only_spec",
    "shell_code_index",
    "skip_transparent",
    "suggest_for",
]

_TRUSTED_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)


@dataclass(frozen=True, slots=True)
class ReadOnlySpec:
    """How a read-only command may be called."""

    paths: bool = True
    """Whether its arguments may name files it reads (they are then checked like Read)."""
    forbidden: frozenset[str] = frozenset()
    """Long or single-dash options (`--output`, `-exec`) that make it write or run code."""
    forbidden_short: frozenset[str] = frozenset()
    """Short option letters (in any cluster) that make it write or run code."""
    max_positionals: int | None = None
    """More positional arguments than this make it write (`uniq in out`)."""
    subcommands: frozenset[str] | None = None
    """If set, the second word must be one of these (`git status`)."""


_PLAIN = ReadOnlySpec()
_NO_PATHS = ReadOnlySpec(paths=False)
_FILE_READERS = (
    "cat head tail wc nl cut column od hexdump strings file stat du df ls diff cmp comm "
    "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum cksum b2sum grep egrep fgrep "
    "tac rev fold fmt paste join expand unexpand realpath readlink"
)
_NO_PATH_COMMANDS = (
    "echo pwd true false whoami id uname which type seq sleep test [ basename "
    "dirname nproc arch groups locale tr cd pushd popd command"
)
_READ_ONLY: dict[str, ReadOnlySpec] = {
    **dict.fromkeys(_FILE_READERS.split(), _PLAIN),
    **dict.fromkeys(_NO_PATH_COMMANDS.split(), _NO_PATHS),
    # The options that make these write, run programs or read named lists of files are in
    # `_options.OPTION_MODELS`: a call with one of them is not read-only.
    **dict.fromkeys("sort tree date find fd rg".split(), _PLAIN),
    # `printf -v NAME` assigns a shell variable (PATH, say) that a persistent shell keeps.
    "printf": _NO_PATHS,
    "uniq": ReadOnlySpec(max_positionals=1),
    "git": ReadOnlySpec(
        subcommands=frozenset(
            "status log diff show blame rev-parse ls-files ls-tree describe shortlog".split()
        ),
    ),
}

_SHELLS = frozenset("sh bash zsh dash ksh mksh ash fish csh tcsh".split())
_INTERPRETERS = frozenset(
    "python python2 python3 pypy pypy3 ipython node nodejs deno bun perl ruby irb php lua "
    "luajit Rscript R julia osascript pwsh powershell tclsh wish expect groovy".split()
)
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox"})
_CODE_FLAGS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "node": frozenset({"-e", "-p", "--eval", "--print"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "osascript": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-command", "-encodedcommand", "-e", "-ec"}),
    "shell": frozenset({"-c"}),
}
_PYTHON_RE = re.compile(r"python[0-9.]*|pypy[0-9.]*")
_WRAPPERS = frozenset(
    "sudo doas su runuser sg newgrp env xargs nice ionice timeout gtimeout stdbuf chroot "
    "setsid watch strace ltrace flock parallel coproc unbuffer taskset chrt script firejail "
    "torsocks proxychains proxychains4 nsenter unshare fakeroot systemd-run dbus-run-session "
    "valgrind catchsegv entr eval source . trap exec time nohup command builtin".split()
)
_TRANSPARENT = frozenset({"time", "nohup", "command", "builtin", "exec"})
_RISKY_OPTIONS: dict[str, frozenset[str]] = {
    "tar": OPTION_MODELS["tar"].exec,
    "git": frozenset({"-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack"}),
    "ssh": frozenset({"-o", "-F"}),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "zip": frozenset({"-TT", "--unzip-command"}),
    "rg": OPTION_MODELS["rg"].exec,
    "sort": OPTION_MODELS["sort"].exec,
}
_SUBCOMMAND_TOOLS = frozenset(
    "git npm pnpm yarn bun cargo go docker podman kubectl helm pip pip3 uv poetry make just "
    "gh terraform apt apt-get brew systemctl dotnet mvn gradle conda rustup npx ruff tox nox "
    "hatch pdm".split()
)
_THREE_WORD = {("npm", "run"), ("pnpm", "run"), ("yarn", "run"), ("bun", "run"), ("uv", "run")}
_NO_PREFIX = frozenset(
    "rm rmdir mv cp dd chmod chown chgrp ln curl wget ssh scp rsync kill pkill killall "
    "shutdown reboot mkfs truncate shred tee".split()
)


def command_name(word: str) -> str:
    """The command a word runs, ignoring its directory (`/usr/bin/rm` → `rm`)."""
    return word.rsplit("/", 1)[-1] if "/" in word else word


def is_trusted_location(word: str) -> bool:
    """A bare name or a path in a system bin dir (so `./ls` is not the real `ls`)."""
    return "/" not in word or os.path.dirname(word) in _TRUSTED_BIN_DIRS


def skip_transparent(words: list[str | None]) -> int:
    """The index of the command that `time`, `nohup`, `command`, `builtin` or `exec` run."""
    i = 0
    while i < len(words) - 1:
        word = words[i]
        if word is None or command_name(word) not in _TRANSPARENT:
            break
        nxt = words[i + 1]
        if nxt is None:
            break
        if nxt == "--" or (command_name(word) == "time" and nxt == "-p"):
            i += 1
            if i >= len(words) - 1:
                break
        elif nxt.startswith("-"):
            break
        i += 1
    return i


def looks_through(name: str) -> bool:
    """Whether a command runs another one given in its arguments (`sudo`, `xargs`, `find`)."""
    return name in _WRAPPERS or name in ("find", "fd")


def read_only_spec(name: str) -> ReadOnlySpec | None:
    """The read-only rules for a command name, or `None` if it may change things."""
    return _READ_ONLY.get(name)


def _family(name: str) -> str:
    if name in _SHELLS:
        return "shell"
    if _PYTHON_RE.fullmatch(name):
        return "python"
    if name in ("nodejs", "bun", "deno"):
        return "node"
    if name in ("powershell",):
        return "pwsh"
    return name


def _flags_hit(args: list[str | None], flags: frozenset[str], family: str) -> bool:
    # Every argument is scanned, not only those before the script: `python -X dev -c code`
    # hides `-c` behind an option value, and over-asking an interpreter is cheap.
    for arg in args:
        if arg is None:
            return True
        if not arg.startswith("-"):
            continue
        lowered = arg.lower() if family == "pwsh" else arg
        if lowered in flags or lowered.split("=", 1)[0] in flags:
            return True
        # A cluster such as `bash -lc` or `python -Bc` carries the flag inside.
        if not arg.startswith("--") and any(f"-{c}" in flags for c in arg[1:] if c.isalpha()):
            return True
    return False


def _interpreter_problem(name: str, args: list[str | None]) -> str | None:
    family = _family(name)
    if name in _AWKS:
        return f"`{name}` runs a program given on the command line"
    if family not in _CODE_FLAGS and name not in _INTERPRETERS:
        return None
    flags = _CODE_FLAGS.get(family, frozenset())
    if _flags_hit(args, flags, family):
        return f"`{name}` is given code to run"
    if family == "node" and name == "deno" and args[:1] == ["eval"]:
        return "`deno eval` is given code to run"
    positionals = [a for a in args if a is None or not a.startswith("-")]
    if family == "python" and any(a is not None and a == "-m" for a in args):
        return None
    if not positionals or positionals[0] == "-" or positionals[0] is None:
        return f"`{name}` would read code from its input"
    return None


def knowledge_problems(words: Sequence[str | None]) -> list[str]:
    """Why a simple command can never be allowed by a rule or the read-only list."""
    if not words or words[0] is None:
        return ["the command name is computed at run time"]
    name = command_name(words[0])
    args = list(words[1:])
    problems: list[str] = []
    if name == "command" and args[:1] in (["-v"], ["-V"]):
        pass  # only looks the name up
    elif name in _WRAPPERS and name not in _TRANSPARENT:
        problems.append(f"`{name}` runs another command")
    elif name in _TRANSPARENT and len(words) > 1:
        problems.append(f"`{name}` with options runs another command")
    interp = _interpreter_problem(name, args)
    if interp is not None:
        problems.append(interp)
    if name in ("find", "fd") and any(
        h.kind == "exec" for h in command_hazards([name, *(a or "" for a in args)])
    ):
        problems.append(f"`{name}` is told to run commands or delete files")
    risky = _RISKY_OPTIONS.get(name)
    if risky is not None:
        if name == "tar" and args and args[0] is not None and not args[0].startswith("-"):
            args[0] = "-" + args[0]  # `tar xIf prog x.tar`: old-style options are a cluster
        if any(a is not None and a[:1] == "-" and _option_hit(a, risky) for a in args):
            problems.append(f"`{name}` is given an option that runs other programs")
    return problems


_CLUSTER = re.compile(r"-([A-Za-z0-9]*)")
_WHOLE_OPTIONS = frozenset({"--checkpoint"})
"""Options of their own that merely begin like a risky one (`tar --checkpoint=N`)."""


def _option_hit(arg: str, options: frozenset[str]) -> bool:
    """Whether `arg` is one of `options` however it is spelled.

    `--name=value`; an abbreviated long option, which GNU getopt accepts when unambiguous
    (`sort --o=x` is `--output=x`); a short option with its value glued on (`-oProxy...`)
    or inside a cluster of short options (`rsync -avze prog`).
    """
    if not arg.startswith("-"):
        return False
    name = arg.split("=", 1)[0]
    if name in options:
        return True
    prefixes, shorts = _option_forms(options)
    if arg.startswith("--"):
        return name in prefixes
    cluster = _CLUSTER.match(arg)
    if cluster is None or len(arg) <= 2 or not shorts:
        return False
    return arg[1] in shorts or any(c in shorts for c in cluster.group(1))


@lru_cache(maxsize=64)
def _option_forms(options: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Every abbreviation of the long options (`--o` .. `--output`), and the short letters."""
    prefixes = frozenset(
        o[:end] for o in options if o.startswith("--") for end in range(3, len(o) + 1)
    )
    prefixes -= _WHOLE_OPTIONS
    return prefixes, frozenset(o[1] for o in options if len(o) == 2 and o[0] == "-")


def _forbidden_option(args: list[str | None], spec: ReadOnlySpec) -> bool:
    """Whether any word may be read as a forbidden option by the program.

    Every word is scanned, `--` included: `find` honours `--` only before its start points
    (its expression runs to the end), and with GNU getopt a value-taking option swallows
    the `--` after it (`sort -T -- -o out`). A word computed at run time (`None`) is
    judged where it is known: a glob's matches when deciding, an expansion never allowed.
    """
    for arg in args:
        if arg is None or not arg.startswith("-") or arg in ("-", "--"):
            continue
        if arg.startswith("--") and _option_hit(arg, spec.forbidden):
            return True  # also abbreviated: `sort --o=x`
        if arg in spec.forbidden or arg.split("=", 1)[0] in spec.forbidden:
            return True
        if not arg.startswith("--") and any(c in spec.forbidden_short for c in arg[1:]):
            return True
    return False


def _operand_count(args: list[str | None]) -> int:
    """At least as many operands as the program sees.

    `-` (standard input) counts, and after the first `--` every word does (it may end the
    options, or be an option's value).
    """
    end = args.index("--") if "--" in args else len(args)
    before = [a for a in args[:end] if a is None or a == "-" or not a.startswith("-")]
    return len(before) + len(args[end + 1 :])


def is_read_only_words(words: list[str]) -> bool:
    """Whether a fully static command is on the read-only list as called."""
    name = command_name(words[0])
    spec = _READ_ONLY.get(name)
    if spec is None or not is_trusted_location(words[0]):
        return False
    args: list[str | None] = list(words[1:])
    if spec.subcommands is not None and (not args or args[0] not in spec.subcommands):
        return False
    if _forbidden_option(args, spec):
        return False
    if any(h.kind != "git" for h in command_hazards(words)):
        return False  # the one table of options that write, run or read lists of files
    if spec.max_positionals is not None and _operand_count(args) > spec.max_positionals:
        return False  # `uniq in -- -out` and `uniq - out` write a file
    return True


def shell_code_index(words: list[str | None]) -> int | None:
    """The index of the code string of `bash -c CODE` (also behind wrappers), if any."""
    for i, word in enumerate(words[:-1]):
        if word is None or command_name(word) not in _SHELLS:
            continue
        for j in range(i + 1, len(words) - 1):
            arg = words[j]
            if arg is None or not arg.startswith("-") or arg.startswith("--"):
                break
            if "c" in arg[1:]:
                return j + 1
    return None


def _is_subcommand(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_.:-]*", word)) and "/" not in word


def _exact_only(name: str, words: list[str]) -> bool:
    """Whether only the exact command may be suggested.

    So for a program that can run or write through its arguments (`sed`, `sort`, `tar`...),
    a git sub-command that runs programs, and any call whose options already run, write or
    read beyond its words.
    """
    if name in EXACT_ONLY and name != "git":
        return True
    hazards = command_hazards(words)
    return any(h.kind != "git" for h in hazards) or (
        name == "git" and any(h.kind == "git" and h.path is not None for h in hazards)
    )


def _exact(words: list[str]) -> str | None:
    """The exact command as a rule, quoted so it reads back as the same words."""
    plain = shlex.join(words)
    return plain if len(plain) <= 200 and "\n" not in plain else None


def suggest_for(words: list[str], text: str) -> str | None:
    """The narrowest useful `Bash(...)` specifier for a static command, or `None`.

    `git commit -m x` → `git commit:*`; `npm run build` → `npm run build:*`;
    `python -m pytest -q` → `python -m pytest:*`; `pytest -q` → `pytest:*`;
    `rm build.log` → `rm build.log` (the exact command). Interpreters, shells and wrappers
    get no prefix rule, never `python:*` or `bash:*`.
    """
    name = command_name(words[0])
    args = words[1:]
    family = _family(name)
    if _exact_only(name, words):
        return _exact(words)
    if family == "python" and args[:1] == ["-m"] and len(args) >= 2:
        return f"{words[0]} -m {args[1]}:*"
    if (
        name in _WRAPPERS
        or name in _SHELLS
        or name in _INTERPRETERS
        or name in _AWKS
        or family in _CODE_FLAGS
    ):
        if args and not args[0].startswith("-") and not knowledge_problems(words):
            return f"{words[0]} {args[0]}:*"  # running one script: `python tool.py:*`
        return None
    if name in _SUBCOMMAND_TOOLS and args and _is_subcommand(args[0]):
        if (name, args[0]) in _THREE_WORD and len(args) >= 2 and _is_subcommand(args[1]):
            return f"{words[0]} {args[0]} {args[1]}:*"
        return f"{words[0]} {args[0]}:*"
    if name in _NO_PREFIX or name in _SUBCOMMAND_TOOLS:
        # The exact command; only when it is plain enough to be read back as a rule.
        plain = " ".join(words)
        if plain == text.strip() and len(plain) <= 200:
            return plain
        return None
    return f"{words[0]}:*"
