"""pin_pattern: a user's regular expression, compiled once and searched with a time bound.

A pattern that backtracks catastrophically ('^(a|a)*$' on 'a' * 34 + '!') stops with a clear error naming
the pattern and the message instead of hanging the replay.
"""

from __future__ import annotations

from workbench.history.warnings import cut, shown

# A user regex (pin_pattern) runs with the `regex` module's timeout per message: a pattern that
# backtracks catastrophically ('^(a|a)*$' on 'a' * 34 + '!') stops with a clear error instead of hanging.
PIN_PATTERN_TIMEOUT_S = 0.25
_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")  # with none of these (no flags, classes, escapes) a pattern is text
_LITERAL_SEARCH_MAX = 1 << 24  # characters: a plain-text search of 16 M takes milliseconds, not the timeout


class PinPattern:
    """A compiled pin_pattern whose every search is bounded in time (``regex`` module, timeout per call)."""

    def __init__(self, pattern: str) -> None:
        import regex  # type: ignore[import-untyped]  # no stubs shipped

        self.pattern = pattern
        # A pattern of plain characters matches exactly where the text holds it: ``in`` finds it without the
        # regex engine (Claude Code's '# claudeMd' is searched in every message of every replayed window).
        self._literal = pattern if pattern and not any(c in _REGEX_SPECIAL for c in pattern) else None
        try:
            self._rx = regex.compile(pattern)
        except (regex.error, OverflowError, RecursionError, ValueError) as exc:
            raise ValueError(f"pin_pattern must be a regular expression, got {shown(pattern)}: "
                             f"{cut(str(exc), 120)}") from None

    def search(self, text: str, *, where: str = "a message") -> bool:
        """Whether the pattern occurs in ``text``; a search past the timeout raises ValueError naming ``where``."""
        if self._literal is not None and len(text) <= _LITERAL_SEARCH_MAX:  # far below any timeout
            return self._literal in text
        try:
            return self._rx.search(text, timeout=PIN_PATTERN_TIMEOUT_S) is not None
        except TimeoutError:
            raise ValueError(f"pin_pattern {shown(self.pattern)} ran over {PIN_PATTERN_TIMEOUT_S:g}s on {where} "
                             f"({len(text):,} chars): it backtracks catastrophically; simplify it (e.g. no nested "
                             "or overlapping repeats)") from None


def compile_pin_pattern(pattern: str) -> PinPattern:
    return PinPattern(pattern)

