"""Tokenizers: tiktoken's encodings offline, the text a provider tokenizes for a message, counts of a free text.

tiktoken's encodings load from the files litellm ships (``TIKTOKEN_CACHE_DIR`` is pointed there unless the user
set it), so no download. ``counting.tokens`` stores these counts per message; its old names still import.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np

from workbench.history.jsjson import js_stringify
from workbench.history.model import Message

ENCODINGS = ("cl100k_base", "o200k_base")
# Chat formats wrap each message in a few tokens (role, separators); OpenAI documents ~3-4.
TOKENIZER_OVERHEAD_TOKENS = 4


def litellm_tokenizer_dir() -> Path | None:
    """Where litellm keeps tiktoken's BPE files, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return path if path.is_dir() else None


@functools.cache
def get_encoding(name: str) -> Any:
    """A tiktoken encoding that works offline (cl100k_base, o200k_base)."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; known: {', '.join(ENCODINGS)}")
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        folder = litellm_tokenizer_dir()
        if folder is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    import tiktoken

    return tiktoken.get_encoding(name)


def render_for_tokenizer(msg: Message) -> str:
    """The text a provider would tokenize for this message: role, words, tool calls and results."""
    chunks: list[str] = [msg.role]
    for part in msg.parts or ():
        data = part.data
        text = data.get("text") if isinstance(data, dict) else None  # Part.text, inlined: most parts are text
        if isinstance(text, str):
            chunks.append(text)
            continue
        kind = part.kind
        if kind == "tool":
            chunks.append(part.tool_name or "")
            for key in ("input", "output", "errorText"):
                if key in part.data if isinstance(part.data, dict) else False:
                    value = part.data[key]
                    chunks.append(value if isinstance(value, str) else js_stringify(value) or "")
        elif kind == "tool-result":
            value = part.output
            chunks.append(value if isinstance(value, str) else js_stringify(value) or "")
        elif kind in ("file", "other") and isinstance(part.data, dict):
            chunks.append(js_stringify(part.data) or "")
    briefing = msg.briefing
    if briefing:
        chunks.append(briefing)
    return "\n".join(chunks)


def _token_lengths(enc: Any, texts: list[str]) -> list[int]:
    """Token counts of texts (``encode_ordinary`` per text, as ``encode_ordinary_batch`` does)."""
    encode = enc.encode_ordinary
    return [len(encode(t)) for t in texts]


def _utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (legal in JS strings, not in UTF-8) replaced; tiktoken needs UTF-8."""
    if text.isascii():  # O(1) in CPython: most texts take this path
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def count_text_tokens(text: str, counter: str, *, chars_per_token: float = 4.0) -> int:
    """Tokens of a free text (a briefing): ceil(UTF-16 length / cpt), or the tokenizer's count."""
    if counter == "estimate":
        from workbench.history.jsjson import utf16_len

        return int(np.ceil(utf16_len(text) / chars_per_token))
    enc = get_encoding(counter)
    return len(enc.encode_ordinary(_utf8_safe(text)))
