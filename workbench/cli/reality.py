"""``workbench reality PATH...``: does a replay with the agent's own settings fire where the agent fired?

Each Claude Code or Codex log (a file, or every log in a folder) is replayed with its agent's preset for the
version that wrote it, following the log: each logged compaction is predicted from the state right after the
previous real one. By default the trigger is measured on the log's own billed usage; ``--ignore-usage`` uses
only the estimate with the preset's hidden prefix and token ratio, as any counterfactual replay must.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.history.words import counted

NAME = "reality"
PROGRESS_FROM = 20  # logs: reading more than this many shows a bar
HELP = "Replay real agent logs with the agent's own settings and compare predicted with logged compactions."

# The text tables on a narrow terminal: the columns left out first (what the others or --json also say), so that
# file, the real index, the prediction and its delta always show; a file name wraps rather than the table shrinking.
SESSION_DROP = ("agent", "version", "line", "window", "preset", "tokens after (logged)", "predicted after", "predicted tokens",
                "tokens before", "trigger")
BRIEFING_DROP = ("line", "index", "trigger", "tokens", "at risk", "extractive")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="agent logs, or folders of them (searched recursively; symbolic links out of a folder "
                             "are not followed)")
    parser.add_argument("--preset", help="replay with this preset instead of the one for each log's agent version")
    parser.add_argument("--config", type=Path, help="a knobs YAML (e.g. from `workbench calibrate`) to replay with")
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="KNOB=VALUE",
                        help="override one knob (repeatable)")
    parser.add_argument("--ignore-usage", action="store_true",
                        help="measure context with the estimate only (hidden prefix + token ratio), not the bill")
    parser.add_argument("--json", action="store_true", help="print JSON (sessions and summary) instead of tables")
    parser.add_argument("--briefings", action="store_true",
                        help="also score each real summary against the extractive briefer, and count re-fetches")
    parser.add_argument("--workers", type=_workers, metavar="N",
                        help="processes that share the logs: this one and N-1 forked from it (default: one per CPU "
                             "this process may use, at most one per log; 1 follows them all here; on Linux only, "
                             "elsewhere always 1)")


def _workers(text: str) -> int:
    from workbench.cli.common import whole_number  # imported when the option is given: the parser stays light

    return whole_number(text, least=1)


def log_paths(paths: list[Path]) -> list[tuple[Path, bool]]:
    """(file, named by the user) for the files named and the logs inside the folders named (sorted, recursively,
    as each agent lays them out: ``history.readers.discover``). ``opencode.db#<session>`` names one session."""
    from workbench.history.readers.discover import LOG_SUFFIXES
    from workbench.history.readers.opencode_store import SESSION_MARK

    out: list[tuple[Path, bool]] = []
    for p in paths:
        if p.is_dir():
            out.extend((f, False) for f in folder_logs(p))
        elif p.exists() or (SESSION_MARK in p.name and p.with_name(p.name.partition(SESSION_MARK)[0]).is_file()):
            out.append((p, True))
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    if not out:
        raise ValueError(f"no agent logs ({', '.join(LOG_SUFFIXES)}, opencode.db) in {', '.join(str(p) for p in paths)}")
    return out


def folder_logs(folder: Path) -> list[Path]:
    """The logs inside ``folder`` and its subfolders, sorted, as the agents lay them out; what was left out (a link
    out of the folder, a second name of one file) is noted on stderr."""
    from workbench.cli.progress import note
    from workbench.history.readers.discover import agent_logs

    found, notes = agent_logs(folder)
    for line in notes:
        note(line)
    return found


def load_logs(paths: list[Path], command: str = NAME) -> list[Any]:
    """Every history the paths name. A file found in a folder that is not a readable history is reported and
    left out (a folder of logs often holds other files); a file named on the command line must load."""
    return loaded(log_paths(paths), paths, command)


def loaded(logs: list[tuple[Path, bool]], paths: list[Path], command: str = NAME) -> list[Any]:
    """``load_logs`` of the files ``log_paths(paths)`` returned."""
    return list(each_loaded(logs, paths, command))


