"""Case-insensitive cue patterns run case-sensitively on a lowercased text, where that gives the same matches.

The fact extractors and the extractive briefer search every message for cue words (``\\b(must|never|...)\\b``
with ``re.IGNORECASE``). Python's ``re`` tests such a pattern at every position and folds the case of each
character it compares: ~60 ns a character, the largest single cost of ``workbench probe`` at 100k messages
(issue 12 item 16). On ``text.lower()`` the same pattern without the flag runs ~3x faster, and a pattern
whose alternatives start with a literal lets ``re`` skip to the characters that can start a match.

When the two agree, for a pattern of lowercase ASCII literals, ``\\b``, ``\\w`` and ``\\s``: every character
``c`` of the text is matched by a pattern letter ``x`` under IGNORECASE exactly when ``c.lower() == x``,
and lowercasing keeps whether ``c`` is a word character, except for three characters (checked over all of
Unicode by ``tests/test_caseless.py``): U+0130 (İ), whose lowercase is two characters, and U+0131 (ı) and
U+017F (ſ), which IGNORECASE matches to ``i`` and ``s`` but ``lower()`` keeps. A text holding one of them
is searched with the original pattern, so the result is the same for every text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_UNFOLDED = ("\u0131", "\u017f")  # İ (U+0130) changes the length, which the length check catches


def folded(text: str) -> str | None:
    """``text.lower()`` when it has one character per character of ``text`` and no fold ``lower`` misses."""
    low = text.lower()
    if text.isascii():
        return low
    if len(low) != len(text) or any(ch in text for ch in _UNFOLDED):
        return None
    return low


class CaselessPattern:
    """``re.compile(pattern, re.IGNORECASE)``, searched on the folded text where that is exact.

    ``fast`` (default ``pattern``) is the case-sensitive form run on the folded text; it must match at the
    same places as ``pattern`` does there (a rewrite whose alternatives start with literals is faster).
    Matches of the fast path are on the lowercased text: use their spans, not their text.
    """

    def __init__(self, pattern: str, fast: str | None = None) -> None:
        self.ignorecase = re.compile(pattern, re.IGNORECASE)
        self.exact = re.compile(pattern if fast is None else fast)
        self.pattern = pattern

    def search(self, text: str, low: str | None = None) -> re.Match[str] | None:
        """A match in ``text`` (``low``: its ``folded`` form when the caller has it)."""
        low = folded(text) if low is None else low
        return self.ignorecase.search(text) if low is None else self.exact.search(low)

    def finditer(self, text: str, low: str | None = None) -> Iterator[re.Match[str]]:
        """Every non-overlapping match in ``text``, left to right, at the places the IGNORECASE pattern finds."""
        low = folded(text) if low is None else low
        return self.ignorecase.finditer(text) if low is None else self.exact.finditer(low)
