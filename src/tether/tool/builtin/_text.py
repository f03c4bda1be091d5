"""Telling text from binary, and reading and writing text without changing its encoding."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Sniff", "TextFile", "encode_text", "load_text", "sniff"]

_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")
SNIFF_BYTES = 8192
"""How much of a file is looked at to decide whether it is text."""


@dataclass(frozen=True, slots=True)
class Sniff:
    """What a file's first bytes say it is."""

    kind: Literal["text", "image", "binary"]
    encoding: str = "utf-8"
    media_type: str | None = None


def _image_type(head: bytes) -> str | None:
    for magic, media in _IMAGES:
        if head.startswith(magic):
            return media
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def sniff(head: bytes, *, complete: bool) -> Sniff:
    """Classify a file from its first bytes (`complete` if they are the whole file)."""
    media = _image_type(head)
    if media is not None:
        return Sniff("image", media_type=media)
    if head.startswith(codecs.BOM_UTF8):
        return Sniff("text", "utf-8-sig")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return Sniff("text", "utf-16")
    if b"\x00" in head:
        return Sniff("binary")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=complete)
        return Sniff("text", "utf-8")
    except UnicodeDecodeError:
        pass
    controls = sum(1 for b in head if b < 0x20 and b not in _TEXT_CONTROLS)
    if head and controls / len(head) > 0.1:
        return Sniff("binary")
    # Not UTF-8 but mostly printable: a legacy 8-bit encoding; latin-1 round-trips any byte.
    return Sniff("text", "latin-1")


@dataclass(frozen=True, slots=True)
class TextFile:
    """A text file's content with what is needed to write it back the same way."""

    text: str
    """The content, line endings as on disk."""
    encoding: str
    """The codec that decodes it (BOM-carrying codecs write the BOM back)."""
    crlf: bool
    """Every line ends with CRLF (edits then use CRLF too)."""


def load_text(path: Path) -> TextFile | None:
    """Read a whole text file, or `None` if it is binary."""
    data = path.read_bytes()
    kind = sniff(data[:SNIFF_BYTES], complete=len(data) <= SNIFF_BYTES)
    if kind.kind != "text":
        return None
    encoding = kind.encoding
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        # Valid UTF-8 at the start, not further on: keep every byte with latin-1.
        encoding = "latin-1"
        text = data.decode(encoding)
    newlines = text.count("\n")
    crlf = newlines > 0 and text.count("\r\n") == newlines
    return TextFile(text, encoding, crlf)


def encode_text(text: str, encoding: str) -> bytes:
    """Encode in the file's encoding, or UTF-8 if the new text cannot be expressed in it."""
    try:
        return text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode("utf-8")
