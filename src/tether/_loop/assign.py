"""`put`: the loop's writes to the state's models, without pydantic's `__setattr__`.

The state's models (`AgentState`, `ReplyCursor`, messages and blocks) validate no
assignment and are not frozen, so `model.name = value` only stores the value and notes
the name as set; pydantic's `__setattr__` takes two Python calls for that (three for a
model whose fields-set is the shared one, see `tether.state`'s `lighten`). The loop
writes a few fields at every step, so it writes them itself. A test checks that the
models still validate no assignment.
"""

from __future__ import annotations

from tether._fast import put

__all__ = ["put"]
