"""Reading a message's compact JSON form (the state's, schema version 3) back to full values.

The writer is `tether.state`'s (`message_json`); this is the reader, here so that `Msg`
itself accepts the compact form (a storage's stored message body validates as a `Msg`).
What the compact form leaves out, and how it comes back:

- `name` equal to the `role` → the role;
- `"content": "<text>"` → one text block with the id `<msg id>.0`;
- a text, thinking, hint or data block without `id` → `<msg id>.<position>`;
- a call with a `"result"` → that result (a string is its output) placed after the run of
  calls it belongs to, in call order, with the call's id and name;
- a flat tool result without `name` → the name of the first call with its id;
- a call without `state` → `finished` if a result answers it, else `pending`;
- a call whose `input` is a JSON object → its `json.dumps` (the `input` validator does it).
"""

from __future__ import annotations

from typing import Any

from tether._ids import derived_block_id, new_id

__all__ = ["expand_message"]

_RESULT_KEYS = frozenset({"output", "state", "metadata"})

_ID_BLOCKS = frozenset({"text", "thinking", "hint", "data"})
"""Block types whose id tether makes up (calls and results carry the provider's id)."""


def expand_message(data: Any, fresh: bool) -> Any:
    """A message's raw values with what the compact form left out put back.

    `fresh` values come straight from a JSON parser and are changed in place; others (a
    caller's dict) are copied where something is put back. Anything that is not a dict
    is returned as it is, for the model's own validation to refuse.
    """
    if type(data) is not dict:
        return data
    content = data.get("content")
    if "name" in data and type(content) is not str:
        if type(content) is not list or not content:
            return data  # the common constructor call: nothing to expand
        for block in content:
            if type(block) is dict:
                break
        else:
            return data  # blocks given as models: nothing was left out
    if not fresh:
        data = dict(data)
    if "name" not in data and type(role := data.get("role")) is str:
        data["name"] = role
    if type(content) is str:
        msg_id = data.get("id")
        if msg_id is None:
            data["id"] = msg_id = new_id()
        block_id = derived_block_id(msg_id, 0) if type(msg_id) is str else new_id()
        data["content"] = [{"type": "text", "text": content, "id": block_id}]
    elif type(content) is list and content:
        data["content"] = _expand_blocks(data, content, fresh=fresh)
    return data


def _expand_blocks(msg: dict[str, Any], content: list[Any], *, fresh: bool) -> list[Any]:
    msg_id = msg.get("id")
    if msg_id is None:
        msg["id"] = msg_id = new_id()
    out = (
        _unfold(content, fresh=fresh)
        if _has_folded(content)
        else content
        if fresh
        else list(content)
    )
    call_names: dict[str, Any] = {}
    answered: set[Any] = set()
    calls: list[int] = []  # calls without a state, results without a name: fixed at the end
    results: list[int] = []
    for i, block in enumerate(out):
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "tool_call":
            if type(block_id := block.get("id")) is str:
                call_names.setdefault(block_id, block.get("name"))
            if "state" not in block:
                calls.append(i)
        elif kind == "tool_result":
            if type(block_id := block.get("id")) is str:
                answered.add(block_id)
                if "name" not in block:
                    results.append(i)
        elif "id" not in block and kind in _ID_BLOCKS and type(msg_id) is str:
            out[i] = block = block if fresh else {**block}
            block["id"] = derived_block_id(msg_id, i)
    for i in calls:
        out[i] = block = out[i] if fresh else {**out[i]}
        block_id = block.get("id")
        block["state"] = "finished" if type(block_id) is str and block_id in answered else "pending"
    for i in results:
        name = call_names.get(out[i]["id"])
        if name is not None:
            out[i] = block = out[i] if fresh else {**out[i]}
            block["name"] = name
    return out


def _has_folded(content: list[Any]) -> bool:
    for block in content:
        if type(block) is dict and block.get("type") == "tool_call" and "result" in block:
            return True
    return False


def _unfold(content: list[Any], *, fresh: bool) -> list[Any]:
    """The blocks with each call's folded `result` placed after its run of calls."""
    out: list[Any] = []
    folded: list[dict[str, Any]] = []
    for block in content:
        is_call = type(block) is dict and block.get("type") == "tool_call"
        if folded and not is_call:
            out += folded
            folded = []
        if is_call and "result" in block:
            block = block if fresh else {**block}
            folded.append(_result_of(block, block.pop("result")))
        out.append(block)
    out += folded
    return out


def _result_of(call: dict[str, Any], value: Any) -> dict[str, Any]:
    """The flat tool result a call's folded `result` stands for."""
    result: dict[str, Any] = {"type": "tool_result", "id": call.get("id"), "name": call.get("name")}
    if type(value) is dict:
        if not value.keys() <= _RESULT_KEYS:  # the call's own fields say the rest
            raise ValueError(f"a folded tool result holds only {sorted(_RESULT_KEYS)}")
        result.update(value)
    else:
        result["output"] = value
    return result
