"""Plain Python functions as tools: `FunctionTool` and the `@tool` decorator."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, create_model

from tether.tool._base import ToolBase, ToolChunk, ToolContext, ToolOutput
from tether.tool._validate import check_flags, check_function, check_input_model

__all__ = ["FunctionTool", "tool"]

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_SECTION = re.compile(r"^\s*[A-Z][A-Za-z ]+:\s*$")
_ARG_LINE = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument texts."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    description: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args and _SECTION.match(line) and not line.startswith((" ", "\t")):
            in_args = False
        if not in_args:
            if not _SECTION.match(line) or description:
                description.append(line)
            continue
        m = _ARG_LINE.match(line)
        if m and (line.startswith(("    ", "\t")) or not line.startswith(" ")):
            indent = len(line) - len(line.lstrip())
            if current is None or indent <= 4:
                current = m.group(1)
                args[current] = m.group(2).strip()
                continue
        if current is not None and line.strip():
            args[current] = (args[current] + " " + line.strip()).strip()
    text = "\n".join(description).strip()
    # Drop trailing sections such as Returns:/Raises: from the description.
    text = re.split(r"\n\s*(Returns|Raises|Yields|Examples?)\s*:\s*\n", "\n" + text + "\n")[0]
    return text.strip(), args


def _build_input_model(func: Callable[..., Any], arg_docs: dict[str, str]) -> type[BaseModel]:
    sig = inspect.signature(func)
    try:
        hints = get_type_hints(func)
    except Exception:  # unresolvable annotations fall back to Any
        hints = {}
    fields: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, Any)
        if annotation is ToolContext:
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (annotation, Field(default, description=arg_docs.get(pname)))
    model_name = "".join(p.title() for p in func.__name__.split("_")) + "Input"
    return create_model(
        model_name, __config__=ConfigDict(defer_build=True, extra="forbid"), **fields
    )


class FunctionTool(ToolBase):
    """A tool made from a function: sync, async, or an (async) generator that streams.

    The input schema comes from the type hints, the descriptions from the Google-style
    docstring. A parameter annotated `ToolContext` receives the call's context. Sync
    functions run in a worker thread so they never block the event loop.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        is_read_only: bool = False,
        is_concurrency_safe: bool = False,
        is_external_tool: bool = False,
        requires_confirmation: bool = False,
        is_idempotent: bool = False,
    ) -> None:
        check_function(func)
        doc_description, arg_docs = _parse_docstring(func.__doc__ or "")
        self.func = func
        self.name = name or func.__name__
        self.description = description or doc_description or self.name
        self.input_model = _build_input_model(func, arg_docs)
        check_input_model(self.name, self.input_model)
        check_flags(
            self.name,
            {
                "is_read_only": is_read_only,
                "is_concurrency_safe": is_concurrency_safe,
                "is_external_tool": is_external_tool,
                "requires_confirmation": requires_confirmation,
                "is_idempotent": is_idempotent,
            },
        )
        self.is_read_only = is_read_only
        self.is_concurrency_safe = is_concurrency_safe
        self.is_external_tool = is_external_tool
        self.requires_confirmation = requires_confirmation
        self.is_idempotent = is_idempotent
        self._ctx_param = next((p for p, h in _safe_hints(func).items() if h is ToolContext), None)
        self._kind = (
            "asyncgen"
            if inspect.isasyncgenfunction(func)
            else "gen"
            if inspect.isgeneratorfunction(func)
            else "coroutine"
            if inspect.iscoroutinefunction(func)
            else "sync"
        )
        self._fields = tuple(self.input_model.model_fields)

    @property
    def takes_context(self) -> bool:
        """Whether the function receives the `ToolContext` (and so may emit events)."""
        return self._ctx_param is not None

    @property
    def streams(self) -> bool:
        """Whether the function is a generator: its output comes in chunks."""
        return self._kind == "asyncgen" or self._kind == "gen"

    def call(
        self, tool_input: BaseModel, context: ToolContext
    ) -> Awaitable[ToolOutput] | AsyncIterator[ToolChunk]:
        """Call the function with the validated arguments."""
        values = tool_input.__dict__
        kwargs = {k: values[k] for k in self._fields}
        if self._ctx_param is not None:
            kwargs[self._ctx_param] = context
        func, kind = self.func, self._kind
        if kind == "asyncgen" or kind == "coroutine":
            return func(**kwargs)  # type: ignore[no-any-return]  # a coroutine or async generator
        if kind == "gen":
            return _iterate_sync(func(**kwargs))
        return asyncio.to_thread(func, **kwargs)


def _safe_hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        return get_type_hints(func)
    except Exception:  # unresolvable annotations: no context parameter
        return {}


async def _iterate_sync(gen: Any) -> AsyncIterator[ToolChunk]:
    for chunk in gen:
        yield chunk


@overload
def tool(func: Callable[..., Any], /) -> FunctionTool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    is_read_only: bool = False,
    is_concurrency_safe: bool = False,
    is_external_tool: bool = False,
    requires_confirmation: bool = False,
    is_idempotent: bool = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    is_read_only: bool = False,
    is_concurrency_safe: bool = False,
    is_external_tool: bool = False,
    requires_confirmation: bool = False,
    is_idempotent: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a function into a `FunctionTool`; use bare (`@tool`) or with options.

    The tool's name is the function's, its description the docstring's text, and each
    parameter's description comes from a Google-style `Args:` section; the type hints make
    the JSON schema the model fills in. A parameter annotated `ToolContext` receives the
    call's context and is hidden from the model. Sync functions run in a worker thread;
    generators stream their pieces as the tool's output.

    Args:
        func: The function (when used bare, as `@tool`).
        name: The name the model calls it by (default: the function's name).
        description: What the model reads about it (default: the docstring).
        is_read_only: It changes nothing: it may run in the `explore` permission mode.
        is_concurrency_safe: Consecutive calls to such tools may run at the same time.
        is_external_tool: The agent never runs it: the reply pauses with a
            `RequireExternalExecutionEvent` and the caller sends the result back.
        requires_confirmation: Every call asks a person first (the reply pauses with a
            `RequireUserConfirmEvent`), unless a permission rule allows it.
        is_idempotent: Running it twice is harmless: a call cut off by a crash is run
            again on continue, instead of getting an "outcome unknown" result.

    Raises:
        ToolError: `func` is not callable, or a parameter has no JSON schema (a plain
            class); the message names the tool and the parameter.
        ArgumentError: A flag is not a bool.
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            description=description,
            is_read_only=is_read_only,
            is_concurrency_safe=is_concurrency_safe,
            is_external_tool=is_external_tool,
            requires_confirmation=requires_confirmation,
            is_idempotent=is_idempotent,
        )

    return wrap(func) if func is not None else wrap
