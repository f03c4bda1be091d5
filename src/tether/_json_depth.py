"""How deeply raw JSON nests, found without parsing it (so without recursing).

Parsers recurse once per `[` or `{`: `json.loads` of 100,000 nested arrays raises
`RecursionError`, and what reads the result (pydantic, `copy.deepcopy`) may recurse
again. Data read from outside (a stored session, a state sent in) is checked with
`json_depth_exceeds` first and refused when it nests deeper than `MAX_JSON_DEPTH`.
"""

from __future__ import annotations

import re
from itertools import accumulate

__all__ = ["MAX_JSON_DEPTH", "json_depth_exceeds"]

MAX_JSON_DEPTH = 256
"""Deeper nesting is refused. pydantic's own JSON parser stops at 200 levels, so nothing
tether has validated and saved nests deeper; `json.loads` manages about 1,000 from a
shallow stack, so 256 leaves room for the caller's frames."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_PAIR = re.compile(rb"[\[{][\]}]")
_PASSES = 8


def json_depth_exceeds(raw: str | bytes | bytearray, limit: int = MAX_JSON_DEPTH) -> bool:
    """True if `raw` (JSON text) nests arrays and objects more than `limit` levels deep.

    Brackets inside strings do not count. Linear in the size of `raw`, and done in C for
    the common cases: fewer brackets than `limit` (two `bytes.count` calls) or shallow
    nesting (a few regex passes). Text that is not valid JSON gets an answer too; its
    parser refuses it anyway.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= limit:
        return False
    # Each pass removes the innermost pairs, one level everywhere: shallow data vanishes.
    passes = min(limit, _PASSES)
    for _ in range(passes):
        brackets = _PAIR.sub(b"", brackets)
    if not brackets:
        return False
    return max(accumulate(_STEP[b] for b in brackets)) > limit - passes
