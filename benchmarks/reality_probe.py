"""``workbench reality FOLDER`` in this fresh process: a cold first run, then warm runs, each beside its reference.

    python benchmarks/reality_probe.py FOLDER RUNS [--with-ignore-usage] [--with-one-process] [--registry-cache cold|warm]
        [--charge-garbage]

The reference reads every line of the folder's ``.jsonl`` logs and ``json.loads`` it (the files are read
once before anything is timed, so both sides find them in the page cache). The command runs in-process
(``workbench.cli.main``, its table printed into a buffer). First the modules a run imports are imported
and timed apart (numpy, polars, rich, the command modules: the list comes from a first run in a child
process), so the cold run is what a user's one run does beyond starting Python and loading modules: the
presets' YAML, litellm's price registry, rich's first table, the work itself. A warm run is a later run
in the same process over logs it has not seen (per-history caches cleared; presets, registry and modules
kept). Prints one JSON line: wall and CPU seconds (this process's and any reaped children's). The command shares
the logs with workers forked from this process, one per CPU it may use; ``--with-one-process`` adds a later run
with ``--workers 1``, all in this process.

The entries of litellm's price registry a run looks up are kept in a disk cache (``counting.registry``):
``--registry-cache cold`` (the default) points ``WORKBENCH_CACHE_DIR`` at an empty folder for the first run (a
first run after installing or upgrading: the whole registry is parsed and the cache written), ``warm`` at a
folder the child's run filled (any later process). The user's own cache is never read or written.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _cpu() -> float:
    """CPU seconds of this process and of its children that have been waited for (the command's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


CHARGE_GARBAGE = "--charge-garbage" in sys.argv


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call of ``fn``, after a collection so earlier garbage is not charged to it.

    The command pauses the cyclic GC, so the objects it made are all in the youngest generation when it returns, and
    the first allocation after it may run a collection over them (with ``main`` at 1f0b1b6: ~0.12 s, freeing 33,900
    objects in reference cycles), which lands after the wall clock is read but before the CPU clock is. With
    ``--charge-garbage`` each call ends with a full collection, inside both clocks (the modules' objects frozen after
    the imports, so it scans only what the runs made): every run pays for the garbage it leaves, the reference too.
    """
    gc.collect()
    wall, cpu = time.perf_counter(), _cpu()
    fn()
    if CHARGE_GARBAGE:
        gc.collect()
    return time.perf_counter() - wall, _cpu() - cpu


def _command(folder: Path, *extra: str) -> Callable[[], None]:
    def run() -> None:
        from workbench.cli import main as cli_main
        from workbench.policies.base import clear_caches

        clear_caches()  # per-history indexes and pin masks, keyed by content: a later run must not reuse them
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli_main(["reality", str(folder), *extra])
        if code != 0 or "Logged compactions" not in out.getvalue():
            raise RuntimeError(f"workbench reality failed (exit {code}): {out.getvalue()[-500:]}")
    return run


def _imported_by_a_run(folder: Path, cache_dir: str) -> list[str]:
    """The modules one run of the command imports, from a run in a child process (so this one stays cold)."""
    cmd = [sys.executable, __file__, str(folder), "0", "--list-modules"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "WORKBENCH_CACHE_DIR": cache_dir})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    folder, runs = Path(sys.argv[1]), int(sys.argv[2])
    if "--list-modules" in sys.argv:
        before = set(sys.modules)
        _command(folder)()
        print(json.dumps(sorted(set(sys.modules) - before)))
        return
    logs = sorted(folder.glob("*.jsonl"))

    def reference() -> None:
        loads = json.loads
        for path in logs:
            with path.open("rb") as fh:
                for line in fh:
                    if line.strip():
                        loads(line)

    mode = sys.argv[sys.argv.index("--registry-cache") + 1] if "--registry-cache" in sys.argv else "cold"
    if mode not in ("cold", "warm"):
        raise SystemExit(f"--registry-cache: cold or warm, not {mode!r}")
    scratch = tempfile.TemporaryDirectory(prefix="reality-probe-")
    child_dir, own_dir = Path(scratch.name) / "child", Path(scratch.name) / "first-run"
    modules = _imported_by_a_run(folder, str(own_dir if mode == "warm" else child_dir))
    os.environ["WORKBENCH_CACHE_DIR"] = str(own_dir)  # warm: what the child's run wrote; cold: nothing yet
    cached = sorted(p.name for p in own_dir.rglob("*") if p.is_file())
    for path in logs:  # into the page cache, for both sides alike
        path.read_bytes()
    wall, cpu = time.perf_counter(), time.process_time()
    for name in modules:
        with contextlib.suppress(ImportError):  # e.g. a module a run imported conditionally
            importlib.import_module(name)
    imports = (time.perf_counter() - wall, time.process_time() - cpu)
    if CHARGE_GARBAGE:
        gc.collect()
        gc.freeze()  # the modules' objects: a collection after a run scans only what the runs made
    cold = _timed(_command(folder))
    cold_ref = _timed(reference)
    pairs = []
    for r in range(runs):
        if r % 2:
            ref = _timed(reference)
            pairs.append((_timed(_command(folder)), ref))
        else:
            ours = _timed(_command(folder))
            pairs.append((ours, _timed(reference)))
    ignore = ignore_ref = None
    if "--with-ignore-usage" in sys.argv:  # the estimate alone: o200k_base counts of every message
        ignore = _timed(_command(folder, "--ignore-usage"))
        ignore_ref = _timed(reference)
    one = one_ref = None
    if "--with-one-process" in sys.argv:
        one = _timed(_command(folder, "--workers", "1"))
        one_ref = _timed(reference)
    scratch.cleanup()
    print(json.dumps({"one_process": one, "one_process_ref": one_ref, "workers": len(os.sched_getaffinity(0)),
                      "registry_cache": mode, "cache_files_before": cached, "imports": imports, "modules": len(modules), "cold": cold, "cold_ref": cold_ref,
                      "pairs": pairs, "ignore_usage": ignore, "ignore_usage_ref": ignore_ref, "files": len(logs),
                      "bytes": sum(p.stat().st_size for p in logs),
                      "lines": sum(p.read_bytes().count(b"\n") for p in logs)}))


if __name__ == "__main__":
    main()
