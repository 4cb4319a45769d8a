"""Images inside messages, seen as images: media type, byte size and pixel size, never as base64 text.

A provider bills an image by its pixels (Anthropic: about width x height / 750 tokens after scaling it
to fit its limits), not by the length of its base64 text: a 415 KB screenshot is ~104k tokens as text and
under 2k as an image. Images hide in file parts (``data:`` URLs), in Anthropic ``image`` blocks and in
OpenAI ``input_image`` items, including inside tool outputs. Pixel sizes come from the first bytes of the
payload (PNG, JPEG, GIF, WebP headers), so nothing is decoded whole. Pure; no I/O.
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass
from typing import Any

# Enough of the payload to reach a JPEG's frame header past typical EXIF/ICC blocks (base64 chars).
_HEAD_CHARS = 96_000
_MAX_DEPTH = 64


@dataclass(frozen=True, kw_only=True)
class ImageRef:
    """One image in a message.

    ``payload_chars`` is the length of its base64 text as it sits in the message (what a text count would
    count); ``byte_size`` the decoded size; ``width``/``height`` in pixels when the header could be read
    (None when the payload is not base64, was redacted, or is a URL without data).
    """

    media_type: str
    payload_chars: int
    byte_size: int
    width: int | None = None
    height: int | None = None

    @property
    def pixels(self) -> int | None:
        return self.width * self.height if self.width and self.height else None


def message_images(message: Any) -> tuple[ImageRef, ...]:
    """Every image in a message's parts (and in tool outputs inside them), in order."""
    found: list[ImageRef] = []
    for part in message.parts or ():
        _walk(part.data, found, 0)
    return tuple(found)


def strip_image_payloads(text: str, message: Any) -> str:
    """``text`` (a rendering of ``message``) with every base64 image payload of the message removed."""
    payloads: list[str] = []
    for part in message.parts or ():
        _payloads(part.data, payloads, 0)
    for payload in sorted(set(payloads), key=len, reverse=True):
        if payload:
            text = text.replace(payload, "")
    return text


def _payloads(value: Any, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        if _image_of(value) is not None:
            src = value.get("source")
            if isinstance(src, dict) and isinstance(src.get("data"), str):
                out.append(src["data"])
            for key in ("image_url", "url"):
                url = value.get(key)
                url = url.get("url") if isinstance(url, dict) else url
                if isinstance(url, str) and url.startswith("data:") and "," in url:
                    out.append(url.split(",", 1)[1])
            return
        for item in value.values():
            if isinstance(item, (dict, list)):
                _payloads(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                _payloads(item, out, depth + 1)


def _walk(value: Any, found: list[ImageRef], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        ref = _image_of(value)
        if ref is not None:
            found.append(ref)
            return
        for item in value.values():
            if isinstance(item, (dict, list)):
                _walk(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                _walk(item, found, depth + 1)


def _image_of(obj: dict[str, Any]) -> ImageRef | None:
    kind = obj.get("type")
    if kind == "image":  # Anthropic: {"type": "image", "source": {"type": "base64", "media_type", "data"}}
        src = obj.get("source")
        if isinstance(src, dict) and isinstance(src.get("data"), str):
            media = src.get("media_type")
            return image_from_base64(src["data"], media if isinstance(media, str) else "image/*")
        return None
    if kind == "input_image":  # OpenAI Responses: {"type": "input_image", "image_url": "data:...;base64,..."}
        url = obj.get("image_url")
        return image_from_data_url(url) if isinstance(url, str) else None
    if kind == "file":  # AI SDK file part
        media = obj.get("mediaType")
        url = obj.get("url")
        if isinstance(media, str) and media.startswith("image/") and isinstance(url, str):
            return image_from_data_url(url, media)
        return None
    if kind == "image_url":  # OpenAI chat: {"type": "image_url", "image_url": {"url": ...}}
        inner = obj.get("image_url")
        url = inner.get("url") if isinstance(inner, dict) else inner
        return image_from_data_url(url) if isinstance(url, str) else None
    return None


def image_from_data_url(url: str, media_type: str | None = None) -> ImageRef | None:
    """An image from a ``data:image/...;base64,...`` URL; a plain URL counts as an image of unknown size."""
    if url.startswith("data:"):
        comma = url.find(",")
        if comma < 0:
            return None
        header = url[5:comma]
        media = header.split(";", 1)[0] or media_type or "image/*"
        if not media.startswith("image/"):
            return None
        if ";base64" not in header.lower():
            return ImageRef(media_type=media, payload_chars=len(url) - comma - 1, byte_size=len(url) - comma - 1)
        return image_from_base64(url[comma + 1 :], media)
    return ImageRef(media_type=media_type or "image/*", payload_chars=0, byte_size=0)


def image_from_base64(data: str, media_type: str) -> ImageRef:
    """An image from its base64 payload: decoded size, and pixel size from the header bytes."""
    chars = len(data)
    padding = len(data) - len(data.rstrip("="))
    byte_size = max(0, chars * 3 // 4 - padding)
    width, height = _dimensions(_head_bytes(data))
    return ImageRef(media_type=media_type, payload_chars=chars, byte_size=byte_size, width=width, height=height)


def _head_bytes(data: str) -> bytes:
    head = data[: _HEAD_CHARS - _HEAD_CHARS % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _dimensions(raw: bytes) -> tuple[int | None, int | None]:
    """(width, height) from PNG, GIF, WebP or JPEG header bytes; (None, None) when not recognised."""
    try:
        if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR":
            w, h = struct.unpack(">II", raw[16:24])
            return w, h
        if raw[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", raw[6:10])
            return w, h
        if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
            return _webp(raw)
        if raw[:2] == b"\xff\xd8":
            return _jpeg(raw)
    except (struct.error, IndexError):  # a header cut short: an image of unknown size (counted at the default)
        return None, None
    return None, None


def _webp(raw: bytes) -> tuple[int | None, int | None]:
    if len(raw) < 30:  # every chunk kind's size bytes end by byte 30
        return None, None
    chunk = raw[12:16]
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", raw[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        b = raw[21:25]
        w = 1 + (((b[1] & 0x3F) << 8) | b[0])
        h = 1 + (((b[3] & 0xF) << 10) | (b[2] << 2) | ((b[1] & 0xC0) >> 6))
        return w, h
    if chunk == b"VP8X":
        w = 1 + int.from_bytes(raw[24:27], "little")
        h = 1 + int.from_bytes(raw[27:30], "little")
        return w, h
    return None, None


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg(raw: bytes) -> tuple[int | None, int | None]:
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            i += 1
            continue
        marker = raw[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", raw[i + 2 : i + 4])[0]
        if marker in _SOF:
            h, w = struct.unpack(">HH", raw[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None, None
