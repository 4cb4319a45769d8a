"""What ``workbench sweep`` and ``workbench tune`` share: knob spaces from the command line, the briefer by name,
a table of one config on each history, and where the runs go (this machine's processes, or a dask cluster).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.cli.progress import note
from workbench.history.words import counted


def parse_values(text: str, *, option: str) -> tuple[str, list[Any]]:
    """``knob=v1,v2,...`` → (knob, [values]), each value read as YAML (numbers, booleans, text)."""
    if "=" not in text:
        raise ValueError(f"{option} {text!r}: expected knob=value,value,...")
    name, raw = text.split("=", 1)
    from workbench.knobs import safe_yaml

    values = [safe_yaml(v, source=option) if v.strip() else "" for v in raw.split(",")]
    return name.strip(), values


def parse_space(text: str, *, option: str) -> tuple[str, tuple[float, float] | list[Any]]:
    """``knob=low:high`` → a range, ``knob=a,b`` → choices."""
    name, raw = (text.split("=", 1) + [""])[:2] if "=" in text else (text, "")
    if not raw:
        raise ValueError(f"{option} {text!r}: expected knob=low:high or knob=a,b,...")
    if ":" in raw and "," not in raw:
        lo, hi = raw.split(":", 1)
        try:
            return name.strip(), (float(lo), float(hi))
        except ValueError:
            raise ValueError(f"{option} {text!r}: low and high must be numbers") from None
    return parse_values(text, option=option)


def make_briefer(name: str) -> Any:
    """The simulated or extractive briefer by name (both picklable, both offline)."""
    if name == "extractive":
        from workbench.briefing.extractive import ExtractiveBriefer

        return ExtractiveBriefer()
    return None


def print_per_history(rows: Any, *, who: str = "the winner") -> None:
    """``who`` on each history: a mean over histories that never compress hides the ones that do."""
    from workbench.cli.progress import print_table
    from workbench.display.labels import SWEEP_COLUMNS

    if rows is None or not rows.height:
        return
    has_retention = "retention" in rows.columns
    table = []
    for r in rows.iter_rows(named=True):
        line = [r["history"], f"{r['compressions']:,}", f"{r['tokens_per_task']:,.0f}", f"{r['overflows']:,}"]
        if has_retention:
            line.append(f"{r['retention']:.3f}")
        line.append("" if r["compresses"] else "never compresses: the knobs do not touch it")
        table.append(line)
    names = ["history", "compressions", "tokens_per_task", "overflows", *(["retention"] if has_retention else [])]
    columns = [*(SWEEP_COLUMNS[name] for name in names), ""]  # the words of the app's sweep and tune tables
    print_table(columns, table, title=f"{who} on each history",
                right=[False, True, True, True, *([True] if has_retention else []), False])
    idle = rows.filter(~rows["compresses"]).height
    if idle:
        print(f"{idle} of {counted(rows.height, 'history', 'histories')} never compress under {who}: the mean moves with the others")


def add_place_arguments(parser: argparse.ArgumentParser) -> None:
    """``--workers`` (this machine) or ``--scheduler`` (a dask cluster)."""
    place = parser.add_mutually_exclusive_group()
    place.add_argument("--workers", type=int, help="processes on this machine, this one included (default: all "
                                                   "cores; 1 = this process alone)")
    place.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="run on this dask.distributed cluster instead (the dask extra, installed on the workers "
                            "too); the histories' bytes are sent to each worker once, no shared folder needed")


@contextmanager
def runs_on(args: argparse.Namespace, paths: Sequence[Path]) -> Iterator[tuple[list[Any], Executor | None, int | None]]:
    """(the histories as the sweep takes them, the executor, the workers to size chunks for): the paths and
    ``--workers`` here, or the histories shipped to ``--scheduler``'s workers and its executor. Leaving by an error
    or Ctrl-C cancels the cluster's tasks."""
    if not getattr(args, "scheduler", None):
        yield list(paths), None, args.workers
        return
    from workbench.explore.cluster import connect

    with connect(args.scheduler) as cluster:
        note(f"workbench {args.command}: dask cluster at {args.scheduler}: {counted(cluster.workers, 'worker')}, "
             f"{counted(cluster.threads, 'thread')}")
        sources, shipment = cluster.ship(paths)
        note(f"workbench {args.command}: {shipment.describe()}")
        yield sources, cluster.executor, cluster.threads
