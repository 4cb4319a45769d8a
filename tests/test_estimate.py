"""stagewise's token estimate: what each part and metadata field adds, in UTF-16 chars."""

from __future__ import annotations

import math
from typing import Any

import pytest

from workbench.history.model import Message, Part
from workbench.stagewise.estimate import content_chars, estimate_message_tokens, stagewise_total_chars


def msg(*parts: Any, metadata: Any = None, role: str = "assistant") -> Message:
    return Message(id="m", role=role, parts=tuple(Part(data=p) for p in parts), metadata=metadata)


@pytest.mark.parametrize(
    ("parts", "metadata", "chars"),
    [
        ((), None, 0),
        (({"type": "text", "text": "héllo😀"},), None, 7),
        (({"type": "text"},), None, 0),
        (({"type": "step-start"},), None, 21),
        (({"type": "tool-read", "input": {"path": "a"}},), None, len('{"type":"tool-read","input":{"path":"a"}}')),
        (({"type": "dynamic-tool", "toolName": "mcp", "input": None},), None, 3 + 4),
        (({"type": "dynamic-tool", "toolName": None, "input": {}, "output": None},), None, 0 + 2 + 4),
        (({"type": "x", "toolName": "ab", "input": 1.0, "output": [5e-7]},), None, 2 + 1 + len("[5e-7]")),
        ((None, "str", 5, [1, 2]), None, len("[1,2]")),
        ((), {"mentions": []}, 2),
        ((), {"mentions": [None]}, len("[null]")),
        ((), {"attachments": [None, None]}, 200),
        ((), {"compressedHistory": ""}, 0),
        ((), {"compressedHistory": "brief😀"}, 7),
        ((), {"envState": {"a": {"renderedState": "xy", "renderedStateChange": "z"}, "b": None}}, 3),
        ((), "not an object", 0),
    ],
    ids=[
        "no-parts",
        "utf16-text",
        "text-without-text",
        "step-start",
        "static-tool-whole-json",
        "dynamic-input-null",
        "dynamic-name-null-output-null",
        "in-operator-any-part",
        "junk-parts",
        "mentions-empty",
        "mentions-null-entry",
        "attachments-null-entries",
        "empty-briefing",
        "briefing",
        "env-state",
        "string-metadata",
    ],
)
def test_content_chars(parts: tuple[Any, ...], metadata: Any, chars: int) -> None:
    """Content chars exclude the flat 400 overhead, which is added with or without metadata."""
    m = msg(*parts, metadata=metadata)
    assert content_chars(m) == chars
    assert stagewise_total_chars(m) == chars + 400
    assert estimate_message_tokens(m) == math.ceil((chars + 400) / 4)


def test_no_parts_array_counts_zero() -> None:
    """A message without a parts array (or no message) estimates 0, overhead included."""
    m = Message(id="m", role="user", parts=None, metadata={"compressedHistory": "x" * 99})
    assert content_chars(m) is None and stagewise_total_chars(m) is None
    assert estimate_message_tokens(m) == 0 and estimate_message_tokens(None) == 0


def test_knobs_only_change_arithmetic() -> None:
    """Overhead and chars-per-token apply to the memoised content chars."""
    m = msg({"type": "text", "text": "x" * 10})
    assert estimate_message_tokens(m, overhead_chars=0, chars_per_token=3.0) == 4
    assert estimate_message_tokens(m, overhead_chars=2, chars_per_token=4.0) == 3


class _ThrowingMetadata(dict):  # type: ignore[type-arg]
    def get(self, key: Any, default: Any = None) -> Any:
        if key == "mentions":
            raise RuntimeError("broken getter")
        return super().get(key, default)


def test_metadata_that_throws_adds_2000_to_what_was_counted() -> None:
    """stagewise keeps what it had accumulated and adds a flat 2000 when metadata throws."""
    m = msg(metadata=_ThrowingMetadata(compressedHistory="abc"))
    assert content_chars(m) == 3 + 2000


def test_non_string_text_is_nan_like_javascript() -> None:
    """(5).length is undefined in JS, so the whole estimate becomes NaN there and here."""
    assert math.isnan(estimate_message_tokens(msg({"type": "text", "text": 5})))
