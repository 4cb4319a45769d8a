"""How long ``tune`` takes on the real histories with the simulated briefer (target: under a minute on 2 cores).

    python benchmarks/tune_time.py [--workers 2] [--shared PATH]

Prints, all measured in this run: the reference (one warm replay of every history, one process), a
1,008-run sweep with probes, and ``tune`` with the default search space and the constraints
max_overflows=0, min_retention=0.12, max_compressions=20. Each is shown in seconds and as a multiple
of the reference, so numbers from different machines compare. Exit code 1 if tune takes 60 s or more.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from workbench.explore.sweep import knob_sample, sweep
from workbench.explore.tune import Constraints, tune
from workbench.history.readers import load_history
from workbench.knobs import Knobs
from workbench.replay import simulate

LIMIT_S = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shared", type=Path,
                        default=Path(os.environ.get("WORKBENCH_SHARED", Path(__file__).resolve().parents[2] / "shared")))
    args = parser.parse_args()
    paths = sorted((args.shared / "real_histories").glob("*.jsonl"))
    if not paths:
        print(f"no real histories in {args.shared / 'real_histories'}", file=sys.stderr)
        return 2
    histories = [load_history(p) for p in paths]
    for h in histories:  # warm the count cache: the reference is replay time, not parse time
        simulate(h, Knobs())
    t0 = time.perf_counter()
    for h in histories:
        simulate(h, Knobs(context_window_tokens=32_000))
    reference = time.perf_counter() - t0

    knobs = knob_sample({"trigger_ratio": (0.3, 0.9), "kept_budget_ratio": (0.05, 0.4),
                         "context_window_tokens": [32_000, 128_000, 200_000]}, 72, seed=3)
    t0 = time.perf_counter()
    frame = sweep(paths, knobs, workers=args.workers, probes=True)
    sweep_s = time.perf_counter() - t0

    constraints = Constraints(max_overflows=0, min_retention=0.12, max_compressions=20)
    t0 = time.perf_counter()
    result = tune(paths, constraints=constraints, workers=args.workers)
    tune_s = time.perf_counter() - t0

    print(f"cores available        {os.cpu_count()}, workers {args.workers}, histories {len(paths)}")
    print(f"reference              {reference:8.3f} s  one warm replay of every history (1 process)")
    print(f"sweep {frame.height:,} runs       {sweep_s:8.2f} s  = {sweep_s / reference:7.0f} × reference"
          f"  ({frame.height / sweep_s:,.0f} runs/s, probes on, process start included)")
    print(f"tune {result.runs.height:,} runs        {tune_s:8.2f} s  = {tune_s / reference:7.0f} × reference"
          f"  ({result.trials.height} configs, winner found: {result.best is not None})")
    ok = tune_s < LIMIT_S
    print(f"tune under {LIMIT_S:.0f} s: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
