r"""What a GNU `sed` script can do besides editing its input: run commands, read and write files.

`e` (and the `e` flag of `s///`) runs a command, `w`/`W` (and `s///w file`) write a file,
`r`/`R` read one. The script is scanned the way GNU sed's `compile.c` reads it: addresses
(`3`, `$`, `/re/I`, `\%re%`, `1~2`, `addr,+3`, `!`), blocks, labels, `a`/`i`/`c` text,
`s` and `y` with any delimiter (only a backslash escapes it), then flags. Anything the
scanner does not recognise is reported as a hazard: a wrong guess then asks.
"""

from __future__ import annotations

from collections.abc import Sequence

from tether.shell._hazard import Hazard, HazardKind

__all__ = ["sed_hazards", "sed_script_hazards"]

_PLAIN = frozenset("dDgGhHlnNpPxz=F")
_NUMBERED = frozenset("qQlL")
_TEXT = frozenset("aic")
_LABELS = frozenset(":btTv")
_FILES = frozenset("wWrR")
_S_FLAGS = frozenset("gpiImM0123456789")
_HARMLESS = frozenset({"/dev/stdout", "/dev/stderr"})


class _Unreadable(Exception):
    pass


def _delimited(script: str, i: int, delimiter: str) -> int:
    """The index after the closing `delimiter` of a regex or replacement starting at `i`."""
    while i < len(script):
        char = script[i]
        if char == "\\":
            i += 2
            continue
        if char == delimiter:
            return i + 1
        if char == "\n" and delimiter != "\n":
            raise _Unreadable
        i += 1
    raise _Unreadable


def _address(script: str, i: int) -> int:
    """The index after an address (or none) at `i`."""
    n = len(script)
    if i < n and script[i] == "/":
        i = _delimited(script, i + 1, "/")
    elif i < n and script[i] == "\\":
        if i + 1 >= n:
            raise _Unreadable
        i = _delimited(script, i + 2, script[i + 1])
    elif i < n and (script[i].isdigit() or script[i] == "$"):
        i += 1
        while i < n and (script[i].isdigit() or script[i] == "~"):
            i += 1
    else:
        return i
    while i < n and script[i] in "IM":
        i += 1
    return i


def _line_end(script: str, i: int) -> int:
    end = script.find("\n", i)
    return len(script) if end < 0 else end


def _file_hazard(command: str, name: str) -> Hazard | None:
    name = name.strip()
    if command in "wW" and name in _HARMLESS:
        return None
    kind: HazardKind = "write" if command in "wW" else "read"
    verb = "writes" if kind == "write" else "reads"
    return Hazard(kind, f"the sed command `{command}` {verb} {name or 'a file'}", name or None)


def sed_script_hazards(script: str) -> list[Hazard]:
    """Every way a `sed` script runs a command or touches a file other than its input.

    Args:
        script: One script (`-e` value or the first operand).

    Returns:
        The hazards; one `exec` hazard if the script can't be read with certainty.
    """
    hazards: list[Hazard] = []
    try:
        _scan(script, hazards)
    except _Unreadable:
        hazards.append(Hazard("exec", "tether cannot read this sed script with certainty"))
    return hazards


def _addresses(script: str, i: int) -> int:
    """The index of the command after the addresses (and `!`) at `i`."""
    n = len(script)
    i = _address(script, i)
    while i < n and script[i] in " \t":
        i += 1
    if i < n and script[i] == ",":
        i += 1
        while i < n and script[i] in " \t":
            i += 1
        if i < n and script[i] in "+~":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
        else:
            i = _address(script, i)
    while i < n and script[i] in " \t!":
        i += 1
    if i >= n:
        raise _Unreadable  # an address without a command
    return i


def _scan(script: str, hazards: list[Hazard]) -> None:
    n = len(script)
    i = 0
    while i < n:
        char = script[i]
        if char in " \t\n;}":
            i += 1
        elif char == "#":
            i = _line_end(script, i)
        else:
            i = _addresses(script, i)
            i = _command(script, i + 1, script[i], hazards)


def _text_end(script: str, i: int) -> int:
    """The end of `a`/`i`/`c` text: GNU one-line text, a backslash at a line's end continues it."""
    n = len(script)
    while True:
        end = _line_end(script, i)
        backslashes = len(script[i:end]) - len(script[i:end].rstrip("\\"))
        i = end + 1
        if backslashes % 2 == 0 or end >= n:
            return i