def each_loaded(logs: list[tuple[Path, bool]], paths: list[Path], command: str = NAME) -> Iterator[Any]:
    """``loaded``, one history at a time: a caller that is done with each before the next holds one log in memory,
    not all of them (what a first run in a process pays in fresh pages for every log it keeps)."""
    from workbench.cli.progress import ProgressBar

    found = False
    with ProgressBar("logs read", enabled=len(logs) > PROGRESS_FROM) as bar:
        for n, (path, named) in enumerate(logs, 1):
            history = load_log(path, named, command)
            if history is not None:
                found = True
                yield history
                del history  # the caller's copy is the only one left
            bar(n, len(logs))
    if not found:
        raise no_history(paths)


def no_history(paths: list[Path]) -> ValueError:
    """The error when none of the files the paths name is a history (the folders held other files only)."""
    return ValueError(f"no readable history in {', '.join(str(p) for p in paths)}")


def load_log(path: Path, named: bool, command: str = NAME) -> Any:
    """One log's history, its load warnings on stderr (a skipped line, an ignored usage); None (and a note) for a
    file found in a folder that is not one."""
    from workbench.cli.common import show_warnings
    from workbench.cli.progress import note
    from workbench.history.errors import HistoryError
    from workbench.history.readers import load_history

    try:
        history = load_history(path)
    except HistoryError as exc:
        if named:
            raise
        note(f"skipped {exc}")
        return None
    show_warnings(command, history)
    return history


def user_knobs(args: Any, history: Any) -> Any:
    """The knobs a log is replayed with when the user gave any: --config (a whole knob set, e.g. calibrated),
    else the log's own settings, then each --set; None when the user gave none (the log's settings are used)."""
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.knobs import knobs_from_dict, load_knobs, parse_knob_assignment

    if not args.config and not args.assignments:
        return None
    if args.config:
        knobs = load_knobs(args.config.read_text(encoding="utf-8"), source=str(args.config))
    else:
        knobs = agent_settings(history, preset=args.preset).knobs
    overrides = dict(parse_knob_assignment(a) for a in args.assignments)
    return knobs_from_dict(overrides, base=knobs, source="--set") if overrides else knobs


def run(args: argparse.Namespace) -> int:
    from workbench.history.readers.jsontext import gc_paused

    # The logs stay loaded until the command ends and none of it makes reference cycles: collections that
    # rescan every loaded message as the heap grows would only cost time (~5% of a run over ../shared).
    return gc_paused(_run)(args)


def _run(args: argparse.Namespace) -> int:
    logs = log_paths(list(args.paths))  # a missing path is refused before polars and the engine load
    from workbench.analysis.real_logs.reality import reality_summary
    from workbench.cli.progress import note

    workers = worker_count(args.workers, len(logs))
    sessions, scores = _in_workers(args, logs, workers) if workers > 1 else _in_this_process(args, logs)
    summary = reality_summary(sessions)
    if args.json:
        out: dict[str, Any] = {"sessions": [s.to_json() for s in sessions], "summary": summary}
        if scores is not None:
            from workbench.analysis.real_logs.real_briefings_report import briefings_json

            out["briefings"] = briefings_json(scores)
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    if args.ignore_usage and not args.config and not args.assignments:
        note("--ignore-usage: the context is the estimate with each preset's shipped hidden prefix and token ratio, "
             "fitted on other people's logs (../shared/real_sessions_large, docs/reality.md); your own prefix (tool "
             "schemas, CLAUDE.md, MCP servers) may differ by 10,000 tokens or more, which moves each compaction by "
             "a dozen messages or more: `workbench calibrate` on your own logs with usage fits yours")
    _print_sessions(sessions)
    _print_bills(sessions)
    _print_summary(summary)
    if scores is not None:
        _print_briefings(scores)
    for s in sessions:
        for line in s.notes:
            note(f"{s.file}: {line}")
    return 0


def _in_this_process(args: argparse.Namespace, logs: list[tuple[Path, bool]]) -> tuple[list[Any], list[Any] | None]:
    """(sessions, briefing scores or None): every log loaded, then each followed, then each scored."""
    sessions = []
    histories = []
    for history in each_loaded(logs, list(args.paths)):
        # Each log is followed as soon as it is read and then let go (unless its briefings are scored after all the
        # follows): one log's messages in memory at a time, whose pages the next log reuses.
        sessions.append(_follow(args, history))
        if args.briefings:
            histories.append(history)
        del history
    return sessions, (briefing_scores(histories, args) if args.briefings else None)


