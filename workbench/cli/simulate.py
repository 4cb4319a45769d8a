"""``workbench simulate HISTORY``: replay one history and print a summary or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.briefers import add_briefer_arguments, briefer_from_args
from workbench.cli.common import add_knob_arguments, knobs_from_args, show_warnings
from workbench.history.words import counted
from workbench.io.files import json_text, write_stream

NAME = "simulate"
HELP = "Replay a recorded conversation against a set of knobs."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("history", type=Path, help="history file (any supported format)")
    add_knob_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print knobs, metrics, compressions and timeline as JSON")
    parser.add_argument("--no-timeline", action="store_true", help="leave the per-step timeline out of --json")
    parser.add_argument(
        "--offload-dir", type=Path, metavar="DIR",
        help="append the folded originals of every compaction to DIR/conversation_history/<thread>.md "
        "(msagent's offload log; appends, never rewrites)",
    )
    parser.add_argument("--thread-id", help="the offload log's thread id (default: the history's id)")
    add_briefer_arguments(parser, default="simulated")


def run(args: argparse.Namespace) -> int:
    from workbench.history.readers import load_history

    # The engine (and polars, numpy) only once the history is read: a missing file or one that is not a log is
    # refused without them (median 2.2-2.9 -> 0.6-0.8 CPU-s a refusal, 2026-12-03 at load 6-8).
    history = load_history(args.history)
    show_warnings(NAME, history)
    knobs = knobs_for_history(args, history)
    from workbench.replay import simulate

    outcome = None
    if args.briefer == "live":
        outcome = run_live_from_args(args, history, knobs)
        if outcome.run is None:
            return 1
        result = outcome.run
    else:
        result = simulate(history, knobs, briefer_from_args(args))
    offload = write_offload_log(result, history, args.offload_dir, args.thread_id) if args.offload_dir else None
    if args.json:
        data = result.to_json_dict(timeline=not args.no_timeline)
        if offload is not None:
            data["offload"] = offload
        if outcome is not None:
            data["live"] = live_json(outcome)
        write_stream(sys.stdout, json_text(data, default=str) + "\n")  # built whole first: no error after half a JSON
        return 0 if outcome is None or outcome.complete else 1
    if outcome is not None and not outcome.complete:
        print(f"live run stopped early ({outcome.stopped.reason}): the numbers below cover messages "
              f"0-{outcome.messages - 1:,} of {outcome.total_messages:,}")
    print(format_summary(result))
    for report in (offload or {}).get("reports", []):
        print(f"offload #{report['chain_index']}: {report['line']}")
    return 0 if outcome is None or outcome.complete else 1


def knobs_for_history(args: argparse.Namespace, history):  # noqa: ANN001, ANN201 - History -> Knobs
    """The knobs the user gave; for a real agent log given none, the agent's own (preset by version, window, model)."""
    from workbench.cli.progress import note

    if getattr(args, "preset", None) or getattr(args, "config", None) or history.log is None:
        if history.log is None and not getattr(args, "preset", None) and not getattr(args, "config", None):
            from workbench.analysis.real_logs.agent_settings import guess_agent

            guess = guess_agent(history)
            if guess is not None:
                note(f"{history.id}: {guess[1]}; --preset {guess[0]} replays it as that agent does")
        return knobs_from_args(args)
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.knobs import knobs_from_dict, parse_knob_assignment

    settings = agent_settings(history)
    note(f"{history.id}: replaying as {settings.who} does (preset {settings.preset}, "
         f"window {settings.knobs.context_window_tokens:,}, model {settings.knobs.model}); "
         "--preset stagewise replays it with stagewise's defaults")
    for warning in settings.warnings:
        note(f"{history.id}: {warning}")
    overrides = dict(parse_knob_assignment(a) for a in getattr(args, "assignments", []) or [])
    return knobs_from_dict(overrides, base=settings.knobs, source="--set") if overrides else settings.knobs


