"""Counted nouns for the sentences every face prints: "1 file", "2 files", "1,234 histories".

One home for the plural, so no face writes "1 files" or "1 test requests" again. English only, and only the
regular "-s" plural unless the caller names the irregular one. Pure: text in, text out.
"""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1, with thousands separators.

    >>> counted(1, "history", "histories"), counted(2, "file")
    ('1 history', '2 files')
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