def _follow(args: argparse.Namespace, history: Any) -> Any:
    """One log's session. Its counts are keyed by its own message objects (no content digests: see CountCache), so
    no other log could share them: they are let go with it."""
    from workbench.analysis.real_logs.reality import follow_log
    from workbench.counting.tokens import CountCache

    cache = CountCache(by_identity=True)
    session = follow_log(history, preset=args.preset, knobs=user_knobs(args, history), usage=not args.ignore_usage,
                         cache=cache)
    cache.clear()
    return session


def worker_count(requested: int | None, logs: int) -> int:
    """How many logs are followed at once: ``requested`` (``--workers``), else one per CPU this process may run
    on; never more than there are logs. Only where a worker can be forked from this process (Linux): a worker
    started any other way must import the engine again, which takes longer than following
    ../shared/real_sessions (benchmarks/README.md, the reality rows), so there the logs are followed here."""
    import multiprocessing

    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if requested is None:
        try:
            requested = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            requested = os.cpu_count() or 1
    return max(1, min(requested, logs))


# What a forked worker follows: set in this process just before the workers are forked, so each inherits it (the
# arguments, the list of logs, and which of them a process has taken) and a task is only the position of a log.
_JOB: tuple[argparse.Namespace, list[tuple[Path, bool]], Any] | None = None
_IN_WORKER = False  # set in a forked worker only


def _in_workers(args: argparse.Namespace, logs: list[tuple[Path, bool]],
                workers: int) -> tuple[list[Any], list[Any] | None]:
    """``_in_this_process``, with the logs shared between this process and a ``concurrent.futures`` process pool of
    ``workers - 1`` forked from it. Every log but the largest goes to the pool, the smallest first; this process
    follows the largest, then the next largest, and so on, until it meets one the pool has taken (each log is
    claimed once, under a lock both sides share; a pool task whose log this process took returns at once). Each log
    is read and followed whole, and this process writes each one's session, briefing scores and what it wrote on
    stderr in the logs' order.

    Forked, not started from a fork server as the sweeps' pool is (``explore.sweep.default_executor``): a fork
    server imports the engine first, which takes longer than following ../shared/real_sessions (benchmarks/README.md,
    the reality rows), while a forked worker starts with what this process imported. That is safe because of what
    a worker runs, not of what threads this process has: it reads a log and follows it in one thread, calling no
    polars and no thread pool this process may have started (a tokenizer it needs makes its own pool in the worker;
    tests/test_reality_workers.py runs the pool after polars' has run). A worker that dies (killed, out of memory)
    breaks the pool: the logs it had are followed here, with a note."""
    import multiprocessing
    import warnings
    from concurrent.futures import Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    from workbench.cli.common import one_line
    from workbench.cli.progress import ProgressBar, note
    from workbench.explore.pools import stop_pool

    global _JOB
    sizes = [_size(path) for path, _ in logs]
    order = sorted(range(len(logs)), key=lambda n: -sizes[n])
    results: dict[int, tuple[str, Any, Any]] = {}
    sessions: list[Any] = []
    scores: list[Any] | None = [] if args.briefings else None
    shown = 0
    ctx = multiprocessing.get_context("fork")
    claims = ctx.Array("b", len(logs))  # 1 where a process has taken the log (its lock is the claims' one)
    _JOB = (args, logs, claims)
    futures: dict[int, Future[tuple[str, Any, Any] | None]] = {}
    with warnings.catch_warnings():
        # Python 3.12+ warns at a fork of a process with more than one thread: numpy's BLAS starts its own at
        # import, which no worker uses (and which it re-creates after a fork: pthread_atfork)
        warnings.filterwarnings("ignore", message=r".*multi-threaded, use of fork\(\) may lead to deadlocks",
                                category=DeprecationWarning)
        pool = ProcessPoolExecutor(workers - 1, mp_context=ctx, initializer=_quiet_worker)
        try:
            for n in reversed(order[1:]):  # the workers are forked at the first submit, before the pool's threads
                futures[n] = pool.submit(_pool_task, n)
        except BaseException:
            stop_pool(pool)
            raise
    try:
        with ProgressBar("logs read", enabled=len(logs) > PROGRESS_FROM) as bar:
            def show() -> None:
                nonlocal shown
                for n, fut in list(futures.items()):
                    if fut.done() and fut.exception() is None:
                        del futures[n]
                        result = fut.result()
                        if result is not None:  # None: this process took it
                            results[n] = result
                while shown in results:  # what each log wrote, in the logs' order, as soon as it can be
                    err, session, scored = results.pop(shown)
                    sys.stderr.write(err)
                    if isinstance(session, BaseException):  # raised where following them here would raise it
                        raise _relayed(session)
                    if session is not None:
                        sessions.append(session)
                        if scores is not None:
                            scores.extend(scored)
                    shown += 1
                    bar(shown, len(logs))

            bar(0, len(logs))  # the bar's clock starts with the work, not with the first log in order
            for n in order:
                if not _claim(claims, n):  # the pool has come this far: the rest is its own
                    break
                futures.pop(n, None)  # its task returns None, or breaks with the pool: nothing to wait for
                results[n] = _follow_one(n)
                show()
            wait(futures.values())
            show()
            for n in order:  # a worker died (the pool is broken), or its result did not cross: followed here
                if n in futures:
                    lost = futures.pop(n).exception()
                    why = "a worker ended before it sent" if isinstance(lost, BrokenProcessPool) else \
                        f"a worker could not send ({one_line(str(lost))})"
                    note(f"workbench {NAME}: {why} {logs[n][0]}: followed here")
                    results[n] = _follow_one(n)
                    show()
    finally:
        stop_pool(pool)
        _JOB = None
    if not sessions:
        raise no_history(list(args.paths))
    return sessions, scores


