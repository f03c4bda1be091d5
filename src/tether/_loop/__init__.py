"""Internal: the loop that advances `AgentState.reply` (not public; only `tether.agent` uses it).

Every transition of a reply lives here, one step per module:

- `drive`: the loop itself (`stream_reply` for `reply_stream`, `run_reply` for `reply`),
  dispatching on `next_action` with `assert_never`;
- `next_action`: the pure choice of the next step (`Reason | Act | Pause | Finish`);
- `reply`: starting, resuming, continuing and closing a reply; `observe`;
- `reasoning`: one model step (prompt, compression, the model call, its commit);
- `acting`: checking a batch, recovering calls found running, running the allowed ones;
- `batch`: choosing a batch and running it; results come back as values (`Finished`);
- `results`: writing a result into the reply (and the structured answer);
- `pause`: the pause events and applying a resume event; `confirm_rules`: what rules a
  confirmation may carry;
- `checkpoint`: snapshots to roll back to when a save point fails; `run`: what one
  drive works with (the agent, the state, the checkpoint);
- `structured`: the per-reply structured-output tool and the step's tool view;
- `context_step`: the context side of a reasoning step (prompt, compression hooks, the
  request's messages); `permission_check`: a call's permission through the hooks, and
  remembering accepted rules.

It may import these private modules of other packages (and no others; the layering test
checks it):

- tether.context._compress
- tether.context._truncate
- tether.message._copy
- tether.message._inputs
- tether.middleware._chain
- tether.state._load
- tether.tool._base
"""

__all__: list[str] = []  # internal: nothing is exported
