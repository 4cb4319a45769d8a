"""Peak memory of loading and replaying one history, run in a fresh process by ``measures.memory``.

    python benchmarks/memory_probe.py HISTORY.jsonl

Prints one JSON line: the peak RSS (``VmHWM``, the high-water mark) after the imports, after loading
and at the end, in bytes. The growth over the first is what loading, counting and replaying cost.
"""

from __future__ import annotations

import json
import resource
import sys


def _peak_bytes() -> int:
    """This process's peak RSS: VmHWM, as ru_maxrss keeps the parent's peak across fork and exec on Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def main() -> None:
    from workbench.history.readers import load_history
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    baseline = _peak_bytes()
    history = load_history(sys.argv[1])
    loaded = _peak_bytes()
    run = simulate(history, Knobs())
    print(json.dumps({"baseline_bytes": baseline, "loaded_bytes": loaded, "peak_bytes": _peak_bytes(),
                      "messages": len(history), "compressions": run.metrics.compressions}))


if __name__ == "__main__":
    main()
