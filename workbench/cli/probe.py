"""``workbench probe HISTORY``: which facts survive each compression (Factory's probes), and which are at risk."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli.briefers import add_briefer_arguments, briefer_from_args
from workbench.cli.common import add_knob_arguments, show_warnings
from workbench.history.words import counted

if TYPE_CHECKING:
    import polars as pl

    from workbench.analysis.fact_probes.probes import ProbeReport
    from workbench.history.model import History
    from workbench.replay import Run

NAME = "probe"
HELP = "Replay a history and check which facts (files, decisions, errors, links, next step) survive compaction."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("history", type=Path, help="history file (any supported format)")
    add_knob_arguments(parser)
    add_briefer_arguments(parser, default="extractive")
    parser.add_argument("--facts", action="store_true", help="list every fact extracted from the history")
    parser.add_argument("--at-risk", action="store_true", help="list the facts at risk at each compression")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", type=Path, help="write the per-(compression, fact) rows to .parquet or .csv")
    parser.add_argument("--judge-model", help="also ask the four probe questions with this litellm model and grade"
                                              " the answers 0-5 (uses --api-base and the answer cache)")
    parser.add_argument("--judge-compressions", type=int, default=3,
                        help="judge at most this many compressions (default 3)")


def run(args: argparse.Namespace) -> int:
    from workbench.cli.simulate import knobs_for_history
    from workbench.history.readers import load_history

    history = load_history(args.history)  # before the engine and polars, as simulate does: a bad file fails fast
    knobs = knobs_for_history(args, history)  # an agent log: its agent's preset, window and model, as simulate does
    from workbench.analysis.fact_probes.probes import facts_frame, probe_run
    from workbench.explore.sweep import write_sweep
    from workbench.replay import simulate

    # The history (millions of objects at 100k messages) and then the run live until the command ends; moved
    # out of the cyclic GC's reach, each full collection no longer walks them all again (~2 s at 100k).
    gc.freeze()
    show_warnings(NAME, history)
    briefer = briefer_from_args(args)
    run_ = simulate(history, knobs, briefer)
    gc.freeze()
    report = probe_run(run_, history)
    judged = None
    if args.judge_model:
        judged = _judge(args, run_, history)
    if args.out is not None:
        write_sweep(report.frame, args.out)
    if args.json:
        out = {
            "history": report.history_id,
            "briefer": report.briefer,
            "summary": report.summary(),
            "by_compression": report.by_compression().to_dicts(),
            "by_probe": report.by_probe().to_dicts(),
            "at_risk": report.at_risk().select("chain_index", "kind", "key", "source_index").to_dicts(),
        }
        if args.facts:
            out["facts"] = facts_frame(report.facts).to_dicts()
        if judged is not None:
            out["judge"] = judged.to_dicts()
        from workbench.io.files import json_text, write_stream

        write_stream(sys.stdout, json_text(out, default=str) + "\n")
        return 0
    print(format_report(report))
    if args.facts:
        print("\nfacts (first met at message index):")
        for f in report.facts:
            print(f"  {f.index:>5}  {f.kind:<9} {f.detail:<18} {f.key[:100]}")
    if args.at_risk:
        print("\nat risk (only the folded span had them):")
        for row in report.at_risk().iter_rows(named=True):
            print(f"  #{row['chain_index']:<3} {row['kind']:<9} {row['key'][:100]}")
    if judged is not None:
        print("\nLLM judge (0-5, mean of six dimensions):")
        for row in judged.iter_rows(named=True):
            mean = f"{row['mean']:.1f}" if row["mean"] is not None else "-"
            print(f"  #{row['chain_index']:<3} {row['probe']:<13} {mean:>4}  {row['error']}")
    if args.out is not None:
        print(f"wrote {args.out}")
    return 0


def _judge(args: argparse.Namespace, run_: Run, history: History) -> pl.DataFrame:
    import os

    from workbench.analysis.fact_probes.probe_judge import judge_run
    from workbench.cli.briefers import open_cache

    key = os.environ.get(args.api_key_env) if getattr(args, "api_key_env", None) else None
    cache = None if args.no_cache else open_cache(args)
    return judge_run(run_, history, model=args.judge_model, cache=cache, api_base=args.api_base, api_key=key,
                     max_compressions=args.judge_compressions)


def format_report(report: ProbeReport) -> str:
    """The text report: totals, retention by probe type, one line per compression."""
    s = report.summary()
    lines = [
        f"history   {report.history_id}  (briefer: {report.briefer})",
        f"probed    {counted(s['probe_compressions'], 'compression')}, {counted(s['facts_checked'], 'fact check')}",
    ]
    if not s["facts_checked"]:  # no compaction, nothing to lose: not "retention 100.0% (0 kept)"
        lines.append("retention -  (nothing was compacted, so no fact could be lost; a smaller window, e.g. "
                     "--set context_window_tokens=32000, makes the replay compact)")
        return "\n".join(lines)
    lines += [
        f"retention {s['retention']:.1%} ({s['facts_retained']:,} kept); {counted(s['facts_at_risk'], 'fact')} at risk",
        "by probe  " + "  ".join(f"{p} {s[f'retention_{p}']:.0%}"
                                 for p in ("recall", "artifact", "continuation", "decision")),
    ]
    if report.briefer == "simulated":
        lines.append("note: the simulated briefer writes no text, so only kept messages retain facts")
    table = report.by_compression()
    if table.height:
        lines.append("")
        lines.append(" #  boundary  facts  new  retained  at risk  recall  artifact  continuation  decision")
        for row in table.iter_rows(named=True):
            cells = [f"{row[f'retention_{p}']:.0%}" if row[f"retention_{p}"] is not None else "-"
                     for p in ("recall", "artifact", "continuation", "decision")]
            lines.append(
                f"{row['chain_index']:>2}  {row['boundary']:>8}  {row['facts']:>5}  {row['new_facts']:>3}"
                f"  {row['retained']:>8}  {row['at_risk']:>7}  {cells[0]:>6}  {cells[1]:>8}  {cells[2]:>12}"
                f"  {cells[3]:>8}"
            )
    return "\n".join(lines)