def run_live_from_args(args: argparse.Namespace, history, knobs):  # noqa: ANN001, ANN201 - History, Knobs -> LiveOutcome
    """Estimate from a dry replay, check offline, cap, then run live; a stop is reported on stderr (exit 1)."""
    from workbench.analysis.live_runs import estimate_live, run_live, suggested_limits
    from workbench.briefing.guard import LiveLimits
    from workbench.cli.progress import ProgressBar, note
    from workbench.replay import simulate

    cascade = list(args.models) + ([args.fallback_model] if args.fallback_model else [])
    if not cascade:
        raise ValueError("--briefer live needs at least one --model")
    estimate = estimate_live(simulate(history, knobs), cascade[0], cascade=len(dict.fromkeys(cascade)))
    suggested = suggested_limits(estimate, failures=args.max_failures)
    limits = LiveLimits(
        max_consecutive_failures=args.max_failures,
        max_requests=args.max_requests if args.max_requests is not None else suggested.max_requests,
        max_dollars=args.max_dollars if args.max_dollars is not None else suggested.max_dollars,
    )
    note(f"live: {estimate.summary()}")
    note(f"live: caps: {limits.describe()} (set --max-requests / --max-dollars / --max-failures to change)")
    briefer = briefer_from_args(args, limits=limits, largest_request_tokens=estimate.largest_request_tokens)
    with ProgressBar("compressions", enabled=not args.json) as bar:
        outcome = run_live(history, knobs, briefer, on_compression=lambda n, _c: bar(n, max(n, estimate.requests)))
    for line in outcome.summary().splitlines():
        note(f"live: {line}")
    return outcome


def live_json(outcome) -> dict:  # noqa: ANN001 - a LiveOutcome
    """What the live run cost and whether it stopped, for --json."""
    stop = outcome.stopped
    return {
        "complete": outcome.complete,
        "requests": outcome.requests,
        "dollars": outcome.dollars,
        "messages": outcome.messages,
        "total_messages": outcome.total_messages,
        "stopped": None if stop is None else {"reason": stop.reason, "error": stop.error},
    }


def write_offload_log(result, history, directory: Path, thread_id: str | None) -> dict:  # noqa: ANN001
    """Append this replay's offload sections to DIR/conversation_history/<thread>.md; describe what was written."""
    from datetime import UTC, datetime

    from workbench.analysis.offload import build_offload, offload_file
    from workbench.io.append import append_section

    thread = thread_id or history.id
    path = offload_file(directory, thread)
    offload = build_offload(result, history, thread_id=thread, now=datetime.now(UTC))
    warnings: list[str] = []
    if offload.text:  # append-only, as msagent's backend does; a torn tail of an earlier crash is reported
        report = append_section(path, offload.text, heading="## Offloaded at ")
        warnings = report.warnings()
        for w in warnings:
            print(f"workbench simulate: warning: {w}", file=sys.stderr)
    return {
        "file": str(path),
        "appended_chars": len(offload.text),
        "warnings": warnings,
        "events": [e.to_dict() for e in offload.events],
        "reports": [{**r.to_dict(), "line": r.line()} for r in offload.reports],
    }


def format_summary(result) -> str:  # noqa: ANN001 - a Run
    from workbench.policies.trigger import trigger_words
    from workbench.replay import METRIC_SPECS

    m = result.metrics
    k = result.knobs
    lines = [
        f"history     {result.history_id}  ({counted(m.messages, 'message')}, {counted(m.checks, 'check')})",
        f"strategy    {k.strategy}  window {k.context_window_tokens:,}; {trigger_words(limits=result.limits)}",
        f"peak        {m.peak_tokens:,} tokens = {m.peak_ratio:.1%} of window"
        f"  (no compaction: {m.baseline_peak_tokens:,})",
        f"compress    {m.compressions} landed, {m.failed_compressions} failed, {m.superseded_compressions} superseded"
        f"; {counted(m.elisions, 'elision')}",
        f"overflows   {counted(m.overflows, 'check')} above the window in {counted(m.overflow_events, 'run')}",
        f"per task    {m.tokens_per_task:,} tokens (no compaction: {m.baseline_tokens_per_task:,})"
        f"  ${m.dollars_per_task:,.4f}  (${m.dollars_per_task_cached:,.4f} with prompt caching)",
    ]
    guards = ("ineffective_compressions", "thrash_events", "reactive_compressions", "manual_compressions")
    if any(getattr(m, name) for name in guards) or m.cooldown_skips:  # each counter in its METRIC_SPECS words
        lines.append("guards      " + ", ".join([*(f"{getattr(m, name)} {METRIC_SPECS[name].short}" for name in guards),
                                                 f"{counted(m.cooldown_skips, 'check')} "
                                                 f"{METRIC_SPECS['cooldown_skips'].short}"]))
    if result.compressions:
        lines.append("")
        lines.append(" #  status     check  boundary  folded  kept  tokens before→after   briefing chars  bucket")
        for c in result.compressions:
            after = f"{c.tokens_after:,}" if c.tokens_after is not None else "-"
            lines.append(
                f"{c.chain_index:>2}  {c.status:<9} {c.check_started:>6}  {c.boundary:>8}  {c.messages_folded:>6}"
                f"  {c.kept:>4}  {c.tokens_before:>9,} → {after:<9} {c.briefing_chars:>14,}  {c.bucket}"
            )
    for note in result.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
