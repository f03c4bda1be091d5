"""One sanitiser for every string that reaches a terminal from outside the program.

A model, a tool, a file name or a config value can hold control sequences: OSC 52 (write
the clipboard), OSC 8 (links), OSC 0 (the title; left open it swallows what follows),
CSI (clear the screen, move the cursor), C1 bytes (the one-byte forms of those), and
bidirectional overrides (text that reads differently than it is). `visible` renders them
as harmless visible text; newlines and tabs stay.
"""

from __future__ import annotations

__all__ = ["json_visible", "visible"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""Arabic letter mark, LRM/RLM, embeddings and overrides, isolates."""


def _table() -> dict[int, str]:
    table: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}  # ␀ … ␛ … ␟
    del table[0x09], table[0x0A]  # tab and newline stay
    table[0x7F] = "␡"
    table.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})  # C1 controls
    table.update({c: f"\\u{c:04x}" for c in _BIDI})
    return table


_VISIBLE = _table()
_JSON = {c: f"\\u{c:04x}" for c in (*range(0x80, 0xA0), *_BIDI)}
"""What a JSON encoder leaves raw but a terminal would act on (only ever inside strings)."""


def visible(text: str) -> str:
    r"""`text` with every control character shown (`ESC` as `␛`, C1 as `\\x9b`, bidi as `\\u202e`).

    A CR before a newline is dropped (Windows line ends), any other shows as `␍`.
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_VISIBLE)


def json_visible(encoded: str) -> str:
    r"""Encoded JSON with C1 controls and bidi overrides as `\\uXXXX` (the same value)."""
    return encoded.translate(_JSON)