def _relayed(error: BaseException) -> BaseException:
    """A log's error as the command raises it: bad input (``HistoryError``, always raised on purpose) without the
    traceback of where it was first raised, so that the command's error handling reads it as raised here (one line,
    exit 2) wherever it came from; any other error with its own traceback (a bug: ``cli.internal_error``)."""
    from workbench.history.errors import HistoryError

    return error.with_traceback(None) if isinstance(error, HistoryError) else error


def _claim(claims: Any, n: int) -> bool:
    """Take log ``n`` for this process: False where another has."""
    with claims.get_lock():
        if claims[n]:
            return False
        claims[n] = 1
    return True


def _pool_task(n: int) -> tuple[str, Any, Any] | None:
    """A worker's task: ``_follow_one`` (looked up when it runs: the pool sends this function by name), or None
    where the command's own process has taken the log."""
    assert _JOB is not None, "the job is set before the workers are forked"
    return _follow_one(n) if _claim(_JOB[2], n) else None


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the command, which ends the pool (no traceback from every worker)."""
    import signal

    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # an OpenCode session named inside its database, or a file gone: its error comes from the read
        return 0


def _follow_one(n: int) -> tuple[str, Any, Any]:
    """(what it wrote on stderr, the session, None or the error, the briefing scores) of log ``n`` of the job. An
    error is returned, not raised, so that the command raises it in the logs' order; one raised in a worker carries
    its traceback as a note (a traceback does not cross processes)."""
    import contextlib
    import io
    import traceback

    from workbench.history.errors import HistoryError

    assert _JOB is not None, "the job is set before the logs are followed"
    args, logs = _JOB[:2]
    path, named = logs[n]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            history = load_log(path, named)
            if history is None:
                return err.getvalue(), None, None
            session = _follow(args, history)
            scored = briefing_scores([history], args) if args.briefings else None
        except Exception as exc:
            if _IN_WORKER and not isinstance(exc, (HistoryError, OSError)):
                exc.add_note("".join(traceback.format_exception(exc)).rstrip())
            return err.getvalue(), exc, None
    return err.getvalue(), session, scored


def briefing_scores(histories: list[Any], args: Any) -> list[Any]:
    """The scores of every logged compaction's real summary, extractive briefing and re-fetches."""
    from workbench.analysis.real_logs.real_briefings import score_briefings

    return [s for h in histories for s in score_briefings(h, preset=args.preset, knobs=user_knobs(args, h))]


def _print_briefings(scores: list[Any]) -> None:
    from workbench.analysis.real_logs.real_briefings_report import COLUMNS, RIGHT, briefings_footer, briefings_rows
    from workbench.cli.progress import print_table, print_text

    print_table(COLUMNS, briefings_rows(scores), right=RIGHT, drop=BRIEFING_DROP, wrap=("file", "re-fetches"),
                title="Real summaries vs the extractive briefer (facts retained), and re-fetches after each compaction")
    for line in briefings_footer(scores):
        print_text(line)


