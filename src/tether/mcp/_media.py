"""Media a server returns: kept as a data block only if every provider can take it.

The Anthropic and OpenAI formatters send each data block of a tool result as an image,
in every later request of the session: data of another type, or data that is not what it
says, makes the provider refuse all of them. So a block is kept only when its media type is one of
`IMAGE_TYPES`, its data is valid base64 and its first bytes are that type's signature;
anything else becomes a short text note the model can read.
"""

from __future__ import annotations

import base64
import binascii

from tether.message import Base64Source, DataBlock, TextBlock

__all__ = ["IMAGE_TYPES", "media_block"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The media types kept as data blocks (the images Anthropic, OpenAI and Gemini all take)."""
_SHOWN = "PNG, JPEG, GIF and WebP images"


def _looks_like(media_type: str, raw: bytes) -> bool:
    if media_type == "image/png":
        return raw.startswith(b"\x89PNG\r\n\x1a\n")
    if media_type == "image/jpeg":
        return raw.startswith(b"\xff\xd8\xff")
    if media_type == "image/gif":
        return raw.startswith((b"GIF87a", b"GIF89a"))
    return raw.startswith(b"RIFF") and raw[8:12] == b"WEBP"


def media_block(media_type: str | None, data: str, what: str) -> TextBlock | DataBlock:
    """`data` as a data block, or a note saying why it is not shown (`what`: e.g. `image`)."""
    media = (media_type or "").strip().lower()
    if media not in IMAGE_TYPES:
        return TextBlock(
            text=f"[{what} of type {media or 'unknown'!s}: not sent to the model (only "
            f"{_SHOWN} are)]"
        )
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return TextBlock(text=f"[{what} of type {media}: its data is not valid base64; not sent]")
    if not _looks_like(media, raw):
        return TextBlock(
            text=f"[{what} of type {media}: its data is not a {media} image; not sent]"
        )
    return DataBlock(source=Base64Source(media_type=media, data=data))
