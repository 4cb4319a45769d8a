"""One file as the transcript tells it, sized as Claude Code's restore re-attaches it (``counting.restore``).

A file's reads (or its write) size it: a whole read by its result, a range read scaled to the whole file by the
line counts Claude Code logs with it, a write by its content; by what the provider billed for its reads when the
log's bill is given, else by the counter (the trigger counter times ``token_ratio``). Texts are built and counted
only for the files a restore picks. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from workbench.counting.attachments import (
    bare_floor,
    numbered,
    numbered_len,
    part_text,
    part_text_len,
    read_attachment,
    read_attachment_len,
    without_line_numbers,
    without_reminders,
)
from workbench.counting.encodings import count_text_tokens
from workbench.counting.tokens import CountCache
from workbench.history.jsjson import utf16_len
from workbench.history.session_log import MAX_FILE_LINES

if TYPE_CHECKING:
    import numpy as np

Counts = Union[Sequence[int], "np.ndarray"]  # per message of a log: the billed counter's tokens

@dataclass
class _File:
    """What the transcript tells of one file: the reads (or the write) that size it, and its mtime rank.

    Texts are built and counted only for the files a restore picks (a handful per compaction), not for every read."""

    path: str
    # (the read's output or the written content, key, written, the read's billed tokens or None)
    whole: tuple[Any, tuple[Any, ...], bool, int | None] | None = None
    ranges: list[tuple[Any, tuple[Any, ...], int, int | None]] = field(default_factory=list)  # (..., lines shown, billed)
    total_lines: int = 0
    modified: int = 0  # order of the session's last change to it (0: never changed in the session)
    read: int = 0  # order of its last read
    whole_at: int = 0  # order of its last whole read (no offset or limit) or write: what a resumed session rebuilds
    resumed_at: int = 0  # the stamp a resumed session gave it (its whole read's or write's time), until used again
    grown: int = 0  # chars its edits added since the reads (or the write) that size it: the restore reads it as it is

    def stamp(self) -> tuple[int, int]:
        """Its place in readFileState's order, newest last: the file's mtime as last stored (the session's last
        change to it, or the time a resumed session stamped it), then its last read."""
        return max(self.modified, self.resumed_at), self.read

    def tokens(self, count: _Counter, limit: int) -> tuple[int, bool] | None:
        """(tokens as restored, whether the bare content is within the per-file ``limit``), or None when the size
        is unknown: the size the reads (or the write) tell, grown by what the edits since added (the restore reads
        the file as it is then; Claude Code's Read tool checks the limit on the content it reads)."""
        if not self.grown:
            return self._tokens(count, limit)
        chars = self._bare_chars(count)
        if not chars:
            return self._tokens(count, limit)
        growth = max(0.1, 1.0 + self.grown / chars)
        size = self._tokens(count, round(limit / growth))
        return None if size is None else (round(size[0] * growth), size[1])

    def _bare_chars(self, count: _Counter) -> float:
        """The file's length without line numbers and reminders, as the reads (or the write) tell it; each read's
        kept under its key (``_Counter.bare_lengths``): every compaction after an edit sizes the file again."""
        if self.whole is not None:
            raw, key, written, _ = self.whole
            text = part_text(raw)
            return len(text) if written else count.bare_lengths(text, key)[1]
        shown = sum(lines for _, _, lines, _ in self.ranges)
        if not shown or not self.total_lines:
            return 0.0
        bare = sum(count.bare_lengths(part_text(raw), key)[1] for raw, key, *_ in self.ranges)
        return bare * max(1.0, self.total_lines / shown)

    def _tokens(self, count: _Counter, limit: int) -> tuple[int, bool] | None:
        """``tokens`` as the reads (or the write) tell it.

        The bare content is counted only when the restored text (a superset of it) is over the limit, and not
        even then when a floor of its count is over the limit too (``bare_floor``)."""
        if self.whole is not None:
            raw, key, written, billed = self.whole
            if billed is not None and written:  # the content as billed, plus what numbering its lines adds
                added = count.of_length(lambda: read_attachment_len(self.path) + numbered_len(raw) - utf16_len(raw),
                                        ("numbers", *key))
                return billed + added, billed <= limit
            if billed is not None:
                return _billed_size(self.path, [(part_text(raw), billed, key)], 1.0, count, limit)
            if written:  # restored as the Read tool would show it: numbered
                if count.by_length:
                    restored = count.of_length(lambda: read_attachment_len(self.path) + numbered_len(raw),
                                               ("whole", *key))
                else:
                    restored = count(lambda: read_attachment(self.path, numbered(raw)), ("whole", *key))
                return restored, restored <= limit or count(raw, ("bare", *key)) <= limit
            if count.by_length:
                restored = count.of_length(lambda: read_attachment_len(self.path) + part_text_len(raw),
                                           ("whole", *key))
            else:
                restored = count(lambda: read_attachment(self.path, part_text(raw)), ("whole", *key))
            if restored <= limit:
                return restored, True
            body = without_reminders(part_text(raw))
            if ("bare", *key) not in count.store and count.floor(body) > limit:
                return restored, False
            return restored, count(lambda: without_line_numbers(body), ("bare", *key)) <= limit
        shown = sum(lines for _, _, lines, _ in self.ranges)
        if not shown or not self.total_lines:
            return None
        scale = max(1.0, self.total_lines / shown)
        if all(b is not None for *_, b in self.ranges):
            reads = [(part_text(raw), b or 0, key) for raw, key, _, b in self.ranges]
            return _billed_size(self.path, reads, scale, count, limit)
        restored = notice = 0
        bodies = []
        for raw, key, _, _ in self.ranges:  # the file's reminder notice (if any) is restored once, not scaled
            text = read_attachment(self.path, part_text(raw))
            body = without_reminders(text)
            if len(body) < len(text):
                notice = count(text[len(body):] if text.startswith(body) else "", ("notice", *key))
            restored += count(body, ("range", *key))
            bodies.append((body, key))
        whole = round(restored * scale)
        if whole <= limit:
            return whole + notice, True
        if (all(("range-bare", *key) not in count.store for _, key in bodies)
                and round(sum(count.floor(body) for body, _ in bodies) * scale) > limit):
            return whole + notice, False
        bare = sum(count(without_line_numbers(body), ("range-bare", *key)) for body, key in bodies)
        return whole + notice, round(bare * scale) <= limit


def _billed_size(path: str, reads: list[tuple[str, int, tuple[Any, ...]]], scale: float, count: _Counter,
                 limit: int) -> tuple[int, bool]:
    """(tokens as restored, whether within ``limit``) of a file from what the provider billed for its reads
    (``reads``: each read's result text, billed tokens and key; ``scale``: whole file over the lines shown): the same
    numbered lines the restore re-attaches, so their bill is its count, and the bare content's share of it (the
    text without line numbers and reminder) is what the limit is checked on."""
    restored = bare = 0.0
    notice = 0
    for text, billed, key in reads:
        body_chars, bare_chars = count.bare_lengths(text, key)
        body_tokens = billed * body_chars / len(text) if text else 0.0
        notice = max(notice, int(billed - body_tokens))  # a reminder is re-attached once, not scaled
        restored += body_tokens
        bare += body_tokens * bare_chars / body_chars if body_chars else 0.0
    header = count(lambda: read_attachment(path, ""), ("header", path))  # built only when not counted yet
    return round(restored * scale) + notice + header, round(bare * scale) <= limit


def _digest(msg: Any) -> str:
    return str(msg.digest)


class _Counter:
    """Tokens of a text as billed: the trigger counter times ``token_ratio``; counts kept in the CountCache."""

    def __init__(self, counter: str, token_ratio: float, chars_per_token: float, cache: CountCache | None,
                 billed: Counts | None = None) -> None:
        self.billed = billed  # per message of the log, what the provider billed for it (``counting.billed``), or None
        self.counter = "estimate" if counter == "usage" else counter
        self.ratio = token_ratio
        self.cpt = chars_per_token
        self.store = (cache.restore_counts if cache is not None else {}).setdefault((self.counter, self.cpt), {})
        self.key: Callable[[Any], Any] = cache.parts_key if cache is not None else _digest
        self.by_length = self.counter == "estimate"  # the count is a function of the UTF-16 length alone

    def __call__(self, text: str | Callable[[], str], key: tuple[Any, ...] | None = None) -> int:
        """Tokens of ``text`` (or of what it builds: built only when ``key`` has no count yet)."""
        found = self.store.get(key) if key is not None else None
        if found is None:
            found = count_text_tokens(text if isinstance(text, str) else text(), self.counter, chars_per_token=self.cpt)
            if key is not None:
                self.store[key] = found
        return math.ceil(found * self.ratio)

    def of_length(self, length: Callable[[], int], key: tuple[Any, ...]) -> int:
        """For the estimate: the tokens of a text of UTF-16 ``length()``, the text not built (the same count as
        ``count_text_tokens``: ceil(length / cpt))."""
        found = self.store.get(key)
        if found is None:
            found = self.store[key] = math.ceil(length() / self.cpt)
        return math.ceil(found * self.ratio)

    def bare_lengths(self, text: str, key: tuple[Any, ...]) -> tuple[int, int]:
        """(length of ``text`` without reminders, and without line numbers too), kept under ``key``: every compaction
        after a file's read sizes it again from the same result (a regex pass over the file's text each time)."""
        body_key, bare_key = ("body-chars", *key), ("bare-chars", *key)
        body_chars = self.store.get(body_key)
        bare_chars = self.store.get(bare_key)
        if body_chars is None or bare_chars is None:
            body = without_reminders(text)
            body_chars = self.store[body_key] = len(body)
            bare_chars = self.store[bare_key] = len(without_line_numbers(body))
        return body_chars, bare_chars

    def floor(self, text: str) -> int:
        """A floor of the tokens of ``without_line_numbers(text)`` (0 for a counter not counting lengths)."""
        return math.ceil(math.ceil(bare_floor(text) / self.cpt) * self.ratio) if self.by_length else 0


def _billed_message(billed: Counts | None, i: int) -> int | None:
    """What the provider billed for message ``i`` (None without a bill, or where the billed counter gives it 0:
    the bill fell there, so it tells nothing of the message)."""
    if billed is None or i >= len(billed) or billed[i] <= 0:
        return None
    return int(billed[i])


def _billed_part(billed: Counts | None, i: int, msg: Any, j: int) -> int | None:
    """The billed tokens of tool result ``j`` of message ``i``: its share by length of the message's results."""
    total = _billed_message(billed, i)
    if total is None:
        return None
    sizes = [len(part_text(p.data.get("output"))) if p.kind == "tool-result" and isinstance(p.data, dict) else 0
             for p in msg.parts or ()]
    whole = sum(sizes)
    return round(total * sizes[j] / whole) if whole and j < len(sizes) and sizes[j] else None


def _billed_input(billed: Counts | None, i: int, msg: Any, j: int) -> int | None:
    """The billed tokens of the content tool call ``j`` of assistant message ``i`` writes: its share by length of
    the message's text and tool inputs (a Write's content is billed as the call's input, then as context).
    Written code is billed at a median 1.39 tokens per 4 chars in the large set's Claude Code logs (73 writes of
    4,000 chars or more), well above the estimate's 1.12, so a file near the 5,000-token limit is called under it
    when it is not."""
    total = _billed_message(billed, i)
    if total is None:
        return None
    sizes = []
    for part in msg.parts or ():
        data = part.data if isinstance(part.data, dict) else {}
        if part.kind == "tool":
            args = data.get("input")
            sizes.append(sum(len(v) for v in args.values() if isinstance(v, str)) if isinstance(args, dict) else 0)
        elif part.kind == "text":
            sizes.append(len(data.get("text") or "") if isinstance(data.get("text"), str) else 0)
        else:
            sizes.append(0)
    whole = sum(sizes)
    return round(total * sizes[j] / whole) if whole and j < len(sizes) and sizes[j] else None


def _read(file: _File, output: Any, lines: Any, key: tuple[Any, ...], path: str, billed: int | None) -> None:
    """What one read result tells of the file's size (counted later, if the file is picked); ``billed``: what the
    provider billed for it, when known."""
    file.grown = 0  # the read shows the file as it is now
    valid = (isinstance(lines, list) and len(lines) == 3  # a hand-edited canonical file may hold anything here
             and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_FILE_LINES for v in lines))
    shown, total = (lines[1], lines[2]) if valid else (0, 0)
    if not total or shown >= total:  # the whole file (or all the log tells of it)
        file.whole = (output, (path, *key), False, billed)
        file.ranges = []
        file.total_lines = total
        return
    if file.whole is not None and file.total_lines == total:
        return  # a range of a file already seen whole: the whole read tells more
    file.whole = None
    file.ranges.append((output, (path, *key), shown, billed))
    file.total_lines = total


def edit_growth(name: str, args: dict[str, Any]) -> int:
    """Chars an Edit (or MultiEdit) adds to the file: its new strings' length less its old strings' (once each,
    even with ``replace_all``: the count of matches is not logged)."""
    edits = args.get("edits") if name == "MultiEdit" else [args]
    if not isinstance(edits, list):
        return 0
    out = 0
    for edit in edits:
        if isinstance(edit, dict) and isinstance(edit.get("new_string"), str) and isinstance(edit.get("old_string"), str):
            out += len(edit["new_string"]) - len(edit["old_string"])
    return out
