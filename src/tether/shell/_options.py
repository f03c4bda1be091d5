"""The one table of what a program's options and operands can do beyond reading the work dir.

Each entry lists, per program, the options that run another program (`exec`), write the
file named by their value (`write`), read the file named by their value (`read`), or read
a *list* of file names from it (`names`); plus a script reader for programs whose script
can run or write (`sed`). Both the read-only list (`_commands`) and the hazards of a ruled
command (`command_hazards`, used by `tether.permission`) come from this table, so an
option added here is checked on both paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from tether.shell._hazard import Hazard, HazardKind
from tether.shell._sed import sed_hazards

__all__ = [
    "EXACT_ONLY",
    "GIT_RUNNING_SUBCOMMANDS",
    "Hazard",
    "OPTION_MODELS",
    "OptionModel",
    "command_hazards",
    "option_hit",
]


@dataclass(frozen=True, slots=True)
class OptionModel:
    """What a program's options can do (long options as `--name`, short ones as `-x`)."""

    exec: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()
    read: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    anywhere: frozenset[str] = frozenset()
    """Flags (no value) that let it write wherever its input says (`tar -P`)."""
    value_shorts: str = ""
    """Short options that take a value (glued on, or the next word)."""
    script: Callable[[Sequence[str]], list[Hazard]] | None = None
    """Reads the program's own script language out of its arguments."""

    @property
    def options(self) -> frozenset[str]:
        """Every option of the model that is a hazard."""
        return self.exec | self.write | self.read | self.names | self.anywhere


