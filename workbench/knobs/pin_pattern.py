"""pin_pattern: a user's regular expression, compiled once and searched with one time budget per replay.

A pattern that backtracks catastrophically ('^(a|a)*$' on 'a' * 34 + '!', or '(a|aa)+$' a fraction of a second
on each of 600 long messages) stops with a clear error naming the knob and where it stopped, instead of hanging
the replay: the budget bounds the whole history's search, not each message's.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

from workbench.history.warnings import cut, shown

# One budget for all of a replay's pin_pattern searches: this much, plus a second per this many characters searched
# (a pattern without nested or overlapping repeats scans text many times faster, on a loaded machine too; a 1 GiB
# history gets ~4 min).
PIN_PATTERN_BUDGET_S = 2.0
PIN_PATTERN_CHARS_PER_S = 5_000_000
_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")  # with none of these (no flags, classes, escapes) a pattern is text
_LITERAL_SEARCH_MAX = 1 << 24  # characters: a plain-text search of 16 M takes milliseconds, not the budget


def pin_budget_s(chars: int) -> float:
    """The time budget for searching ``chars`` characters of a history, in seconds."""
    return PIN_PATTERN_BUDGET_S + chars / PIN_PATTERN_CHARS_PER_S


class PinPattern:
    """A compiled pin_pattern whose searches of one history share one time budget (``regex`` module timeouts)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        # A plain text, or a choice of plain texts, anchored or not, matches exactly the texts that hold (or start
        # with) one of them: ``in`` / ``startswith`` find it without the regex engine (Claude Code's '# claudeMd'
        # and Codex's '^(# AGENTS\.md instructions|...)' are searched in every message of every replayed window).
        self._alternatives = plain_alternatives(pattern) if pattern else None
        # Such a pattern is always a valid regex, so it is compiled only if a text is too long for ``in``: validating
        # a preset's knobs (every first ``workbench reality`` run) then never imports ``regex`` (4 modules) nor runs
        # its pure-Python compiler.
        self._compiled: Any = None
        if self._alternatives is None:
            self._compiled = _compile(pattern)

    @property
    def _rx(self) -> Any:
        if self._compiled is None:
            self._compiled = _compile(self.pattern)
        return self._compiled

    def search(self, text: str, *, where: str = "a message") -> bool:
        """Whether the pattern occurs in ``text`` (the budget of a history of this one text)."""
        return self.matches([text], name=lambda _i: where)[0]

    def matches(self, texts: Sequence[str], *, name: Callable[[int], str] | None = None) -> list[bool]:
        """Whether the pattern occurs in each of ``texts`` (a history's messages), all searched within one budget
        (``pin_budget_s`` of their length); past it, a ValueError names the knob and ``name(i)`` of the text it
        stopped in."""
        out = [False] * len(texts)
        todo = []
        for i, text in enumerate(texts):
            plain = self._plain(text)
            if plain is None:
                todo.append(i)
            else:
                out[i] = plain
        if not todo:
            return out
        chars = sum(len(texts[i]) for i in todo)
        budget = pin_budget_s(chars)
        deadline = time.monotonic() + budget
        for i in todo:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                out[i] = self._rx.search(texts[i], timeout=left) is not None
            except TimeoutError:
                where = name(i) if name is not None else f"text {i}"
                raise ValueError(f"pin_pattern {shown(self.pattern)} ran over its {budget:.3g} s budget for the whole "
                                 f"history ({len(texts):,} messages, {chars:,} chars to search; stopped in {where}): "
                                 "it backtracks catastrophically; simplify it (e.g. no nested or overlapping "
                                 "repeats)") from None
        return out

    def _plain(self, text: str) -> bool | None:
        """The answer without the regex engine, for a choice of plain texts; None when the engine must search."""
        if self._alternatives is None:
            return None
        anchored, texts = self._alternatives
        if anchored:
            return text.startswith(texts)
        if len(text) <= _LITERAL_SEARCH_MAX:  # far below any budget
            return any(t in text for t in texts)
        return None


def _compile(pattern: str) -> Any:
    """``regex.compile(pattern)``; a ValueError naming the knob when it is no regular expression."""
    import regex

    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ValueError(f"pin_pattern must be a regular expression, got {shown(pattern)}: "
                         f"{cut(str(exc), 120)}") from None


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

