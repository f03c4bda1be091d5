"""Shell analysis: a bash command parsed with tree-sitter into its simple commands.

The tree is walked iteratively (no recursion limit to hit) and every node type is
classified: structure to descend into, word parts, or a construct tether does not
analyse. Anything unknown becomes a *problem*, and a command with a problem is never
allowed without asking.
"""

from __future__ import annotations

import itertools
import re
import threading
from functools import lru_cache
from typing import Any, Literal

from tether.shell import _quirks as quirks
from tether.shell._args import path_args
from tether.shell._commands import (
    command_name,
    is_read_only_words,
    knowledge_problems,
    read_only_spec,
    shell_code_index,
    skip_transparent,
    suggest_for,
)
from tether.shell._model import ShellAnalysis, ShellCommand, ShellRedirect
from tether.shell._options import command_hazards
from tether.shell._walkers import walk_of
from tether.shell._words import ShellWord, decode_word

__all__ = [
    "MAX_COMMAND_LENGTH",
    "ShellAnalysis",
    "ShellCommand",
    "ShellRedirect",
    "analyze_command",
]

MAX_COMMAND_LENGTH = 100_000
"""Longer commands are not parsed; they always ask (deny rules still apply to their text)."""
_MAX_NESTING = 4

_STRUCTURE = frozenset(
    "program list pipeline subshell redirected_statement negated_command if_statement "
    "elif_clause else_clause case_statement case_item comment do_group heredoc_redirect "
    "herestring_redirect heredoc_body heredoc_content heredoc_start heredoc_end command_name "
    "word string string_content raw_string ansi_c_string concatenation number "
    "simple_expansion variable_name special_variable_name file_descriptor translated_string "
    "brace_expression array variable_assignments".split()
)
_TEST_ONLY = frozenset(
    "binary_expression unary_expression parenthesized_expression extglob_pattern regex "
    "test_operator postfix_expression".split()
)
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_SAFE_ENV = frozenset({"LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "TERM", "CI"})
_EXPANSION_OK = re.compile(
    r"\$\{#?[A-Za-z_][A-Za-z0-9_]*(?:(?::?[-=+?]|#{1,2}|%{1,2})[^`$@\[!{}]*)?\}"
)


_parser_lock = threading.Lock()
_parser: Any = None


def _parse(source: bytes) -> Any:
    global _parser
    with _parser_lock:
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        return _parser.parse(source)


class _Walker:
    def __init__(self, source: bytes, depth: int) -> None:
        self.src = source
        self.depth = depth
        self.commands: list[ShellCommand] = []
        self.redirects: list[ShellRedirect] = []
        self.problems: list[str] = []
        self.cd_targets: list[str | None] = []
        self.heredocs: list[str] = []
        self.parse_error = False
        self.redirect_words: dict[tuple[int, int], list[Any]] = {}
        """Arguments the grammar hung on a redirect (`cat 2>/dev/null x`), per command span."""

    def text(self, node: Any) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def walk(self, root: Any) -> None:
        stack: list[tuple[Any, bool, bool, bool]] = [(root, False, False, False)]
        while stack:
            node, nested, in_loop, in_test = stack.pop()
            if node.is_missing or node.type == "ERROR":
                self.parse_error = True
            if not node.is_named:
                continue
            nested, in_loop, in_test = self.visit(node, nested, in_loop, in_test)
            for child in reversed(node.children):
                stack.append((child, nested, in_loop, in_test))

    def visit(  # noqa: C901 - one flat dispatch over the grammar's node types
        self, node: Any, nested: bool, in_loop: bool, in_test: bool
    ) -> tuple[bool, bool, bool]:
        kind = node.type
        if kind == "command":
            self.add_command(node, nested, in_loop)
        elif kind == "redirected_statement":
            self.place_redirect_words(node)
        elif kind in ("command_substitution", "process_substitution"):
            self.problem(f"it runs a substitution `{self.text(node)[:80]}`")
            nested = True
        elif kind in ("while_statement", "for_statement"):
            in_loop = True
        elif kind == "compound_statement":
            if node.children and node.children[0].type == "((":
                self.problem("it evaluates arithmetic, which can run code")
        elif kind == "test_command":
            in_test = True
        elif kind == "file_redirect":
            self.add_redirect(node)
        elif kind == "heredoc_body":
            self.heredocs.append(self.text(node))
        elif kind == "heredoc_redirect":
            for problem in quirks.heredoc_problems(node, self.src):
                self.problem(problem)
        elif kind == "comment":
            if quirks.comment_in_word(node, self.src):
                self.problem("a `#` inside a word is not a comment in bash")
        elif kind == "variable_assignment":
            if node.parent is None or node.parent.type != "command":
                self.check_assignment(node)
        elif kind == "expansion":
            if not _EXPANSION_OK.fullmatch(self.text(node)):
                self.problem(f"it uses the expansion `{self.text(node)[:80]}`")
            if in_test:
                self.problem("a test evaluates an expansion")
        elif kind == "simple_expansion":
            if in_test:
                self.problem("a test evaluates an expansion")
        elif kind == "test_operator":
            if self.text(node) in _ARITHMETIC_TESTS:
                self.problem("a test compares numbers, which evaluates arithmetic")
        elif kind in _TEST_ONLY:
            if not in_test:
                self.problem("it evaluates arithmetic, which can run code")
        elif kind == "function_definition":
            self.problem("it defines a shell function")
        elif kind in ("declaration_command", "unset_command"):
            self.problem(f"it changes shell variables (`{self.text(node)[:40]}`)")
        elif kind in ("arithmetic_expansion", "c_style_for_statement", "subscript"):
            self.problem("it evaluates arithmetic, which can run code")
        elif kind not in _STRUCTURE and kind != "ERROR":
            self.problem(f"it uses `{kind}`, which tether does not analyse")
        return nested, in_loop, in_test

    def place_redirect_words(self, node: Any) -> None:
        """Give words the grammar hung on a redirect back to the command bash passes them to.

        `cat 2>/dev/null x` parses as a redirect with two destinations, `/dev/null` and `x`;
        bash runs `cat x`. The redirect belongs to the last simple command of the body
        (the grammar also wraps `a | b 2>x` and `a && b 2>x` whole).
        """
        if quirks.skips_text(node, self.src):
            self.problem(quirks.SKIPPED)  # the grammar drops the `-` of `cd - 2>/dev/null`
        words = [w for child in node.children for w in quirks.redirect_words(node, child, self.src)]
        if not words:
            return
        owner = quirks.redirect_owner(node)
        if owner is None:
            self.problem("words follow a redirect of a compound command")
            return
        self.redirect_words[(owner.start_byte, owner.end_byte)] = words

    def check_assignment(self, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        name = self.text(name_node) if name_node is not None else ""
        if not _safe_env(name) and not name.islower():
            self.problem(f"it sets the variable `{name}`")

    def add_redirect(self, node: Any) -> None:
        parts = quirks.target_parts(node, self.src)[0]
        operator = "".join(self.text(c) for c in node.children if not c.is_named)
        if not parts:
            self.problem("a redirect has no target")
            return
        dest = parts[0]
        target = decode_word(dest, self.src)
        for before, part in itertools.pairwise(parts):
            # `>x\<newline>/y` writes `x/y`: bash joins the lines before splitting words.
            gap = self.src[before.end_byte : part.start_byte]
            if not gap:
                self.problem("the parser splits a redirect's target unlike bash")
            target = quirks.join_words(target, gap, decode_word(part, self.src))
        if operator in (">&", "<&") and (target.value == "-" or dest.type == "number"):
            return  # duplicates a file descriptor
        access: Literal["read", "write", "readwrite"]
        if operator == "<>":
            access = "readwrite"
        elif operator.startswith("<"):
            access = "read"
        else:
            access = "write"
        self.redirects.append(ShellRedirect(operator=operator, target=target, access=access))

    def add_command(self, node: Any, nested: bool, in_loop: bool) -> None:
        words: list[ShellWord] = []
        assignments: list[str] = []
        problems: list[str] = []
        prev_end, prev_word = node.start_byte, False
        children = node.children
        own = len(children)
        extras = self.redirect_words.get((node.start_byte, node.end_byte))
        for index, child in enumerate([*children, *extras] if extras else children):
            skip = quirks.leading_blanks(self.src, child.start_byte, child.end_byte)
            gap = self.src[prev_end : child.start_byte + skip]
            if b"\n" in gap and quirks.UNESCAPED_NEWLINE.search(gap):
                # The grammar sometimes joins two lines into one command: after a pipeline,
                # or when a line starts with a backslash (`ls<newline>\rm x` gave `ls` the
                # word `<newline>\rm`). Bash runs two commands: split there, and ask.
                problems.append("the parser joined two lines into one command")
                self.finish_command(node, words, assignments, list(problems), nested, in_loop)
                words, assignments, prev_word = [], [], False
            prev_end = child.end_byte
            word = self.word_of(node, index, child, skip, assignments, problems)
            if word is None:
                prev_word = False
                continue
            if prev_word and (not gap or (gap[:1] == b"\\" and quirks.JOINED.fullmatch(gap))):
                # Bash reads `r\<newline>m` as `rm`.
                words[-1] = quirks.join_words(words[-1], gap, word)
            else:
                words.append(word)
            problem = quirks.gap_problem(gap, prev_word, index < own)
            if problem is None and quirks.raw_blank(child, self.src, skip):
                problem = quirks.SPLIT  # `{ {` is two words to bash
            if problem is not None:
                problems.append(problem)
            prev_word = True
        if quirks.ESCAPED_BLANK.match(self.src, prev_end):
            problems.append(quirks.SPLIT)  # a trailing `\<tab>` the grammar left out
        self.finish_command(node, words, assignments, problems, nested, in_loop)

    def word_of(
        self,
        node: Any,
        index: int,
        child: Any,
        skip: int,
        assignments: list[str],
        problems: list[str],
    ) -> ShellWord | None:
        """The word a child of a command adds (`None` for assignments and redirects)."""
        if child.type == "variable_assignment":
            name_node = child.child_by_field_name("name")
            name = self.text(name_node) if name_node is not None else ""
            assignments.append(name)
            if not (_safe_env(name) or name.islower()):
                problems.append(f"it sets `{name}` for the command")
            return None
        if child.type == "command_name":
            return decode_word(child.named_children[0], self.src, skip)
        field = node.field_name_for_child(index) if index < node.child_count else "argument"
        if field == "argument" or (child.is_named and child.type in _WORDISH):
            return decode_word(child, self.src, skip)
        if not child.is_named and self.text(child) == "$":
            return ShellWord(text="$", value=None)
        return None

    def finish_command(
        self,
        node: Any,
        words: list[ShellWord],
        assignments: list[str],
        problems: list[str],
        nested: bool,
        in_loop: bool,
    ) -> None:
        values = [w.value if w.static else None for w in words]
        start = skip_transparent(values)
        effective = values[start:]
        problems.extend(knowledge_problems(effective))
        name = command_name(effective[0]) if effective and effective[0] is not None else None
        if name in ("cd", "pushd"):
            self.add_cd(words[start + 1 :], in_loop)
        static = all(v is not None for v in effective)
        # Glob words count as their pattern for the read-only list; their matches are
        # checked when deciding (and a pattern that could expand to an option is refused).
        patterns = [w.value for w in words[start:]]
        read_only = (
            bool(effective)
            and effective[0] is not None
            and not problems
            and all(p is not None for p in patterns)
            and not any(w.glob and (w.value or "").startswith("-") for w in words[start:])
            and is_read_only_words([p or "" for p in patterns])
        )
        spec = read_only_spec(name) if name else None
        text = self.text(node)
        suggestion = None
        if static and effective:
            suggestion = suggest_for([v or "" for v in effective], text)
        self.commands.append(
            ShellCommand(
                text=text,
                words=tuple(words[start:]),
                assignments=tuple(assignments),
                problems=tuple(problems),
                nested=nested,
                read_only=read_only,
                reads_paths=spec.paths if spec is not None else True,
                suggestion=suggestion,
                all_words=tuple(words),
                args=path_args(tuple(words[start:]), git=name == "git"),
                walk=walk_of(name, effective) if read_only else None,
                hazards=command_hazards([v or "" for v in effective]) if static else (),
            )
        )
        self.nested_code(name, effective)

    def add_cd(self, args: list[ShellWord], in_loop: bool) -> None:
        word = _cd_target(args)
        if word is None or isinstance(word, str):
            self.cd_targets.append(word)  # unknown, or `~` when no directory is given
            return
        value = word.value if word.static and word.value != "-" else None
        if value is not None and not word.tilde and value.startswith("~"):
            value = "./" + value
        if value is not None and in_loop and not value.startswith(("/", "~")):
            value = None  # a relative cd in a loop can go anywhere
        self.cd_targets.append(value)

    def nested_code(self, name: str | None, words: list[str | None]) -> None:
        """Analyse `bash -c CODE` and `eval CODE` so deny rules see the commands inside."""
        code: str | None = None
        if name == "eval" and all(w is not None for w in words[1:]):
            code = " ".join(w or "" for w in words[1:])
        else:
            index = shell_code_index(words)
            if index is not None:
                code = words[index]
        if code is None:
            return
        if self.depth >= _MAX_NESTING:
            self.problem("commands are nested too deeply to analyse")
            return
        inner = _analyze(code, self.depth + 1)
        self.cd_targets.extend(inner.cd_targets)
        for command in inner.commands:
            self.commands.append(_as_nested(command))
        self.parse_error = self.parse_error or inner.parse_error


_WORDISH = frozenset(
    "word string raw_string ansi_c_string concatenation number simple_expansion expansion "
    "command_substitution process_substitution arithmetic_expansion translated_string "
    "brace_expression".split()
)


_CD_OPTIONS = re.compile(r"-[LPe@]+")
_NO_TARGET = "~"


def _cd_target(args: list[ShellWord]) -> ShellWord | str | None:
    """The word `cd`/`pushd` takes as its directory; `~` for none, `None` if unknown.

    Only `-L`, `-P`, `-e` and `-@` are options; after `--` the next word is the directory
    (`cd -- -x`); any other word starting with `-` or `+` (`-Q`, `pushd +1`) leaves it unknown.
    """
    for index, word in enumerate(args):
        value = word.value
        rest = args[index + 1 :]
        if value == "--" and word.static:
            return _only(rest) if rest else _NO_TARGET
        if value is None or not word.static or value == "-" or not value.startswith(("-", "+")):
            return _only([word, *rest])
        if not _CD_OPTIONS.fullmatch(value):
            return None
    return _NO_TARGET


def _only(operands: list[ShellWord]) -> ShellWord | None:
    """The one operand of `cd`; more are unknown (bash 5 fails, zsh substitutes)."""
    return operands[0] if len(operands) == 1 else None


def _as_nested(command: ShellCommand) -> ShellCommand:
    return ShellCommand(
        text=command.text,
        words=command.words,
        assignments=command.assignments,
        problems=(*command.problems, "it runs inside another command's code string"),
        nested=True,
        read_only=False,
        reads_paths=command.reads_paths,
        suggestion=None,
        all_words=command.all_words,
        args=command.args,
        walk=command.walk,
    )


def _safe_env(name: str) -> bool:
    return name in _SAFE_ENV or name.startswith("LC_")


def _analyze(command: str, depth: int) -> ShellAnalysis:
    if len(command) > MAX_COMMAND_LENGTH:
        return ShellAnalysis(
            command=command,
            commands=(),
            redirects=(),
            problems=(f"the command is longer than {MAX_COMMAND_LENGTH} characters",),
            cd_targets=(),
            parse_error=True,
        )
    source = command.encode("utf-8", "surrogateescape")
    walker = _Walker(source, depth)
    walker.walk(_parse(source).root_node)
    problems = list(walker.problems)
    if walker.parse_error:
        problems.insert(0, "it does not parse as bash")
    if "\x00" in command:
        problems.insert(0, "it contains a NUL byte")
    if quirks.FOREIGN_BLANKS.search(command):
        problems.insert(0, quirks.FOREIGN_BLANK)
    return ShellAnalysis(
        command=command,
        commands=tuple(walker.commands),
        redirects=tuple(walker.redirects),
        problems=tuple(problems),
        cd_targets=tuple(walker.cd_targets),
        parse_error=walker.parse_error,
        heredocs=tuple(walker.heredocs),
    )


@lru_cache(maxsize=4096)
def analyze_command(command: str) -> ShellAnalysis:
    """Parse a bash command with the tree-sitter bash grammar (parses are cached).

    Args:
        command: The command line, possibly compound and multi-line.

    Returns:
        Its simple commands, file redirects, `cd` targets and the problems that make it
        impossible to allow without asking.
    """
    return _analyze(command, 0)
