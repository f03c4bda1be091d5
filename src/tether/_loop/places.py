"""Text and thinking block ids derived from their place in the reply, where that is sound.

A block whose id is `<reply id>.<place>` (`derived_block_id`) is stored without it: the
state's JSON puts it back from the block's place (`tether.state._json`,
`tether.message._compact`). An id must never be sent twice for different content, and a
place can be streamed twice: a step whose stream broke commits nothing, so the step tried
next starts at the same place (tests/state/test_state_block_ids.py). So a block gets the
derived id only where no other block can have had it:

- in the run (one `drive`) that started the reply: the reply's id is new, and no other
  process or earlier run streamed anything of it (a run that resumes or continues a
  reply cannot know what a run before it sent and never saved);
- at a place past every block this run already streamed (`Run.next_place`), so a step
  tried again in the same run (a hook calling the model again) gets fresh ids;
- never after a step of the run failed or was retried (`Run.derives_ids` turns off).

Anywhere else the block keeps the assembler's fresh random id, which is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._ids import derived_block_id
from tether._loop.assign import put
from tether._loop.current import reply_message
from tether.event import AgentEvent
from tether.message import TextBlock, ThinkingBlock
from tether.model import StreamAssembler

if TYPE_CHECKING:
    from tether._loop.run import Run

__all__ = ["PlacedAssembler", "assembler_for", "streamed"]


class PlacedAssembler(StreamAssembler):
    """`StreamAssembler` giving each text or thinking block its derived id where sound."""

    __slots__ = ("_base", "_run")

    def __init__(self, run: Run, base: int, *, emit: bool) -> None:
        super().__init__(run.reply_id, emit=emit)
        self._run = run
        self._base = base

    def _start(self, block: TextBlock | ThinkingBlock) -> list[AgentEvent]:
        run = self._run
        place = self._base + len(self.blocks)  # where the step's commit puts the block
        if run.derives_ids and place >= run.next_place:
            put(block, "id", derived_block_id(self.reply_id, place))
        return super()._start(block)


def assembler_for(run: Run, *, emit: bool) -> StreamAssembler:
    """The step's assembler: a `PlacedAssembler` while this run may derive ids."""
    if not run.derives_ids:
        return StreamAssembler(run.reply_id, emit=emit)
    msg = reply_message(run.state)
    base = len(msg.content) if msg is not None else 0
    return PlacedAssembler(run, base, emit=emit)


def streamed(run: Run, assembler: StreamAssembler) -> None:
    """After a step's stream (whole or not): no later block of this run takes its places."""
    if type(assembler) is PlacedAssembler:
        run.next_place = max(run.next_place, assembler._base + len(assembler.blocks))