def _print_sessions(sessions: list[Any]) -> None:
    from workbench.cli.progress import print_table

    rows = []
    for s in sessions:
        if not s.compactions:
            rows.append([s.file, s.agent or "-", s.version or "-", s.preset or "-", _n(s.window), "-", "-",
                         "none logged", "-", "-", "-", "-", "-", "-"])
        for c in s.compactions:
            delta = "-" if c.error is None else f"{c.error:+d}"
            rows.append([s.file, s.agent or "-", s.version or "-", s.preset or "-", _n(s.window), c.source_line or "-",
                         c.real_index, c.trigger, _n(c.real_tokens_before),
                         "none" if c.predicted_index is None else c.predicted_index, delta,
                         _n(c.predicted_tokens_before), _n(c.logged_tokens_after), _after(c)])
        for extra in s.extra_predictions:
            rows.append([s.file, s.agent or "-", s.version or "-", s.preset or "-", _n(s.window), "-", "-", "extra",
                         "-", extra, "-", "-", "-", "-"])
    mode = "with the log's billed usage" if all(s.usage for s in sessions) else "estimate only (no usage)"
    print_table(["file", "agent", "version", "preset", "window", "line", "real", "trigger", "tokens before",
                 "predicted", "delta", "predicted tokens", "tokens after (logged)", "predicted after"], rows,
                title=f"Logged compactions vs the replay, {mode}",
                right=[False, False, False, False, True, True, True, False, True, True, True, True, True, True],
                drop=SESSION_DROP, wrap=("file",))


def _after(c: Any) -> str:
    """The predicted context after a compaction, with its error against the logged one."""
    if c.predicted_tokens_after is None:
        return "-"
    err = c.after_error
    return f"{c.predicted_tokens_after:,}" + ("" if err is None else f" ({err:+.0%})")


# On a narrow terminal the classes go first: the bill units beside the logged ones and the error always show.
BILL_DROP = ("calls", "cache write", "uncached in", "output", "cache read")
BILL_COLUMNS = ["file", "calls", "uncached in", "cache read", "cache write", "output", "bill units", "logged units",
                "error"]


def bill_rows(sessions: list[Any]) -> list[list[Any]]:
    """One row per session: the modelled bill by class and in bill units, the logged units beside it."""
    rows = []
    for s in sessions:
        b, lb = s.bill, s.logged_bill
        if b is None:
            continue
        err = s.bill_error
        rows.append([s.file, f"{b.calls:,}", f"{b.input:,}", f"{b.cache_read:,}", f"{b.cache_write:,}", f"{b.output:,}",
                     f"{b.units(s.agent, s.model):,.0f}", "-" if lb is None else f"{lb.units(s.agent, s.model):,.0f}",
                     "-" if err is None else f"{err:+.1%}"])
    return rows


def _print_bills(sessions: list[Any]) -> None:
    from workbench.cli.progress import print_table

    rows = bill_rows(sessions)
    if not rows:
        return
    mode = "with the log's billed usage" if all(s.usage for s in sessions) else "usage ignored"
    print_table(BILL_COLUMNS, rows, title=f"The bill as the replay models it ({mode}) beside the log's; bill units = "
                "uncached x 1 + cache writes x 1.25 + cache reads x 0.1 + output x 5 (Claude) or x 8 (Codex)",
                right=[False] + [True] * 8, drop=BILL_DROP, wrap=("file",))


def _print_summary(summary: dict[str, Any]) -> None:
    auto = summary["auto_compactions"]
    parts = [counted(auto, "automatic compaction")]
    for tol in (0, 2, 5):
        hit = summary[f"within_{tol}"]
        parts.append(f"within ±{tol}: {hit}" + (f" ({hit / auto:.0%})" if auto else ""))
    parts.append(f"missed: {summary['missed']}")
    parts.append(f"extra predictions: {summary['extra_predictions']}")
    if summary.get("manual_compactions"):
        parts.append(f"{summary['manual_compactions']} manual, replayed at their place")
    from workbench.cli.progress import print_text

    print_text("; ".join(parts))
    if summary.get("after_compactions"):
        print(f"context after a compaction within ±10% of the log's: {summary['after_within_10pct']} of "
              f"{summary['after_compactions']} ({summary['after_within_10pct_share']:.0%})")
    if summary.get("bills"):
        print(f"bill within ±10% of the log's (bill units): {summary['bill_within_10pct']} of {summary['bills']} "
              f"sessions ({summary['bill_within_10pct_share']:.0%})")


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
