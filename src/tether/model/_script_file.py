"""Script files for `ScriptedChatModel`: one YAML (or JSON) list item per model call.

```yaml
- thinking: The user wants the date.    # optional, streamed as reasoning
  text: Let me look.                     # optional, streamed as text
  tool_calls:                            # optional; ids are generated
    - name: Bash
      input: {command: date}
- error: "ConnectionError: down"         # this call raises the exception
- text: It is Tuesday.
  usage: {input_tokens: 300, output_tokens: 12}   # optional: the tokens the call reports
```
"""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

from tether import errors
from tether._ids import new_id
from tether.errors import ScriptFileError
from tether.message import (
    AssistantMsg,
    ChatUsage,
    ContentBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)

__all__ = ["load_script"]

_STEP_KEYS = frozenset({"thinking", "text", "tool_calls", "error", "usage"})


def load_script(path: str | Path) -> list[Msg | BaseException]:
    """Read a script file into the steps `ScriptedChatModel` plays.

    Raises:
        ScriptFileError: the file is missing, does not parse, or a step is malformed
            (the message names the file and the step).
    """
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptFileError(
            f"cannot read model script {str(where)!r}: {exc.strerror or exc}; "
            "pass an existing YAML or JSON file to `scripted:FILE`"
        ) from None
    data = _parse(where, text)
    if not isinstance(data, list):
        raise ScriptFileError(
            f"model script {str(where)!r} must be a list with one item per model call, "
            f"got {type(data).__name__}"
        )
    return [_step(where, index, item) for index, item in enumerate(data)]


def _parse(where: Path, text: str) -> Any:
    if where.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptFileError(f"model script {str(where)!r} is not valid JSON: {exc}") from None
    import yaml  # JSON files need no YAML parser

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScriptFileError(f"model script {str(where)!r} is not valid YAML: {exc}") from None


def _step(where: Path, index: int, item: Any) -> Msg | BaseException:
    at = f"step {index} of model script {str(where)!r}"
    if not isinstance(item, dict) or not item:
        raise ScriptFileError(
            f"{at} must be a mapping with any of `thinking`, `text`, `tool_calls`, `error`"
        )
    unknown = sorted(str(k) for k in item if k not in _STEP_KEYS)
    if unknown:
        raise ScriptFileError(
            f"{at} has unknown keys {unknown}; use `thinking`, `text`, `tool_calls`, `usage` "
            "or `error`"
        )
    if "error" in item:
        if len(item) > 1:
            raise ScriptFileError(f"{at}: an `error` step raises, so it takes no other keys")
        return _error(at, item["error"])
    blocks: list[ContentBlock] = []
    for key, block in (("thinking", ThinkingBlock), ("text", TextBlock)):
        if key in item:
            if not isinstance(item[key], str):
                raise ScriptFileError(f"{at}: `{key}` must be a string")
            blocks.append(block(**{key: item[key]}))
    blocks += [_call(at, n, c) for n, c in enumerate(_list(at, item.get("tool_calls", [])))]
    msg: Msg = AssistantMsg("assistant", blocks)
    if "usage" in item:
        msg.usage = _usage(at, item["usage"])
    return msg


def _usage(at: str, value: Any) -> ChatUsage:
    keys = ("input_tokens", "output_tokens")
    if (
        not isinstance(value, dict)
        or set(value) - set(keys)
        or not all(isinstance(v, int) and v >= 0 for v in value.values())
    ):
        raise ScriptFileError(
            f"{at}: `usage` must be a mapping of `input_tokens` and `output_tokens` counts"
        )
    return ChatUsage(**value)


def _list(at: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ScriptFileError(f"{at}: `tool_calls` must be a list of `{{name, input}}` mappings")
    return value


def _call(at: str, n: int, call: Any) -> ToolCallBlock:
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise ScriptFileError(f"{at}: tool call {n} needs a `name` string (and an `input` mapping)")
    extra = sorted(str(k) for k in call if k not in ("name", "input"))
    arguments = call.get("input", {})
    if extra or not isinstance(arguments, dict):
        raise ScriptFileError(
            f"{at}: tool call {n} takes only `name` and `input`, and `input` must be a mapping"
        )
    return ToolCallBlock(id=f"call_{new_id()}", name=call["name"], input=json.dumps(arguments))


def _error(at: str, value: Any) -> BaseException:
    type_name, sep, message = str(value).partition(":")
    cls = getattr(errors, type_name.strip(), None) or getattr(builtins, type_name.strip(), None)
    if not sep or not isinstance(cls, type) or not issubclass(cls, Exception):
        raise ScriptFileError(
            f"{at}: `error` must read 'TypeName: message' with a built-in or `tether.errors` "
            f"exception type, e.g. 'ConnectionError: down'; got {value!r}"
        )
    error: BaseException = cls(message.strip())
    return error
