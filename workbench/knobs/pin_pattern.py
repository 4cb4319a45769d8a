"""pin_pattern: a user's regular expression, compiled once and searched with a time bound.

A pattern that backtracks catastrophically ('^(a|a)*$' on 'a' * 34 + '!') stops with a clear error naming
the pattern and the message instead of hanging the replay.
"""

from __future__ import annotations

import functools

from workbench.history.warnings import cut, shown

# A user regex (pin_pattern) runs with the `regex` module's timeout per message: a pattern that
# backtracks catastrophically ('^(a|a)*$' on 'a' * 34 + '!') stops with a clear error instead of hanging.
PIN_PATTERN_TIMEOUT_S = 0.25
_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")  # with none of these (no flags, classes, escapes) a pattern is text
_LITERAL_SEARCH_MAX = 1 << 24  # characters: a plain-text search of 16 M takes milliseconds, not the timeout


class PinPattern:
    """A compiled pin_pattern whose every search is bounded in time (``regex`` module, timeout per call)."""

    def __init__(self, pattern: str) -> None:
        import regex

        self.pattern = pattern
        # A plain text, or a choice of plain texts, anchored or not, matches exactly the texts that hold (or start
        # with) one of them: ``in`` / ``startswith`` find it without the regex engine (Claude Code's '# claudeMd'
        # and Codex's '^(# AGENTS\.md instructions|...)' are searched in every message of every replayed window).
        self._alternatives = plain_alternatives(pattern) if pattern else None
        try:
            self._rx = regex.compile(pattern)
        except (regex.error, OverflowError, RecursionError, ValueError) as exc:
            raise ValueError(f"pin_pattern must be a regular expression, got {shown(pattern)}: "
                             f"{cut(str(exc), 120)}") from None

    def search(self, text: str, *, where: str = "a message") -> bool:
        """Whether the pattern occurs in ``text``; a search past the timeout raises ValueError naming ``where``."""
        if self._alternatives is not None:
            anchored, texts = self._alternatives
            if anchored:
                return text.startswith(texts)
            if len(text) <= _LITERAL_SEARCH_MAX:  # far below any timeout
                return any(t in text for t in texts)
        try:
            return self._rx.search(text, timeout=PIN_PATTERN_TIMEOUT_S) is not None
        except TimeoutError:
            raise ValueError(f"pin_pattern {shown(self.pattern)} ran over {PIN_PATTERN_TIMEOUT_S:g}s on {where} "
                             f"({len(text):,} chars): it backtracks catastrophically; simplify it (e.g. no nested "
                             "or overlapping repeats)") from None


def plain_alternatives(pattern: str) -> tuple[bool, tuple[str, ...]] | None:
    """(anchored, texts) for a pattern that is a choice of plain texts: ``a|b``, ``(a|b)`` or ``(?:a|b)``, each
    optionally after a ``^``, whose alternatives hold no special character but escaped ones (``\\.`` is a dot).
    It matches exactly the texts that hold one of them (start with one, when anchored: without the MULTILINE
    flag ``^`` is the start of the text). None for any other pattern (the regex engine searches it).
    """
    anchored = pattern.startswith("^")
    body = pattern[1:] if anchored else pattern
    grouped = True
    if body.startswith("(?:") and body.endswith(")"):
        body = body[3:-1]
    elif body.startswith("(") and body.endswith(")") and not body.startswith("(?"):
        body = body[1:-1]
    else:
        grouped = False
    texts: list[str] = []
    piece: list[str] = []
    chars = iter(body)
    for c in chars:
        if c == "\\":
            nxt = next(chars, None)
            if nxt is None or nxt not in _REGEX_SPECIAL:
                return None  # \d, \n, \A...: not plain text
            piece.append(nxt)
        elif c == "|":
            texts.append("".join(piece))
            piece = []
        elif c in _REGEX_SPECIAL:
            return None
        else:
            piece.append(c)
    texts.append("".join(piece))
    if anchored and not grouped and len(texts) > 1:
        return None  # '^a|b' is '^a' or 'b' anywhere
    return anchored, tuple(texts)


@functools.lru_cache(maxsize=64)
def compile_pin_pattern(pattern: str) -> PinPattern:
    """The pattern compiled (remembered: every replayed window of a log asks again; a PinPattern never changes)."""
    return PinPattern(pattern)

