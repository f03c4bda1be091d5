"""`tether chat`: a coding agent in the current folder, in the terminal or headless.

The terminal is a renderer of events: it turns `AgentEvent`s into screen output and
keystrokes into resume events; every decision (permissions, pauses, compression) is the
library's. Importing this package loads only `argparse`; the agent, rich, prompt-toolkit
and MCP load when a command runs.
"""

from tether.cli.chat._args import add_parser
from tether.cli.chat._trust_cmd import add_trust_parser

__all__ = ["add_parser", "add_trust_parser"]
