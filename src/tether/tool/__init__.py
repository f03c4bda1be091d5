"""Tools: the base class, function tools, the toolkit, and the built-in coding tools."""

import sys
import types
from typing import TYPE_CHECKING, Any

from tether.tool._arguments import ArgumentError, parse_arguments, validate_arguments
from tether.tool._base import ToolBase, ToolChunk, ToolContext, ToolOutput
from tether.tool._function import FunctionTool, tool
from tether.tool._merge import Emit, merge_streams
from tether.tool._runner import error_result, result_of, to_result
from tether.tool._source import DEFERRABLE_KEY, TOOL_REFERENCES_KEY, PromptParts, ToolSourceBase
from tether.tool._toolkit import Toolkit, ToolkitView

if TYPE_CHECKING:
    from tether.tool.builtin import Bash, Edit, Glob, Grep, Read, Write

__all__ = [
    "DEFERRABLE_KEY",
    "TOOL_REFERENCES_KEY",
    "ArgumentError",
    "Bash",
    "Edit",
    "Emit",
    "FunctionTool",
    "Glob",
    "Grep",
    "PromptParts",
    "Read",
    "ToolBase",
    "ToolChunk",
    "ToolContext",
    "ToolOutput",
    "ToolSourceBase",
    "Toolkit",
    "ToolkitView",
    "Write",
    "error_result",
    "merge_streams",
    "parse_arguments",
    "result_of",
    "to_result",
    "tool",
    "validate_arguments",
]

_BUILTINS = {"Bash", "Edit", "Glob", "Grep", "Read", "Write"}


def __getattr__(name: str) -> Any:
    # The built-in tools pull in their helpers only when first used.
    if name in _BUILTINS:
        from tether import _lazy

        return _lazy.load(__name__, name, "tether.tool.builtin")
    raise AttributeError(f"module 'tether.tool' has no attribute {name!r}")


class _ToolPackage(types.ModuleType):
    """`tether.tool` is this package, and calling it is the `@tool` decorator.

    So `import tether.tool; tether.tool.Toolkit` works, and so do `from tether import tool`
    and `from tether.tool import tool` as a decorator (`@tool` or `@tool(name=...)`).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return tool(*args, **kwargs)


sys.modules[__name__].__class__ = _ToolPackage
