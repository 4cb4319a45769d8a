"""`workbench probe` at 10k, 30k and 100k messages: wall time and peak memory of the real command.

    python benchmarks/probe_scale.py               # 10k, 30k, 100k (~1 minute on 2 cores)
    python benchmarks/probe_scale.py --sizes 10000

Each size runs the command in a fresh process (``python -m workbench probe FILE``: load, replay with
the extractive briefer, probe every compression), on the benchmark histories of ``harness.py`` (the
10k session repeated with fresh ids). Target (issue 12 item 16): linear, 100k messages under 30 s on
2 cores. The growth column is the time factor per 10× messages (10 = linear).
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Histories  # noqa: E402

TARGET_S = 30.0


def measure(path: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one `workbench probe` process.

    CPU time is reported beside wall time because these 2 cores are shared: at a load average of 5 the
    wall time of a single-threaded command is about twice its CPU time.
    """
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "workbench", "probe", str(path)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return seconds, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,30000,100000")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"load average at start {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory(prefix="workbench-probe-bench-") as tmp:
        histories = Histories(Path(tmp))
        for n in sizes:
            path = histories.file(n)
            load = os.getloadavg()[0]
            seconds, cpu, rss = measure(path)
            rows.append((n, seconds, cpu, rss, load))
            print(f"{n:>7,} messages  {seconds:6.1f} s wall  {cpu:6.1f} s CPU  peak {rss:,.0f} MB  (load {load:.1f})",
                  flush=True)
    print("\n| messages | wall time | CPU time | load average | peak RSS | CPU time per 10× messages | target |")
    print("|---|---|---|---|---|---|---|")
    for i, (n, s, cpu, rss, load) in enumerate(rows):
        growth = ""
        if i:
            pn, _, pcpu, _, _ = rows[i - 1]
            growth = f"{(cpu / pcpu) ** (1 / math.log10(n / pn)):.1f}×"
        target = f"< {TARGET_S:g} s: {'met' if s < TARGET_S else '**not met**'}" if n == 100_000 else ""
        print(f"| {n:,} | {s:.1f} s | {cpu:.1f} s | {load:.1f} | {rss:,.0f} MB | {growth} | {target} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
