"""Where a replay starts its first compaction, without the rest of the replay.

A question such as "where would this agent have compacted first?" (``analysis/real_logs/reality.py`` asks it of every
window of a real log) needs only the check where the first compaction starts and the context there. The whole
replay would then ask the briefer, land the compaction, walk on to the end and assemble a Run, none of which
changes that answer. This is the same walk (``_Replay``, the same policy, counts and guards), stopped as that
compaction starts. Manual compactions are replayed as usual and passed over. Pure; no I/O.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.briefing.base import Briefer
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.policies.base import Compact, Trigger
from workbench.replay.loop import _Replay, prepared
from workbench.replay.results import Compression, Run


@dataclass(frozen=True, kw_only=True)
class CompactionStart:
    """The first compaction a replay starts that no manual check asked for: the fields of its Compression
    that are known when it starts (``simulate``'s record of it has the same values)."""

    check_started: int
    index_started: int  # the message after which it starts
    tokens_before: int  # the context measured there
    trigger: str


class _Stopped(Exception):  # noqa: N818 - control flow, not an error
    def __init__(self, start: CompactionStart | None) -> None:
        super().__init__()
        self.start = start


class _UntilFirstStart(_Replay):
    def start(self, k: int, context: int, act: Compact, trigger: Trigger = Trigger.THRESHOLD) -> None:
        if trigger != Trigger.MANUAL:
            raise _Stopped(CompactionStart(check_started=k, index_started=int(self.checks[k]), tokens_before=context,
                                           trigger=str(trigger)))
        super().start(k, context, act, trigger)

    def result(self) -> Run:
        raise _Stopped(None)  # the walk ended without one: no Run is needed


def first_compaction(history: History, knobs: Knobs | None = None, briefer: Briefer | None = None, *,
                     cache: CountCache | None = None) -> CompactionStart | None:
    """The first non-manual compaction ``simulate(history, knobs, briefer, cache=cache)`` starts, or None when it
    starts none. Its check, message and context are the same as that replay's; its later steps are not taken."""
    try:
        prepared(_UntilFirstStart, history, knobs, briefer, cache=cache).run()
    except _Stopped as stopped:
        return stopped.start
    raise AssertionError("the replay ended without stopping")  # pragma: no cover - result() always raises


class _UntilLanded(_Replay):
    def finish(self, flight: Any, status: str | None, k: int | None = None, landing: Any = None) -> None:
        super().finish(flight, status, k, landing)
        raise _Stopped(None) from None

    def result(self) -> Run:
        raise _Stopped(None)


def compaction_at_end(history: History, knobs: Knobs, briefer: Briefer | None = None, *,
                      cache: CountCache | None = None, before: int | None = None) -> Compression | None:
    """The replay's own compaction at the last check of ``history`` before message ``before`` (the end when
    None), with no other compaction before it, as its record: ``tokens_after`` is the context it leaves (hidden
    prefix, briefing, restored, pinned, kept tail). The walk stops as it lands, so what follows is never read.
    None when no check comes before ``before``."""
    if not history.messages:
        return None
    forced = knobs.replace(proactive_compaction=False, reactive_compaction=False, latency_steps=0,
                           cooldown_checks=0, manual_compact_checks="")
    replay = prepared(_UntilLanded, history, forced, briefer, cache=cache)
    last = len(history.messages) - 1 if before is None else before - 1
    k = int(np.searchsorted(replay.checks, last, side="right")) - 1
    if k < 0:
        return None
    replay.guards.manual = [k]
    with contextlib.suppress(_Stopped):
        replay.run()
    return replay.compressions[-1] if replay.compressions else None
