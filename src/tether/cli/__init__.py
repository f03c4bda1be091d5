"""The `tether` command."""

from tether.cli._main import main

__all__ = ["main"]
