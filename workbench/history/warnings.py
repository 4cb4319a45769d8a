"""Load warnings: what a reader accepted but a person should know about, located like an error.

A reader raises HistoryError when it cannot build a faithful History. When it can, but had to
skip or guess (the last JSONL line was cut off by an agent still writing, a line of another format
sits in the file, records of unknown types were dropped), it keeps going and says so in
``History.warnings``: one :class:`LoadWarning` per thing, naming file, line and field the way an
error would. Faces show them (the CLI on stderr, the app in the sidebar); the engine ignores them.
Pure values, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

MAX_WARNINGS = 50  # per history: a file with a million odd lines gets a count, not a million lines
MAX_SHOWN_CHARS = 80  # a value quoted in a message is cut to this, with its length


@dataclass(frozen=True, kw_only=True)
class LoadWarning:
    """One located warning: ``chat.jsonl:17: field 'parts': ...``."""

    source: str
    line: int | None = None
    field: str | None = None
    message: str
    where: str | None = None  # an item inside a JSON document: ``messages[3]``

    def __str__(self) -> str:
        loc = self.source
        if self.line is not None:
            loc += f":{self.line}"
        pieces = [loc]
        if self.where:
            pieces.append(self.where)
        if self.field:
            pieces.append(f"field '{self.field}'")
        pieces.append(self.message)
        return ": ".join(pieces)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def cut(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` itself when short, else its first ``limit`` characters and its length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} chars)"


def shown(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, saying how long it was: error lines stay one short line."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} chars)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**limit:
        return f"a {len(str(abs(value))):,}-digit number"
    text = repr(value)
    if len(text) > limit:
        return f"{text[:limit]}… ({len(text):,} chars)"
    return text


def capped(warnings: Iterable[LoadWarning], *, source: str) -> tuple[LoadWarning, ...]:
    """At most MAX_WARNINGS warnings; past that, one last warning saying how many more there were."""
    out: list[LoadWarning] = []
    extra = 0
    for w in warnings:
        if len(out) < MAX_WARNINGS:
            out.append(w)
        else:
            extra += 1
    if extra:
        out.append(LoadWarning(source=source, message=f"{extra:,} more warnings not shown"))
    return tuple(out)


class Warned(Protocol):
    """What ``with_warnings`` needs of a history (``History`` has it): this module sits below the history model."""

    @property
    def warnings(self) -> tuple[LoadWarning, ...]: ...
    @property
    def source_path(self) -> str | None: ...
    @property
    def id(self) -> str: ...


W = TypeVar("W", bound=Warned)


def with_warnings(history: W, warnings: Iterable[LoadWarning]) -> W:
    """``history`` with ``warnings`` added before its own (a reader's file-level ones come first)."""
    new = tuple(warnings)
    if not new:
        return history
    source = history.source_path or history.id
    return dataclasses.replace(history, warnings=capped((*new, *history.warnings), source=source))  # type: ignore[type-var]
