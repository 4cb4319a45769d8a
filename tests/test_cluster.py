"""``workbench sweep --scheduler`` on a real dask cluster: a ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, started here and killed (process groups) when the module's tests end.

The CLI's rows match the same sweep on this machine; the workers loaded each history from the bytes shipped to
them (keys ``sha256:...``, never a path), once each, and a second command on the same workers loads nothing again;
Ctrl-C (SIGINT to the command) cancels the cluster's tasks and exits promptly.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import REPO

DASK = Path(sys.executable).with_name("dask")
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                 reason="dask.distributed not installed (the dask extra)"),
              pytest.mark.skipif(not DASK.exists(), reason=f"no dask command beside {sys.executable}")]


def _distributed() -> Any:
    """dask.distributed, imported by the test that uses it: imported at collection, it cost every xdist worker
    ~1 CPU-s, and most workers run none of these tests."""
    import distributed

    return distributed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still exists (zombies aside)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


@pytest.fixture(scope="session")  # once per worker, not once per visit (tests/conftest.py)
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a scheduler with two single-threaded worker processes, each in a process group of its own."""
    work = tmp_path_factory.mktemp("dask")  # the workers' folder: none of the histories are in it
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> None:
        procs.append(subprocess.Popen([str(DASK), *args], cwd=work, env=ENV, start_new_session=True,
                                      stdout=subprocess.DEVNULL, stderr=(work / f"log{len(procs)}.txt").open("wb")))

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
        for _ in range(2):
            start("worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard",
                  "--death-timeout", "60", "--preload", "workbench.explore.sweep")
        with _distributed().Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        for proc in procs:
            proc.wait(timeout=30)
        assert not any(_group_alive(proc.pid) for proc in procs), "a dask process outlived the test"


@pytest.fixture(scope="session")  # once per worker, not once per visit (tests/conftest.py)
def histories(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three small histories, one of them gzipped (the readers unpack it; it is shipped as its gzip bytes)."""
    folder = tmp_path_factory.mktemp("histories")
    for name in ("short.jsonl", "claude_code.jsonl"):
        shutil.copy(REPO / "sample_histories" / name, folder / name)
    (folder / "tool_heavy.jsonl.gz").write_bytes(gzip.compress((REPO / "sample_histories" / "tool_heavy.jsonl").read_bytes()))
    return folder


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a command run in this process, on this machine or (``--scheduler``) on the
    cluster: what is tested is the workers' side, and a process of its own would import the engine and
    dask.distributed again (~3 CPU-s each). Ctrl-C is sent to a process of its own (the last test)."""
    from workbench.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


GRID = ["--grid", "trigger_ratio=0.3,0.5,0.7", "--grid", "kept_budget_ratio=0.05,0.2", "--set",
        "context_window_tokens=32000", "--no-progress"]


def test_the_cluster_sweep_has_the_local_rows_and_loads_each_history_once_per_worker(
        scheduler: str, histories: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local, remote = tmp_path / "local.parquet", tmp_path / "cluster.parquet"
    assert _run(capsys, "sweep", str(histories), *GRID, "--workers", "1", "--out", str(local))[0] == 0
    code, _, err = _run(capsys, "sweep", str(histories), *GRID, "--scheduler", scheduler, "--out", str(remote))
    assert code == 0, err[-3000:]
    assert "shipped 3 histories" in err and "to 2 workers" in err, err
    mine, theirs = pl.read_parquet(local), pl.read_parquet(remote)
    assert mine.height == theirs.height == 3 * 6
    assert mine.drop("replay_ms").equals(theirs.drop("replay_ms"))
    assert theirs["compressions"].sum() > 0  # the knobs bite: equal rows are not all zeros

    from workbench.explore.sweep import worker_loads

    with _distributed().Client(scheduler, timeout=30) as client:
        loads = client.run(worker_loads)
        assert len(loads) == 2
        assert all(k.startswith("sha256:") for per in loads.values() for k in per)  # from the shipped bytes
        assert all(n == 1 for per in loads.values() for n in per.values())
        assert len(set().union(*loads.values())) == 3
        assert _run(capsys, "sweep", str(histories), *GRID, "--scheduler", scheduler)[0] == 0
        after = client.run(worker_loads)  # the scheduler may send a history's tasks to the other worker this time,
        assert all(n == 1 for per in after.values() for n in per.values())  # but no worker loads one twice
        assert all(after[w].items() >= per.items() for w, per in loads.items())  # and each kept what it loaded
        assert client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0


def test_tune_on_the_cluster_finds_what_it_finds_here(scheduler: str, histories: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tune", str(histories), "--set", "context_window_tokens=32000", "--space", "trigger_ratio=0.3:0.8",
            "--points", "3", "--rounds", "1", "--keep", "1", "--briefer", "simulated", "--max-overflows", "100000",
            "--max-compressions", "none", "--min-retention", "0", "--no-progress"]
    code, here, _ = _run(capsys, *args, "--workers", "1")
    code_there, there, err = _run(capsys, *args, "--scheduler", scheduler)
    assert code_there == code, err[-3000:]
    lines = [line for line in here.splitlines() if not line.startswith("tried ")]  # its seconds differ
    assert len(lines) > 5
    assert [line for line in there.splitlines() if not line.startswith("tried ")] == lines


def test_ctrl_c_cancels_the_cluster_tasks_and_exits_promptly(scheduler: str, histories: Path) -> None:
    cmd = [sys.executable, "-m", "workbench", "sweep", str(histories / "claude_code.jsonl"), "--random",
           "trigger_ratio=0.2:0.9", "--samples", "5000", "--set", "context_window_tokens=32000", "--chunk-size", "5",
           "--scheduler", scheduler, "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        while line and "shipped" not in line:
            line = proc.stderr.readline()
        assert "shipped" in line, "the sweep never reached the cluster"
        with _distributed().Client(scheduler, timeout=30) as client:
            deadline = time.monotonic() + 30
            while not client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
                assert time.monotonic() < deadline, "no task reached the scheduler"
                time.sleep(0.1)
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=20)
            took = time.monotonic() - sent
            assert code == 130, proc.stderr.read()[-2000:]
            assert took < 15  # cancelled, not run to the end (5,000 runs take minutes on one core)

            def left(dask_scheduler: object) -> int:
                return len(dask_scheduler.tasks)  # type: ignore[attr-defined]

            deadline = time.monotonic() + 10
            while client.run_on_scheduler(left) > 0:  # nothing of the command's is queued or kept
                assert time.monotonic() < deadline, "tasks still on the scheduler after Ctrl-C"
                time.sleep(0.1)
            processing = client.run(lambda dask_worker: len(dask_worker.state.executing))
            assert sum(processing.values()) <= 2  # at most the chunk each worker was in (5 runs), never queued ones
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
