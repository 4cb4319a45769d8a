"""The stagewise UIMessage reader keeps every quirk stagewise reacts to, and gives the JSON back."""

from __future__ import annotations

import pytest

from workbench.history.errors import HistoryError
from workbench.history.readers.uimessage import messages_from_uimessage_list

ITEMS = [
    {
        "id": "a",
        "role": "user",
        "parts": [{"type": "text", "text": "hi"}, None, "junk"],
        "metadata": {"createdAt": "x"},
    },
    None,
    {"id": "b", "role": "assistant", "parts": None, "metadata": None},
    {"id": "c", "role": "assistant", "metadata": {"compressedHistory": "brief"}, "custom": [1]},
    {"id": "d", "role": "user", "parts": "not-an-array"},
]


def test_round_trip_is_lossless() -> None:
    """to_dict gives each object back; null entries stay None in place."""
    messages = messages_from_uimessage_list(ITEMS, source="t.json")
    assert messages[1] is None
    assert [m.to_dict() if m else None for m in messages] == ITEMS


def test_missing_and_null_parts_both_read_as_none() -> None:
    """stagewise treats a missing key, null and a non-array alike: parts is None for all three."""
    messages = messages_from_uimessage_list(ITEMS, source="t.json")
    assert [m.parts is None for m in messages if m] == [False, True, True, True]
    first = messages[0]
    assert first is not None and first.parts is not None
    assert [p.data for p in first.parts] == [{"type": "text", "text": "hi"}, None, "junk"]


def test_bad_entries_raise_located_errors() -> None:
    """A truthy non-object entry cannot be a message: the error names the file and index."""
    with pytest.raises(HistoryError, match=r"t\.json: \[1\]"):
        messages_from_uimessage_list([{"id": "a", "role": "user"}, 5], source="t.json")
    with pytest.raises(HistoryError):
        messages_from_uimessage_list({"messages": []}, source="t.json")  # type: ignore[arg-type]
