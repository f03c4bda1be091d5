"""The reasoning steps of a whole agent tree in one reply (`ReActConfig.max_total_iters`).

Every agent of the tree counts its reasoning steps in a `Budget` node; a node passes each
step on to its parent's, so the root's node holds the tree's total and its limit. The
count lives in the state, so a pause, a resume or another process counts on from it: an
agent's steps are its reply cursor's `iteration`, plus the steps of the sub-agents it
called (a finished child's in its result's `metadata["iterations"]`, a running or paused
child's in its record), recursively (`spent_in`).

A node is made per drive: the root's by `open_budget` when its config sets a limit; a
child's by its sub-agent tool (below its parent's node), handed to the child's drive
through `handing_down` (taken once, so nothing else the child runs inherits it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from tether.state import AgentState

__all__ = ["ITERATIONS", "Budget", "handing_down", "open_budget", "spent_in"]

ITERATIONS = "iterations"
"""The key of a finished sub-agent's result metadata holding the steps its tree took."""
_HANDED: ContextVar[Budget | None] = ContextVar("tether_budget", default=None)
"""The parent's node while a sub-agent's drive is being opened (else None)."""


@dataclass(slots=True)
class Budget:
    """The steps an agent (and the sub-agents below it) took in this reply."""

    spent: int
    """Steps of this agent and its sub-agents so far (from the state, then counted)."""
    parent: Budget | None = None
    """The node of the agent this one runs inside (None at the root)."""
    limit: int | None = None
    """The tree's limit (only the root's node has one)."""

    @property
    def root(self) -> Budget:
        """The node of the outermost agent."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def exhausted(self) -> bool:
        """Whether the tree took all the steps its limit allows."""
        root = self.root
        return root.limit is not None and root.spent >= root.limit

    def take(self) -> None:
        """Count one reasoning step of this agent, in every node up to the root."""
        node: Budget | None = self
        while node is not None:
            node.spent += 1
            node = node.parent


def spent_in(state: AgentState) -> int:
    """The steps the reply in progress took, its sub-agents' included (0 without a reply)."""
    cursor = state.reply
    if cursor is None:
        return 0
    total = cursor.iteration
    msg = state.reply_msg()
    for block in msg.content if msg is not None else ():
        if block.type == "tool_result":
            total += int(block.metadata.get(ITERATIONS, 0))
    for entry in state.tool_state.values():
        for record in entry.values():
            if type(record) is dict and "subagent" in record and "state" in record:
                total += spent_in(AgentState.model_validate(record["state"]))
    return total


def open_budget(state: AgentState, limit: int | None) -> Budget | None:
    """The node of a drive starting on `state`: the one handed down, if a parent did."""
    handed = _HANDED.get()
    if handed is not None:
        _HANDED.set(None)  # taken: the child's own tools start without it
        return handed
    if limit is None:
        return None
    return Budget(spent=spent_in(state), limit=limit)


@contextmanager
def handing_down(budget: Budget | None) -> Iterator[None]:
    """Hand `budget` (a child's node) to the sub-agent drive opened inside this block."""
    token = _HANDED.set(budget)
    try:
        yield
    finally:
        _HANDED.reset(token)
