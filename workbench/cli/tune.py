"""``workbench tune HISTORY...``: search the knobs for the cheapest config meeting the constraints."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import add_knob_arguments, knobs_from_args, one_line, whole_number
from workbench.cli.progress import ProgressBar, note
from workbench.cli.sweeping import add_place_arguments, make_briefer, parse_space, print_per_history, runs_on
from workbench.history.words import counted

NAME = "tune"
HELP = "Find the knobs with the lowest tokens (or dollars) per task that meet overflow, retention and count limits."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("histories", nargs="+", type=Path, help="history files or folders of them")
    add_knob_arguments(parser)
    parser.add_argument("--objective", choices=("tokens", "dollars"), default="tokens",
                        help="minimise mean tokens or dollars per task (default tokens)")
    parser.add_argument("--max-overflows", type=int, default=0, help="checks above the window, all histories (0)")
    parser.add_argument("--min-retention", type=float, default=None,
                        help="pooled fact retention at least this (0..1; default: the base config's retention "
                             "minus 0.05, so the winner does not trade facts away; 0 = no floor)")
    parser.add_argument("--max-compressions", type=_limit, metavar="N|none",
                        help="compactions of any one history at most this (default: twice the base config's, so "
                             "the winner cannot buy tokens with a compaction every few messages; none = no limit)")
    parser.add_argument("--space", action="append", default=[], metavar="KNOB=LOW:HIGH|A,B",
                        help="a knob to search (repeatable); default trigger_ratio, kept_budget_ratio, "
                             "target_briefing_chars over the ranges where they change these histories")
    parser.add_argument("--points", type=int, default=4, help="grid points per knob in the first round (4)")
    parser.add_argument("--rounds", type=int, default=2, help="refinement rounds (2)")
    parser.add_argument("--keep", type=int, default=3, help="configs refined each round (3)")
    add_place_arguments(parser)
    parser.add_argument("--briefer", choices=("simulated", "extractive"), default="extractive",
                        help="who writes briefings (default extractive, whose text retention can check; the "
                             "simulated size model writes none, so retention then counts kept messages only)")
    parser.add_argument("--out", type=Path, help="write the winner's knobs YAML here")
    parser.add_argument("--trials", type=Path, help="write every config tried (.parquet or .csv)")
    parser.add_argument("--no-progress", action="store_true", help="do not draw the progress bar on stderr")


def run(args: argparse.Namespace) -> int:
    from workbench.history.readers.discover import expand_history_paths

    paths = expand_history_paths(args.histories)  # a missing path is refused before polars and the engine load
    from workbench.explore.sweep import write_sweep
    from workbench.explore.tune import (
        COMPACTION_FACTOR,
        Constraints,
        check_config,
        compaction_limit,
        retention_floor,
        tune,
    )
    from workbench.knobs.command import changed_knobs

    if args.min_retention is not None and not 0.0 <= args.min_retention <= 1.0:
        raise ValueError(f"--min-retention must be in [0, 1], got {args.min_retention}")
    base = knobs_from_args(args)
    space = dict(parse_space(s, option="--space") for s in args.space) or None
    bad: list[str] = []

    named = {str(p) for p in args.histories if not p.is_dir()}  # files named on the command line must load

    def skip(path: str, reason: str) -> None:
        """A bad file found in a folder is reported and skipped; a file named explicitly stops the command."""
        if path in named:
            raise ValueError(reason)
        if path in bad:  # the floor's check and the search both meet it: say it once
            return
        bad.append(path)
        note(f"workbench tune: warning: skipped {one_line(reason)}")

    briefer = make_briefer(args.briefer)
    label = retention_label(args.briefer)
    min_retention, max_compressions = args.min_retention, args.max_compressions
    if min_retention is None or max_compressions is None:  # the defaults come from the base config's own score
        before = check_config(base, paths, Constraints(), briefer=briefer, on_bad_history=skip)
    if min_retention is None:
        min_retention = retention_floor(before["retention"])
        print(f"min fact retention {min_retention:.2f}: the base config keeps {before['retention']:.3f} {label}, "
              "less 0.05 (--min-retention 0 for no floor)")
    if max_compressions is None:
        made = int(before["max_compressions"])
        max_compressions = compaction_limit(made)
        times = "twice" if COMPACTION_FACTOR == 2 else f"{COMPACTION_FACTOR}×"
        print(f"max compactions {max_compressions}: {times} the base config's {made} on its most compacting history "
              "(--max-compressions N to change, none for no limit)" if max_compressions is not None else
              "max compactions: no limit, the base config never compacts (--max-compressions N sets one)")
    constraints = Constraints(max_overflows=args.max_overflows, min_retention=min_retention,
                              max_compressions=None if max_compressions == NO_LIMIT else max_compressions)
    with runs_on(args, paths) as (sources, executor, workers), ProgressBar("runs", enabled=not args.no_progress) as bar:
        result = tune(sources, base=base, objective=args.objective, constraints=constraints, space=space,
                      points=args.points, rounds=args.rounds, keep=args.keep, briefer=briefer,
                      executor=executor, workers=workers, progress=bar, on_bad_history=skip)
    if bad:
        note(f"workbench tune: warning: {len(bad)} of {counted(len(paths), 'history', 'histories')} skipped (unreadable)")
        paths = [p for p in paths if str(p) not in bad]
    print("searched " + ", ".join(f"{n} {v[0]:g}–{v[1]:g}" if isinstance(v, tuple) else f"{n} {v}"
                                  for n, v in result.space.items()))
    tried = result.trials.height
    print(f"tried {counted(tried, 'config')} × {counted(len(paths), 'history', 'histories')} in {result.seconds:.1f}s; "
          f"{result.trials['feasible'].sum()} met the constraints, {result.front.height} on the Pareto front")
    if args.trials is not None:
        write_sweep(result.trials, args.trials)
        print(f"wrote {args.trials}")
    if result.best is None:
        print("no config met the constraints; the closest:")
        row = result.trials.sort(["violation", "objective"]).row(0, named=True)
        print(f"  overflows {row['overflows']}, retention {row['retention']:.3f} {label}, "
              f"max compressions {row['max_compressions']}")
        return 1
    row = result.best_row or {}
    print("winner (knobs that differ from the base):")
    for name, value in changed_knobs(result.best, base).items():
        print(f"  {name}: {value}")
    print(f"  mean tokens per task {row['tokens_per_task']:,.0f}  (${row['dollars_per_task']:,.4f})")
    print(f"  overflows {row['overflows']}, fact retention {row['retention']:.3f} {label}, "
          f"max compressions {row['max_compressions']}, max peak {row['max_peak_ratio']:.1%} of the window")
    print_per_history(result.per_history())
    for edge in result.edges():
        lo, hi = edge.widened
        print(f"warning: {edge.describe()} (--space {edge.knob}={lo:g}:{hi:g})")
    for edge in result.held_edges():
        print(f"note: {edge.describe()}")
    if args.out is not None:
        from workbench.io.files import atomic_write_text

        atomic_write_text(args.out, result.best_yaml())
        print(f"wrote {args.out}")
    return 0


NO_LIMIT = "none"


def _limit(text: str) -> int | str:
    """``--max-compressions``: a whole number of at least 0, or ``none`` for no limit."""
    if text.strip().lower() == NO_LIMIT:
        return NO_LIMIT
    return whole_number(text, least=0, also=NO_LIMIT)


def retention_label(briefer: str) -> str:
    """Who the retention numbers are about: a text briefer, or the size model that writes no text."""
    if briefer == "simulated":
        return "(simulated briefer: no briefing text, kept messages only)"
    return f"({briefer} briefer)"