def _command(script: str, i: int, command: str, hazards: list[Hazard]) -> int:
    """Read one command whose letter was just before `i`; the index after it."""
    n = len(script)
    if command == "{" or command in _PLAIN:
        return i
    if command in _NUMBERED:
        while i < n and (script[i].isdigit() or script[i] in " \t"):
            i += 1
        return i
    if command == "e":
        hazards.append(Hazard("exec", "the sed command `e` runs a command"))
        return _line_end(script, i)
    if command in _FILES:
        end = _line_end(script, i)
        found = _file_hazard(command, script[i:end])
        if found is not None:
            hazards.append(found)
        return end
    if command in _TEXT:
        return _text_end(script, i)
    if command in _LABELS:
        while i < n and script[i] not in ";\n":
            i += 1
        return i
    if command == "y":
        if i >= n or script[i] in "\n\\":
            raise _Unreadable
        delimiter = script[i]
        return _delimited(script, _delimited(script, i + 1, delimiter), delimiter)
    if command == "s":
        return _substitute(script, i, hazards)
    raise _Unreadable


def _substitute(script: str, i: int, hazards: list[Hazard]) -> int:
    n = len(script)
    if i >= n or script[i] in "\n\\":
        raise _Unreadable
    delimiter = script[i]
    i = _delimited(script, _delimited(script, i + 1, delimiter), delimiter)
    while i < n:
        flag = script[i]
        if flag in _S_FLAGS:
            i += 1
        elif flag == "e":
            hazards.append(Hazard("exec", "the `e` flag of sed's `s` runs the result as a command"))
            i += 1
        elif flag == "w":
            end = _line_end(script, i + 1)
            found = _file_hazard("w", script[i + 1 : end])
            if found is not None:
                hazards.append(found)
            return end
        elif flag in " \t;\n}#":
            return i
        else:
            raise _Unreadable
    return i


_LONGS = frozenset(
    "--expression --file --in-place --line-length --null-data --zero-terminated --quiet "
    "--silent --separate --unbuffered --regexp-extended --posix --sandbox --debug "
    "--follow-symlinks --binary --help --version".split()
)
_VALUED = frozenset({"--expression", "--file", "--line-length"})
_SHORT_FLAGS = frozenset("nsuzEr")


def _long_option(name: str) -> str | None:
    """The long option `name` abbreviates (GNU getopt); `None` if none or ambiguous."""
    if name in _LONGS:
        return name
    found = [o for o in _LONGS if o.startswith(name)] if len(name) > 2 else []
    return found[0] if len(found) == 1 else None


class _Args:
    """The arguments of one `sed` call, sorted into scripts, operands and hazards."""

    def __init__(self) -> None:
        self.scripts: list[str] = []
        self.operands: list[str] = []
        self.hazards: list[Hazard] = []
        self.in_place = False

    def option(self, name: str, value: str) -> None:
        if name in ("--expression", "-e"):
            self.scripts.append(value)
        elif name in ("--file", "-f"):
            self.hazards.append(Hazard("exec", "sed reads its script from a file"))
        elif name in ("--in-place", "-i"):
            self.in_place = True

    def long(self, arg: str, rest: list[str]) -> None:
        name, eq, value = arg.partition("=")
        full = _long_option(name)
        if full is None:
            self.hazards.append(
                Hazard("exec", f"sed is given an option tether does not know: {name}")
            )
            return
        if full in _VALUED and not eq:
            value = rest.pop(0) if rest else ""
        self.option(full, value)

    def short(self, arg: str, rest: list[str]) -> None:
        for j, char in enumerate(arg[1:], start=1):
            if char in "efl":
                glued = arg[j + 1 :]
                self.option(f"-{char}", glued or (rest.pop(0) if rest else ""))
                return
            if char == "i":
                self.in_place = True
                return  # the rest is the backup suffix
            if char not in _SHORT_FLAGS:
                self.hazards.append(
                    Hazard("exec", f"sed is given an option tether does not know: -{char}")
                )


def sed_hazards(args: Sequence[str]) -> list[Hazard]:
    """The hazards of a `sed` call: its scripts (`-e`, or the first operand), `-f`, `-i`.

    Args:
        args: The words after `sed`.
    """
    parsed = _Args()
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            parsed.operands.extend(rest)
            break
        if arg.startswith("--"):
            parsed.long(arg, rest)
        elif arg.startswith("-") and arg != "-":
            parsed.short(arg, rest)
        else:
            parsed.operands.append(arg)
    if not parsed.scripts and parsed.operands:
        parsed.scripts.append(parsed.operands.pop(0))
    hazards = parsed.hazards
    for script in parsed.scripts:
        hazards.extend(sed_script_hazards(script))
    if parsed.in_place:
        hazards.extend(Hazard("write", "sed -i rewrites the file", p) for p in parsed.operands)
    return hazards
