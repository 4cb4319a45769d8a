"""Run ``workbench`` commands in this fresh process and print what each did, as one JSON line.

    python tests/fresh_cli.py '{"runs": [["reality", "DIR", "--jobs", "2"], ...], "worker_step": "die"}'

A test process cannot try forked workers itself: pytest-xdist's worker has threads of its own, so the
command rightly does everything in-process there. Here it is a plain single-threaded process, as a user's.
Per run: exit code, stdout, stderr, and the pids that computed each log (``cli.parallel.last_workers``).
``worker_step`` replaces the follow step in workers only (the parent's own redo keeps the real one):
``die`` (the worker exits at once, as if killed), ``unpicklable`` (returns a value pickle refuses),
``raise`` (an exception that cannot be unpickled), ``hang:DIR`` (writes DIR/<pid> and waits forever).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class Unpicklable(Exception):
    def __init__(self, a: int, b: int) -> None:  # pickled with one argument, it cannot be rebuilt
        super().__init__(a + b)


def _worker_step(kind: str) -> None:
    from workbench.cli import reality_jobs

    parent, real = os.getpid(), reality_jobs._follow

    def step(job, history):  # type: ignore[no-untyped-def]
        if os.getpid() == parent:
            return real(job, history)
        if kind == "die":
            os._exit(3)
        if kind == "unpicklable":
            return threading.Lock()
        if kind == "raise":
            raise Unpicklable(1, 2)
        folder = Path(kind.split(":", 1)[1])
        (folder / str(os.getpid())).write_text("started")
        time.sleep(3600)
        return None

    reality_jobs._follow = step
    reality_jobs._STEPS[reality_jobs.FOLLOW] = real  # the parent's redo


def main() -> None:
    spec = json.loads(sys.argv[1])
    hang = spec.get("worker_step") or ""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal, even if our parent ignores it
    if spec.get("worker_step"):
        _worker_step(spec["worker_step"])
    from workbench.cli import main as cli_main
    from workbench.cli import parallel

    results = []
    for argv in spec["runs"]:
        parallel.last_workers.clear()
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
        workers = list(parallel.last_workers)
        started = [int(p.name) for p in Path(hang.split(":", 1)[1]).iterdir()] if hang.startswith("hang:") else []
        alive = []
        for pid in (set(workers) | set(started)) - {os.getpid()}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 0)  # a worker not reaped (a zombie) or still running
                alive.append(pid)
        results.append({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue(),
                        "workers": workers, "started": started, "alive": alive})
    print(json.dumps({"parent": os.getpid(), "runs": results}))


if __name__ == "__main__":
    main()
