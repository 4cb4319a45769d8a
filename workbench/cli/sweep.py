"""``workbench sweep HISTORY...``: replay a grid or a random sample of knobs over histories, export the rows."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from workbench.cli.common import add_knob_arguments, knobs_from_args, one_line
from workbench.cli.progress import ProgressBar, note, print_table
from workbench.cli.sweeping import (
    add_place_arguments,
    make_briefer,
    parse_space,
    parse_values,
    print_per_history,
    runs_on,
)
from workbench.history.words import counted

NAME = "sweep"
HELP = "Replay a grid (or a random sample) of knobs over histories; one row per run, to parquet or CSV."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("histories", nargs="+", type=Path, help="history files or folders of them")
    add_knob_arguments(parser)
    parser.add_argument("--grid", action="append", default=[], metavar="KNOB=V1,V2,...",
                        help="a grid axis (repeatable); runs every combination")
    parser.add_argument("--random", action="append", default=[], metavar="KNOB=LOW:HIGH|A,B",
                        help="sample this knob uniformly in [low, high] or among the values (repeatable)")
    parser.add_argument("--samples", type=int, default=100, help="random knob sets to draw (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random sample (default 0)")
    parser.add_argument("--presets", help="comma-separated presets (or 'all'): the grid runs over each of them")
    add_place_arguments(parser)
    parser.add_argument("--chunk-size", type=int, help="knob sets per task (default: balanced per worker)")
    parser.add_argument("--probes", action="store_true", help="add fact retention columns (workbench.analysis.fact_probes.probes)")
    parser.add_argument("--briefer", choices=("simulated", "extractive"), default="simulated",
                        help="who writes briefings (default simulated; extractive writes text for probes)")
    parser.add_argument("--out", type=Path, help="write the rows to this .parquet or .csv file")
    parser.add_argument("--no-progress", action="store_true", help="do not draw the progress bar on stderr")


def bases_from_args(args: argparse.Namespace) -> list[Any]:
    """The knob sets a grid is laid over: the --preset/--config/--set knobs, or each of --presets."""
    if not args.presets:
        return [knobs_from_args(args)]
    from workbench.knobs import knobs_from_dict
    from workbench.presets import get_preset, list_preset_names

    names = list_preset_names() if args.presets.strip() == "all" else [n.strip() for n in args.presets.split(",")]
    overrides = {}
    if args.assignments:
        from workbench.knobs import parse_knob_assignment

        overrides = dict(parse_knob_assignment(a) for a in args.assignments)
    return [knobs_from_dict(overrides, base=get_preset(n), source="--set") for n in names]


def knob_sets_from_args(args: argparse.Namespace) -> list[Any]:
    from workbench.explore.sweep import knob_grid, knob_sample

    if args.grid and args.random:
        raise ValueError("--grid and --random: choose one")
    out = []
    for base in bases_from_args(args):
        if args.random:
            space = dict(parse_space(r, option="--random") for r in args.random)
            out.extend(knob_sample(space, args.samples, base=base, seed=args.seed))
        else:
            axes = dict(parse_values(g, option="--grid") for g in args.grid)
            out.extend(knob_grid(axes, base=base) if axes else [base])
    return out


def run(args: argparse.Namespace) -> int:
    from workbench.history.readers.discover import expand_history_paths

    paths = expand_history_paths(args.histories)  # a missing path is refused before polars and the engine load
    import polars as pl

    from workbench.display.labels import SWEEP_COLUMNS
    from workbench.explore.sweep import sweep, write_sweep
    from workbench.explore.tune import Constraints, aggregate
    from workbench.knobs import knob_names

    knob_sets = knob_sets_from_args(args)
    if args.out is not None and args.out.suffix.lower() not in (".parquet", ".csv"):
        raise ValueError(f"--out {args.out}: use a .parquet or .csv file")
    if not (args.grid or args.random or args.presets):
        print("no --grid, --random or --presets given: ran the one knob set of --preset/--config/--set "
              "(add --grid KNOB=V1,V2,... to sweep a knob)")
    t0 = time.perf_counter()
    bad: list[str] = []

    named = {str(p) for p in args.histories if not p.is_dir()}  # files named on the command line must load

    def skip(path: str, reason: str) -> None:
        """A bad file found in a folder is reported and skipped; a file named explicitly stops the command."""
        if path in named:
            raise ValueError(reason)
        bad.append(path)
        note(f"workbench sweep: warning: skipped {one_line(reason)}")

    with runs_on(args, paths) as (sources, executor, workers), ProgressBar("runs", enabled=not args.no_progress) as bar:
        frame = sweep(sources, knob_sets, executor=executor, workers=workers, chunk_size=args.chunk_size,
                      briefer=make_briefer(args.briefer), probes=args.probes, progress=bar, on_bad_history=skip)
    seconds = time.perf_counter() - t0
    if frame.is_empty():
        raise ValueError(f"no history could be read ({len(bad)} skipped)")
    if bad:
        note(f"workbench sweep: warning: {len(bad)} of {counted(len(paths), 'history', 'histories')} skipped (unreadable)")
        paths = [p for p in paths if str(p) not in bad]
    print(f"{counted(frame.height, 'run')} ({counted(len(knob_sets), 'knob set')} × {counted(len(paths), 'history', 'histories')}) in {seconds:.1f}s")
    if args.out is not None:
        write_sweep(frame, args.out)
        print(f"wrote {args.out}")
    table = aggregate(frame, "tokens", Constraints(max_overflows=10**12)).sort("objective").head(10)
    varying = [c for c in knob_names() if frame[c].n_unique() > 1]
    knobs_by_config = frame.group_by("config").agg(pl.col(c).first() for c in varying)
    table = table.join(knobs_by_config, on="config", how="left").sort("objective")
    probes = args.probes and "retention" in table.columns
    metrics = ["tokens_per_task", "overflows", "max_compressions", *(["retention"] if probes else [])]
    columns = ["config", *(SWEEP_COLUMNS[name] for name in metrics), *varying]  # the words of the app's sweep tab
    rows = []
    for row in table.iter_rows(named=True):
        knobs = [f"{row[c]:g}" if isinstance(row[c], float) else str(row[c]) for c in varying]
        retention = [f"{row['retention']:.1%}" if row["retention"] is not None else "-"] if probes else []
        rows.append([row["config"], f"{row['tokens_per_task']:,.0f}", row["overflows"], row["max_compressions"],
                     *retention, *knobs])
    right = [True, True, True, True, *([True] if probes else []), *([False] * len(varying))]
    title = "cheapest knob sets by mean tokens per task" if len(knob_sets) > 1 else "the one knob set"
    print_table(columns, rows, title=title, right=right)
    if len(paths) > 1 and table.height:  # the mean above hides histories that never compress
        from workbench.explore.tune import history_rows

        best = int(table.row(0, named=True)["config"])
        print_per_history(history_rows(frame.filter(pl.col("config") == best)), who=f"config {best}")
    if probes:
        print(f"fact retention: facts of the folded spans still in context after each compaction, pooled over "
              f"histories; briefer {args.briefer}"
              + (" (the size model writes no text: only kept and pinned messages count)"
                 if args.briefer == "simulated" else ""))
    return 0
