"""``workbench reality``'s per-log work shared with worker processes, with the same output as doing it alone.

Alone the command loads every log, then follows each, then (``--briefings``) scores each. Shared, a worker
(or this process, for its own share) does those steps for one log and keeps only values (the
``SessionReality``, the briefing scores) and what each step wrote (a skipped file's note), never the
history. This process then goes through the steps in the serial order: all loads, all follows, all scores,
writing each log's captured output in turn. A step no worker finished (it raised, its result did not
pickle, the worker died) is done again here, with the rest of that log's steps, so an error is this
process's own: the same message and exit code as with ``--jobs 1``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.cli.reality import briefing_scores, load_log, no_history, user_knobs

LOAD, FOLLOW, SCORE = range(3)  # the steps, in the order the serial run takes them over all logs


@dataclass(frozen=True)
class Job:
    """One log and what the command was asked (the fields ``user_knobs`` reads, by name)."""

    path: Path
    named: bool  # named on the command line: it must load (a file found in a folder is skipped with a note)
    preset: str | None
    config: Path | None
    assignments: tuple[str, ...]
    usage: bool
    briefings: bool


@dataclass(frozen=True)
class Done:
    """What a worker made of one log: the steps it finished, what each wrote (stdout, stderr), and the values."""

    finished: int  # steps done: LOAD..SCORE; fewer than asked when one failed
    written: tuple[tuple[str, str], ...]  # per finished step
    loaded: bool = False  # False: not a history (skipped with a note)
    session: Any = None
    scores: tuple[Any, ...] | None = None


def in_processes(args: argparse.Namespace, logs: list[tuple[Path, bool]], jobs: int) -> tuple[list[Any], list[Any] | None]:
    """(sessions, briefing scores or None) of ``logs`` on ``jobs`` workers, as ``_in_this_process`` makes them."""
    from workbench.cli.parallel import map_in_processes

    todo = [Job(path=p, named=named, preset=args.preset, config=args.config, assignments=tuple(args.assignments),
                usage=not args.ignore_usage, briefings=bool(args.briefings)) for p, named in logs]
    done = map_in_processes(work, todo, jobs, weights=[_size(p) for p, _ in logs])
    here: dict[int, Any] = {}  # histories loaded in this process: every later step of theirs is done here too
    kept: list[int] = []
    for i, d in enumerate(done):
        if isinstance(d, Done) and d.finished > LOAD:
            _write(d.written[LOAD])
            if d.loaded:
                kept.append(i)
            continue
        history = load_log(todo[i].path, todo[i].named)  # raises as the serial run does, or notes a skip
        if history is not None:
            here[i] = history
            kept.append(i)
    if not kept:
        raise no_history(list(args.paths))
    sessions = [_step(done, here, todo, i, FOLLOW, lambda d: d.session) for i in kept]
    scores = None
    if args.briefings:
        scores = [s for i in kept for s in _step(done, here, todo, i, SCORE, lambda d: d.scores)]
    return sessions, scores


def _step(done: list[Any], here: dict[int, Any], todo: list[Job], i: int, step: int,
          value: Callable[[Done], Any]) -> Any:
    """Step ``step`` of log ``i``: the worker's value (its output written now), or the step done here."""
    d = done[i]
    if i not in here and isinstance(d, Done) and d.finished > step:
        _write(d.written[step])
        return value(d)
    if i not in here:  # loaded by its worker, which failed later: load it again, quietly (its note is out)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            here[i] = load_log(todo[i].path, todo[i].named)
    return _STEPS[step](todo[i], here[i])


def work(job: Job) -> Done:
    """In a worker: the log's steps, each one's output captured, stopping at the first that fails."""
    from workbench.history.readers.jsontext import gc_paused

    return gc_paused(_work)(job)


def _work(job: Job) -> Done:
    written: list[tuple[str, str]] = []
    ok, history = _captured(written, lambda: load_log(job.path, job.named))
    if not ok or history is None:
        return Done(finished=len(written), written=tuple(written))
    ok, session = _captured(written, lambda: _follow(job, history))
    if not ok or not job.briefings:
        return Done(finished=len(written), written=tuple(written), loaded=True, session=session)
    ok, scores = _captured(written, lambda: _score(job, history))
    return Done(finished=len(written), written=tuple(written), loaded=True, session=session,
                scores=tuple(scores) if ok else None)


def _captured(written: list[tuple[str, str]], fn: Callable[[], Any]) -> tuple[bool, Any]:
    """(True, fn()) with what it wrote appended to ``written``; (False, None) when it raised an error (Ctrl-C in
    this process's own share goes on up; a worker ignores it)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            value = fn()
    except Exception:  # noqa: BLE001 - the parent redoes the step and gets the error itself
        return False, None
    written.append((out.getvalue(), err.getvalue()))
    return True, value


def _follow(job: Job, history: Any) -> Any:
    from workbench.analysis.real_logs.reality import follow_log
    from workbench.counting.tokens import CountCache

    # Keyed by the log's own message objects, as in the serial run; one per log, dropped with it.
    return follow_log(history, preset=job.preset, knobs=user_knobs(job, history), usage=job.usage,
                      cache=CountCache(by_identity=True))


def _score(job: Job, history: Any) -> list[Any]:
    return briefing_scores([history], job)


_STEPS: dict[int, Callable[[Job, Any], Any]] = {FOLLOW: _follow, SCORE: _score}


def _write(written: tuple[str, str]) -> None:
    out, err = written
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