def _o(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DIFF_LIKE = dict(
    write=_o("--output"),
    read=_o("--orderfile"),
    exec=_o("--ext-diff --open-files-in-pager --exec-path --upload-pack --receive-pack"),
)

OPTION_MODELS: dict[str, OptionModel] = {
    "sort": OptionModel(
        exec=_o("--compress-program"),
        write=_o("--output -o --temporary-directory -T"),
        read=_o("--random-source"),
        names=_o("--files0-from"),
        value_shorts="kotST",
    ),
    "sed": OptionModel(script=sed_hazards),
    "tar": OptionModel(
        exec=_o(
            "--to-command --rsh-command --checkpoint-action --use-compress-program "
            "--info-script --new-volume-script -I -F"
        ),
        write=_o("--index-file --listed-incremental -g --directory -C"),
        names=_o("--files-from -T"),
        anywhere=_o("--absolute-names -P"),
        value_shorts="fCTIFgKNVbLX",
    ),
    "git": OptionModel(
        exec=_DIFF_LIKE["exec"],
        write=_DIFF_LIKE["write"] | _o("--output-directory"),
        read=_DIFF_LIKE["read"] | _o("-O"),
    ),
    "find": OptionModel(
        exec=_o("-exec -execdir -ok -okdir -delete"),
        write=_o("-fprint -fprint0 -fprintf -fls"),
        names=_o("-files0-from"),
    ),
    "fd": OptionModel(exec=_o("--exec --exec-batch -x -X")),
    "rg": OptionModel(exec=_o("--pre --hostname-bin")),
    "tree": OptionModel(write=_o("-o -R"), value_shorts="LPIoHT"),
    "file": OptionModel(
        write=_o("--compile -C"), names=_o("--files-from -f"), value_shorts="fFmPe"
    ),
    "wc": OptionModel(names=_o("--files0-from")),
    "du": OptionModel(names=_o("--files0-from")),
    "date": OptionModel(exec=_o("--set -s"), value_shorts="dfrsI"),
    "printf": OptionModel(exec=_o("-v")),
    **dict.fromkeys(
        "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum cksum b2sum".split(),
        OptionModel(names=_o("--check -c")),
    ),
}
"""Per program: the options that make it run, write or read beyond its operands."""

GIT_WRITE_O = frozenset({"format-patch", "archive"})
"""Git sub-commands whose `-o` names an output file or directory (`-o` is `--others` else)."""
GIT_RUNNING_SUBCOMMANDS = _o(
    "difftool mergetool submodule bisect filter-branch config send-email instaweb daemon "
    "web--browse credential help rebase am gc maintenance worktree hook var"
)
"""Git sub-commands that run programs by nature (tools, hooks, `--exec`, the browser) or
write config that names programs."""
EXACT_ONLY = frozenset(
    "sed awk gawk mawk nawk sort tar find fd xargs env rg tree file date printf uniq "
    "patch perl alias unalias export declare typeset local readonly set shopt unset enable "
    "hash trap ulimit umask".split()
) | frozenset(OPTION_MODELS)
"""Programs whose suggested rule is the exact command, never a prefix (the builtins change
the state of a shell that later commands run in: `alias git=...`, `shopt -s ...`)."""
_WHOLE = frozenset({"--checkpoint"})
"""Options of their own that merely begin like a hazardous one (`tar --checkpoint=N`)."""


def _long_name(name: str, longs: frozenset[str]) -> str | None:
    """The long option `name` abbreviates (GNU getopt), or `None` if none or ambiguous."""
    if name in longs:
        return name
    found = [o for o in longs if o.startswith(name)] if len(name) > 2 else []
    return found[0] if len(found) == 1 else None


@lru_cache(maxsize=256)
def _forms(options: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Every abbreviation of the long options (`--o` .. `--output`), and the short letters."""
    prefixes = frozenset(
        o[:end] for o in options if o.startswith("--") for end in range(3, len(o) + 1)
    )
    return prefixes - _WHOLE, frozenset(o[1] for o in options if len(o) == 2 and o[0] == "-")


def option_hit(arg: str, options: frozenset[str]) -> str | None:
    """Which of `options` an argument is, however spelled; `None` if none.

    `--name=value`; an abbreviated long option, which GNU getopt accepts when unambiguous
    (`sort --o=x` is `--output=x`, over-matching an ambiguous one is the safe side); a
    single-dash long option (`find -exec`); a short option with its value glued on
    (`-oout`) or inside a cluster (`-nro out`). Returns the option as listed (`-o`,
    `--output`) or, for an abbreviation, the longest listed option it may be.
    """
    if not arg.startswith("-") or arg in ("-", "--"):
        return None
    name = arg.split("=", 1)[0]
    if name in options:
        return name
    prefixes, shorts = _forms(options)
    if arg.startswith("--"):
        if name in prefixes:
            return next(o for o in sorted(options) if o.startswith(name))
        return None
    for char in arg[1:]:
        if char in shorts:
            return f"-{char}"
    return None


def _value(arg: str, option: str, args: Sequence[str], index: int) -> str | None:
    """The value of a long option (`--output=v`, `-fprint v`): after `=` or the next word."""
    if "=" in arg:
        return arg.split("=", 1)[1]
    return args[index + 1] if index + 1 < len(args) else None


def _hazard(name: str, model: OptionModel, option: str, path: str | None) -> Hazard:
    if option in model.exec:
        return Hazard("exec", f"`{name} {option}` runs another program")
    if option in model.anywhere:
        return Hazard("write", f"`{name} {option}` writes wherever its input says")
    if option in model.names:
        return Hazard("names", f"`{name} {option}` reads the names of files to use")
    kind: HazardKind = "write" if option in model.write else "read"
    verb = "writes" if kind == "write" else "reads"
    return Hazard(kind, f"`{name} {option}` {verb} {path or 'a file'}", path)


def _cluster(
    name: str, model: OptionModel, arg: str, args: Sequence[str], index: int, *, old: bool
) -> list[Hazard]:
    """The hazards of a cluster of short options (`-xzf`), each letter on its own.

    GNU getopt gives the first value-taking letter the rest of the cluster or the next
    word; an old-style tar cluster (`tar cfC a.tar dir`) gives each value-taking letter
    the next unused word in turn.
    """
    _, shorts = _forms(model.options)
    takes = set(model.value_shorts) | (shorts - _forms(model.anywhere)[1])
    hazards: list[Hazard] = []
    taken = 0
    for position, char in enumerate(arg[1:], start=1):
        value: str | None = None
        if char in takes:
            if old:
                taken += 1
                at = index + taken
                value = args[at] if at < len(args) else None
            else:
                value = arg[position + 1 :] or (args[index + 1] if index + 1 < len(args) else None)
        if char in shorts:
            hazards.append(_hazard(name, model, f"-{char}", value))
        if char in takes and not old:
            break  # the rest of the cluster is the value
    return hazards


def _options_hazards(
    name: str, model: OptionModel, args: Sequence[str], *, old_first: bool = False
) -> list[Hazard]:
    hazards: list[Hazard] = []
    for index, arg in enumerate(args):
        if not arg.startswith("-") or arg in ("-", "--"):
            continue
        option = option_hit(arg, model.options)
        if arg.startswith("--") or (option is not None and len(option) > 2):
            if option is not None:
                hazards.append(_hazard(name, model, option, _value(arg, option, args, index)))
        elif len(arg) == 2:
            if option is not None:
                value = args[index + 1] if index + 1 < len(args) else None
                hazards.append(_hazard(name, model, option, value))
        else:
            hazards.extend(_cluster(name, model, arg, args, index, old=old_first and index == 0))
    return hazards


def _git_hazards(args: Sequence[str]) -> list[Hazard]:
    """The repository git reads config from (`-C`), and its sub-command's hazards."""
    hazards: list[Hazard] = [Hazard("git", "git reads the repository's config")]
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-C" and i + 1 < len(args):
            hazards.append(Hazard("git", "git reads the config of another repository", args[i + 1]))
            i += 2
            continue
        if arg in ("--git-dir", "--work-tree", "--namespace", "--super-prefix") or arg.startswith(
            ("--git-dir=", "--work-tree=", "--exec-path", "--super-prefix")
        ):
            hazards.append(Hazard("exec", f"`git {arg}` points git at another repository"))
        elif arg in ("-c", "--config-env") or arg.startswith(("--config-env=", "-c")):
            hazards.append(Hazard("exec", "`git -c` sets config that may name a program"))
        elif arg in ("-p", "--paginate"):
            hazards.append(Hazard("exec", "`git -p` runs the pager"))
        elif not arg.startswith("-"):
            break
        i += 1
    if i >= len(args):
        return hazards
    sub, rest = args[i], list(args[i + 1 :])
    if sub in GIT_RUNNING_SUBCOMMANDS:
        hazards.append(Hazard("exec", f"`git {sub}` may run programs or set config that names one"))
    model = OPTION_MODELS["git"]
    if sub in GIT_WRITE_O:
        model = OptionModel(exec=model.exec, write=model.write | {"-o"}, read=model.read)
    elif sub == "grep":
        model = OptionModel(exec=model.exec | {"-O"}, write=model.write, read=model.read - {"-O"})
    hazards.extend(_options_hazards(f"git {sub}", model, rest))
    return hazards


def command_hazards(words: Sequence[str]) -> tuple[Hazard, ...]:
    """Every hazard of a static simple command (name first), as the table models it.

    Args:
        words: The command's words, the program first (without its directory or not).

    Returns:
        The hazards, in the order found; empty for a program the table does not model.
    """
    if not words:
        return ()
    name = words[0].rsplit("/", 1)[-1]
    args = list(words[1:])
    if name == "git":
        return tuple(_git_hazards(args))
    model = OPTION_MODELS.get(name)
    if model is None:
        return ()
    old = name == "tar" and bool(args) and not args[0].startswith("-")
    if old:
        args = ["-" + args[0], *args[1:]]
    hazards = _options_hazards(name, model, args, old_first=old)
    if model.script is not None:
        hazards.extend(model.script(args))
    if name == "tar":
        hazards.extend(_tar_remote(args, old=old))
    return tuple(hazards)


def _tar_remote(args: list[str], *, old: bool) -> list[Hazard]:
    """`tar -f host:file` runs a remote shell unless `--force-local` is given."""
    if any(len(a) > 8 and "--force-local".startswith(a.split("=")[0]) for a in args):
        return []
    files = OptionModel(read=_o("--file -f"), value_shorts=OPTION_MODELS["tar"].value_shorts)
    for hazard in _options_hazards("tar", files, args, old_first=old):
        if hazard.path is None or ":" in hazard.path:
            return [Hazard("exec", "`tar -f host:file` runs a remote shell")]
    return []
