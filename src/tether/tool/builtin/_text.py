"""Telling text from binary, and reading and writing text without changing its encoding."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Sniff", "TextFile", "encode_text", "load_text", "sniff", "unencodable"]

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
    if _mostly_utf8(head):
        # UTF-8 with a few stray bytes: the stray bytes are kept as they are.
        return Sniff("text", "utf-8")
    # Not UTF-8 but mostly printable: a legacy 8-bit encoding; latin-1 round-trips any byte.
    return Sniff("text", "latin-1")


def _mostly_utf8(head: bytes) -> bool:
    """At least as many valid multi-byte UTF-8 characters as bytes that are not UTF-8.

    In a legacy 8-bit text each accented letter is a stray byte, and two in a row rarely
    form a valid UTF-8 sequence.
    """
    text = head.decode("utf-8", errors="surrogateescape")
    stray = sum(1 for c in text if "\udc80" <= c <= "\udcff")
    valid = sum(1 for c in text if c >= "\x80") - stray
    return valid >= stray


@dataclass(frozen=True, slots=True)
class TextFile:
    """A text file's content with what is needed to write it back the same way."""

    text: str
    """The content, line endings as on disk."""
    encoding: str
    """The codec that decodes it (BOM-carrying codecs write the BOM back)."""
    crlf: bool
    """Every line ends with CRLF (edits then use CRLF too)."""


def _errors(encoding: str) -> str:
    # UTF-8 files may hold stray bytes that are not UTF-8: keep them byte for byte.
    return "surrogateescape" if encoding.startswith("utf-8") else "strict"


def load_text(path: Path) -> TextFile | None:
    """Read a whole text file, or `None` if it is binary."""
    data = path.read_bytes()
    kind = sniff(data[:SNIFF_BYTES], complete=len(data) <= SNIFF_BYTES)
    if kind.kind != "text":
        return None
    encoding = kind.encoding
    try:
        text = data.decode(encoding, errors=_errors(encoding))
    except UnicodeDecodeError:
        # E.g. UTF-16 with an odd number of bytes: keep every byte with latin-1.
        encoding = "latin-1"
        text = data.decode(encoding)
    newlines = text.count("\n")
    crlf = newlines > 0 and text.count("\r\n") == newlines
    return TextFile(text, encoding, crlf)


def encode_text(text: str, encoding: str) -> bytes:
    """Encode in the file's encoding (stray bytes of a UTF-8 file come back as they were).

    Raises:
        UnicodeEncodeError: `text` has characters the encoding cannot hold.
    """
    return text.encode(encoding, errors=_errors(encoding))


def unencodable(text: str, encoding: str) -> str:
    """The characters of `text` that `encoding` cannot hold, for a message: `'→', '€'`."""
    bad: dict[str, None] = {}
    for char in text:
        if char >= "\x80" and char not in bad:
            try:
                char.encode(encoding)
            except UnicodeEncodeError:
                bad[char] = None
                if len(bad) == 5:
                    break
    return ", ".join(repr(c) for c in bad)
