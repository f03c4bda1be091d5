"""Loading a state from untrusted bytes: only `StateError`s come out, never a crash.

A state is trusted server data once loaded (it carries the permission mode, rules and call
states): never accept one from a client. What is checked here is that damaged data fails
cleanly, before it can recurse or reach a model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from tether.errors import StateError
from tether.state._migrate import migrate

__all__ = ["MAX_DEPTH", "check_loaded", "load_checked", "parse_json"]

MAX_DEPTH = 200
"""The deepest nesting a free-form value of a state (tool state, metadata) may have."""
T = TypeVar("T")


def parse_json(data: str | bytes | bytearray) -> Any:
    """JSON text to Python values; bad or too deeply nested JSON is a `StateError`."""
    try:
        return json.loads(data)
    except RecursionError:
        raise StateError(
            "the state's JSON is nested too deeply to load; it is damaged (restore it "
            "from a backup)"
        ) from None
    except (ValueError, TypeError) as exc:
        raise StateError(
            f"the state is not valid JSON ({exc}); pass `model_dump_json()` output"
        ) from exc


def _depth_exceeds(value: Any, bound: int) -> bool:
    """Whether `value` nests lists/dicts deeper than `bound` (iteratively: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > bound:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _free_form(obj: dict[str, Any]) -> list[Any]:
    """The values of a raw state whose shape is not fixed by its model."""
    values: list[Any] = [obj.get("tool_state"), obj.get("reply")]
    context = obj.get("context")
    if isinstance(context, list):
        for msg in context:
            if isinstance(msg, dict):
                values.append(msg.get("metadata"))
                blocks = msg.get("content")
                if isinstance(blocks, list):
                    values += [b.get("metadata") for b in blocks if isinstance(b, dict)]
    return values


def load_checked(obj: Any, validate: Callable[[Any], T]) -> T:
    """Migrate and validate `obj`; anything wrong with it becomes a `StateError`."""
    if isinstance(obj, dict) and any(
        _depth_exceeds(v, MAX_DEPTH) for v in _free_form(obj) if v is not None
    ):
        raise StateError(
            f"the state nests a value deeper than {MAX_DEPTH} levels; it is damaged "
            "(restore it from a backup)"
        )
    try:
        return validate(migrate(obj))
    except StateError:
        raise
    except RecursionError:
        raise StateError("the state is nested too deeply to load; it is damaged") from None
    except Exception as exc:  # pydantic's ValidationError, or a migration's own failure
        lines = str(exc).splitlines() if isinstance(exc, ValidationError) else [repr(exc)]
        raise StateError(
            f"the data is not a valid AgentState ({' '.join(lines[:3])[:300]}); load what "
            "`AgentState.model_dump_json()` wrote"
        ) from exc


def check_loaded(reply_id: str | None, has_reply_msg: bool) -> None:
    """A loaded state's reply cursor must point at a message of its context."""
    if reply_id is not None and not has_reply_msg:
        raise StateError(
            f"the state's reply cursor points at message {reply_id!r}, which is not in its "
            "context; the state is damaged (clear `state.reply` to drop the reply in progress)"
        )
