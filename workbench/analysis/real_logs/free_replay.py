"""The main replay of an agent log against the agent's own compactions: its n-th compression against the n-th one
the log records.

Unlike ``analysis/real_logs/reality.py``, which predicts each logged compaction from the state right after the previous real
one (it follows the log), this reads a whole replay run free from the log's start (``simulate``, the app's Charts
tab): after its own compaction it goes on from its own briefing, restore and tail, so one early compaction moves
the later ones. A compaction's position is the first message after it: ``index_started + 1`` for the replay, the
loader's ``LoggedCompaction.index`` for the log. Pure: a Run and a History in, values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.replay import Run

TOLERANCES = (0, 2, 5)


@dataclass(frozen=True, kw_only=True)
class AgainstLog:
    """Where the agent compacted and where the replay did, in order."""

    logged: tuple[int, ...]  # the first message after each logged compaction
    triggers: tuple[str, ...]  # "auto" or "manual", per logged compaction
    replayed: tuple[int, ...]  # the first message after each compression the replay started

    @property
    def errors(self) -> tuple[int | None, ...]:
        """Per logged compaction: the replay's compression of the same rank minus it (messages; None: no such)."""
        return tuple(self.replayed[n] - index if n < len(self.replayed) else None
                     for n, index in enumerate(self.logged))

    def sentence(self, *, counterfactual: bool = False) -> str:
        """One line for the Charts tab: how many times each compacted and how far apart."""
        manual = sum(t == "manual" for t in self.triggers)
        mine = _times(len(self.replayed))
        if counterfactual:
            head = "Counterfactual: the knobs differ from the agent's own, so this replay is not what the agent did. "
        else:
            head = ""
        if not self.logged:
            rest = f"this replay {mine}." if self.replayed else "neither does this replay."
            return f"{head}The agent never compacted in this log; {rest}"
        user = f" ({manual} by the user's /compact)" if manual else ""
        text = f"{head}The agent compacted {_times(len(self.logged))}{user}; this replay {mine}"
        errors = [e for e in self.errors if e is not None]
        if errors:
            text += ", at " + _and([f"{e:+d}" for e in errors]) + " messages from the agent's"
        missing = [index for index, e in zip(self.logged, self.errors, strict=True) if e is None]
        if missing:
            text += "; none for its " + _and([f"compaction at message {i:,}" for i in missing])
        extra = self.replayed[len(self.logged):]
        if extra:
            text += "; and again at message " + _and([f"{i:,}" for i in extra])
        return text + "."


def against_log(run: Run, history: History) -> AgainstLog | None:
    """The replay's compressions beside the log's compactions (None for a history that is not an agent log). A
    compaction the log starts at (no message before it: what it summarised is in another file) is no replay's to
    make and is left out, so the replay's first compression meets the log's first it could have made."""
    log = history.log
    if log is None:
        return None
    real = sorted((c for c in log.compactions if c.index > 0), key=lambda c: c.index)
    return AgainstLog(logged=tuple(c.index for c in real), triggers=tuple(c.trigger for c in real),
                      replayed=tuple(c.index_started + 1 for c in run.compressions))


def factual_knobs(history: History) -> Knobs | None:
    """The knobs of the factual replay of an agent log (its agent's own settings, ``agent_settings``); any other
    knobs make a counterfactual. None for a history that is not an agent log."""
    if history.log is None:
        return None
    from workbench.analysis.real_logs.agent_settings import agent_settings

    return agent_settings(history, dollars=False).knobs


def summary(rows: Sequence[AgainstLog], *, later: bool = False) -> dict[str, Any]:
    """Over the automatic compactions of ``rows``: how many the replay put within 0, 2 and 5 messages, how many it
    has no compression for, and the median distance. ``later``: only those after the log's first compaction, the
    ones the replay reaches from its own (its briefing, restore and kept tail), not from the log's bills."""
    errors = [e for r in rows for n, (e, t) in enumerate(zip(r.errors, r.triggers, strict=True))
              if t == "auto" and (n > 0 or not later)]
    found = [abs(e) for e in errors if e is not None]
    out: dict[str, Any] = {"sessions": len(rows), "auto_compactions": len(errors),
                           "missed": sum(e is None for e in errors),
                           "median_abs_error": median(found) if found else None}
    for tol in TOLERANCES:
        hit = sum(1 for e in found if e <= tol)
        out[f"within_{tol}"] = hit
        out[f"within_{tol}_share"] = round(hit / len(errors), 4) if errors else None
    return out


def _times(n: int) -> str:
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n:,} times")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
