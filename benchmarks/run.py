"""Speed and memory of the workbench, each as a ratio to a reference measured in the same run.

    python benchmarks/run.py            # the full table: 1k, 10k and 100k messages (~4.5 minutes on 2 cores)
    python benchmarks/run.py --quick    # 1k messages, 3 runs (~12 s): proves the script works
    python benchmarks/run.py --only replay,counting

Machines differ and are noisy, so no figure here is in seconds alone: each row divides our time (or
memory) by a reference taken back to back with it. Prints a markdown table with the machine it ran on;
``benchmarks/README.md`` keeps the latest one.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from harness import Histories, Result  # run as a script, so its folder is on sys.path
from measures import LARGE, MEASURES, Config, temp_folder


def machine() -> str:
    """CPU model, cores, memory, Python and OS of this machine, in one line."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor() or model
    mem = ""
    try:
        kb = int(next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024**2:.0f} GB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return (f"{model}, {os.cpu_count()} cores{mem}; Python {platform.python_version()} "
            f"({platform.python_implementation()}); {platform.system()} {platform.release()}")


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def _quantity(value: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value / 1e6:,.0f} MB"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.1f} ms" if value >= 0.001 else f"{value * 1e6:.0f} µs"


def _ratio(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "+s":
        return f"{value:+.2f} s"
    if unit == "x faster":
        return f"{value:.1f}×"
    return f"{value:.3f}×" if value >= 0.001 else f"{value:.1e}×"


def _growth(r: Result) -> str:
    if not r.growth:
        return "n/a"
    sizes = sorted(r.growth)
    cells = []
    for a, b in zip([None, *sizes], sizes, strict=False):
        cell = f"{_size(b)}: {_quantity(r.growth[b], r.growth_unit)}"
        if a is not None and r.growth[a] > 0:
            cell += f" (×{r.growth[b] / r.growth[a]:.1f})"
        cells.append(cell)
    return " · ".join(cells)


def table(results: list[Result]) -> str:
    """The results as a markdown table plus a growth table and notes."""
    lines = [
        "| measure | reference (same run) | target | min | median | max | runs | ours (median) | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.skipped:
            lines.append(f"| {r.measure} | {r.reference} | {r.target} | skipped: {r.skipped} | | | | | n/a |")
            continue
        lines.append(
            f"| {r.measure} | {r.reference} | {r.target} | {_ratio(r.ratio.min, r.unit)} | "
            f"**{_ratio(r.ratio.median, r.unit)}** | {_ratio(r.ratio.max, r.unit)} | {len(r.ratio.values)} | "
            f"{_quantity(r.ours.median, r.growth_unit)} | {'yes' if r.passed else '**no**'} |"
        )
    lines += ["", "Growth with history size (median of our figure; ×: factor from the size before; "
              "ratio against the reference at each size):", "",
              "| measure | growth | ratio by size |", "|---|---|---|"]
    for r in results:
        if r.skipped:
            lines.append(f"| {r.key} | n/a | n/a |")
            continue
        by_size = " · ".join(f"{_size(n)}: {_ratio(v, r.unit)}" for n, v in sorted(r.growth_ratio.items()))
        lines.append(f"| {r.key} | {_growth(r)} | {by_size or 'n/a'} |")
    notes = [f"- {r.key}: {note}" for r in results for note in r.notes]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def config(args: argparse.Namespace, histories: Histories) -> Config:
    if args.quick:
        return Config(histories=histories, sizes=(1000,), runs=args.runs or 3, large_runs=1, replay_size=1000,
                      app_size=1000, sweep_size=1000, sweep_runs=100, sweep_growth=(1000,), app_growth=(1000,), growth_sizes=(500, 2000), growth_runs=1)
    return Config(histories=histories, sizes=(1000, 10_000, LARGE), runs=args.runs or 5, large_runs=3,
                  replay_size=10_000, app_size=5000, sweep_size=10_000, sweep_runs=400,
                  sweep_growth=(1000, 10_000), app_growth=(1000, 10_000))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 runs (a smoke run, < 30 s)")
    parser.add_argument("--only", default="", help=f"comma-separated measures: {', '.join(MEASURES)}")
    parser.add_argument("--runs", type=int, default=0, help="runs per size (default 5; 3 with --quick)")
    args = parser.parse_args(argv)
    chosen = [m.strip() for m in args.only.split(",") if m.strip()] or list(MEASURES)
    unknown = [m for m in chosen if m not in MEASURES]
    if unknown:
        parser.error(f"unknown measure {', '.join(unknown)}; known: {', '.join(MEASURES)}")
    start = time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with temp_folder() as tmp:
        histories = Histories(Path(tmp), base_messages=1000 if args.quick else 10_000)
        cfg = config(args, histories)
        results: list[Result] = []
        for name in chosen:
            t0 = time.perf_counter()
            results.extend(MEASURES[name](cfg))
            print(f"[{name}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)
    print(f"Machine: {machine()}")
    print(f"Load average at start {load:.2f}; whole run {time.perf_counter() - start:.0f} s"
          f"{' (--quick)' if args.quick else ''}.\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
