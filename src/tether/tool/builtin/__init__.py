"""The built-in coding tools: Bash, Read, Write, Edit, Grep, Glob, and Bash's sandbox.

Read records each file it reads (path → mtime) in the session's state of the Read tool,
`AgentState.tool_state["Read"]["read_files"]`; Write and Edit refuse to change an existing
file that is not in that record or whose mtime has changed since. Bash keeps its working
directory in its own state, `tool_state["Bash"]["cwd"]`.
"""

from tether.tool.builtin._bash import Bash, BashInput
from tether.tool.builtin._edit import Edit, EditInput
from tether.tool.builtin._glob import Glob, GlobInput
from tether.tool.builtin._grep import Grep, GrepInput, find_ripgrep
from tether.tool.builtin._process import filtered_environment
from tether.tool.builtin._read import Read, ReadInput
from tether.tool.builtin._sandbox import DEFAULT_SETTINGS_PATHS, BubblewrapSandbox, SandboxBase
from tether.tool.builtin._write import Write, WriteInput

__all__ = [
    "DEFAULT_SETTINGS_PATHS",
    "Bash",
    "BashInput",
    "BubblewrapSandbox",
    "Edit",
    "EditInput",
    "Glob",
    "GlobInput",
    "Grep",
    "GrepInput",
    "Read",
    "ReadInput",
    "SandboxBase",
    "Write",
    "WriteInput",
    "filtered_environment",
    "find_ripgrep",
]
