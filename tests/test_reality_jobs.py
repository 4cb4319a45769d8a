"""``workbench reality --jobs N``: the per-log work in forked workers prints exactly what doing it in this process
prints (tables, JSON, notes, errors, exit codes), and a worker that fails in any way is redone here.

The command runs in a fresh process (``fresh_cli.py``): pytest-xdist's worker has threads of its own, where the
command rightly refuses to fork and does everything in-process (tested here too).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agent_log_builders import ClaudeLog, CodexLog, text_block, tool_use
from conftest import need_shared, shared_dir

HELPER = Path(__file__).with_name("fresh_cli.py")
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def fresh(runs: list[list[str]], worker_step: str | None = None) -> dict[str, Any]:
    spec = json.dumps({"runs": runs, "worker_step": worker_step})
    proc = subprocess.run([sys.executable, str(HELPER), spec], capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def claude_log(version: str = "2.1.25", *, pad: int = 0) -> str:
    """Crosses 167,000 after the second tool step and compacts there; ``pad`` makes the file larger."""
    log = ClaudeLog(version=version)
    log.user("Refactor the parser." + " " * pad)
    log.assistant([text_block("Reading."), tool_use("t1")], input_total=160_000, output=100)
    log.tool_result("t1", "x" * 20_000)
    log.assistant([tool_use("t2")], input_total=165_200, output=100)
    log.tool_result("t2", "y" * 10_000)
    return log.compact("auto", 167_700, "S.").user("go").text()


def claude_manual_log() -> str:
    """Over the threshold from the first call (an extra prediction), then compacted by hand."""
    log = ClaudeLog(version="2.1.25")
    log.user("Start.")
    log.assistant([text_block("Reading."), tool_use("t1")], input_total=168_000, output=100)
    log.tool_result("t1", "x" * 20_000)
    log.assistant([tool_use("t2")], input_total=168_500, output=100)
    log.tool_result("t2", "y" * 10_000)
    return log.compact("manual", 171_000, "S.").user("again").text()


def codex_log() -> str:
    log = CodexLog(model="gpt-5.3-codex-spark", window_logged=121_600)
    log.turn().user("Start.")
    log.reasoning().call("c1").output("c1", "ok").tokens(100_000, 1_000, reasoning=4_000)
    log.reasoning().say("Done first part.").tokens(101_500, 500, reasoning=4_000).end_turn()
    log.turn().user("Continue.").reasoning().call("c2").output("c2", "z" * 4_000).tokens(104_000, 300)
    log = log.compacted(["Start.", "Continue."], after_estimate=9_000)
    return log.say("after").tokens(10_000, 10).end_turn().text()


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """A folder of three agent logs (one with no compaction, for its note) and two files that are not histories."""
    folder = tmp_path / "logs"
    (folder / "nested").mkdir(parents=True)
    (folder / "a_claude.jsonl").write_text(claude_log(pad=50_000))
    (folder / "b_codex.jsonl").write_text(codex_log())
    (folder / "nested" / "c_manual.jsonl").write_text(claude_manual_log())
    quiet = ClaudeLog(version="2.0.76")
    quiet.user("hi").assistant([text_block("hello")], input_total=1_000, output=10)
    (folder / "d_quiet.jsonl").write_text(quiet.text())
    (folder / "notes.json").write_text('{"hello": 1}')
    (folder / "broken.jsonl").write_text('{"type": "user", "message": \n')
    return folder


def forked(run: dict[str, Any], parent: int) -> set[int]:
    """The worker processes (not this one) that computed some log of a run."""
    return set(run["workers"]) - {parent}


def assert_same(parallel: dict[str, Any], serial: dict[str, Any]) -> None:
    assert parallel["argv"][-2:] == ["--jobs", "2"] and serial["argv"][-2:] == ["--jobs", "1"]
    assert (parallel["code"], parallel["out"], parallel["err"]) == (serial["code"], serial["out"], serial["err"])


def test_hand_built_logs_print_the_same_with_two_workers_as_in_one_process(logs: Path) -> None:
    flags = [[], ["--json"], ["--ignore-usage"], ["--briefings"], ["--briefings", "--json"]]
    runs = [["reality", str(logs), *f, "--jobs", "2"] for f in flags] + [["reality", str(logs), *f, "--jobs", "1"]
                                                                        for f in flags]
    data = fresh(runs)
    parallel, serial = data["runs"][: len(flags)], data["runs"][len(flags):]
    for p, s in zip(parallel, serial, strict=True):
        assert_same(p, s)
        assert p["code"] == 0
        # six files, four of them logs: one worker and this process shared them; the worker was reaped
        assert len(p["workers"]) == 6 and len(forked(p, data["parent"])) == 1
        assert p["alive"] == [] and s["workers"] == []
    table, js = serial[0], json.loads(serial[1]["out"])
    assert "skipped" in table["err"] and "notes.json" in table["err"] and "broken.jsonl" in table["err"]
    assert "d_quiet.jsonl: the log records no compaction" in table["err"]
    assert [s["file"] for s in js["sessions"]] == ["a_claude.jsonl", "b_codex.jsonl", "d_quiet.jsonl", "c_manual.jsonl"]
    assert js["summary"]["auto_compactions"] == 2 and js["summary"]["manual_compactions"] == 1
    assert len(json.loads(serial[4]["out"])["briefings"]) == 3


def test_a_broken_file_named_on_the_command_line_fails_as_in_one_process(logs: Path) -> None:
    """The worker's HistoryError is not what the user sees: the parent loads the file again and raises its own."""
    named = [str(logs / "a_claude.jsonl"), str(logs / "broken.jsonl"), str(logs / "b_codex.jsonl")]
    data = fresh([["reality", *named, "--jobs", "2"], ["reality", *named, "--jobs", "1"]])
    parallel, serial = data["runs"]
    assert_same(parallel, serial)
    assert serial["code"] == 2 and serial["out"] == ""
    assert serial["err"].startswith("workbench reality: error: ") and "broken.jsonl" in serial["err"]
    assert len(forked(parallel, data["parent"])) == 1


def test_a_folder_with_only_broken_files_says_so_as_in_one_process(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text("not json\n")
    (tmp_path / "y.json").write_text("[1, 2]")
    data = fresh([["reality", str(tmp_path), "--jobs", "2"], ["reality", str(tmp_path), "--jobs", "1"]])
    parallel, serial = data["runs"]
    assert_same(parallel, serial)
    assert serial["code"] == 2 and "skipped" in serial["err"] and "no readable history" in serial["err"]


@pytest.mark.parametrize("failure", ["die", "unpicklable", "raise"])
def test_a_log_no_worker_finished_is_redone_in_this_process(logs: Path, failure: str) -> None:
    """A worker killed, a result pickle refuses, an exception that does not unpickle: the same output regardless."""
    data = fresh([["reality", str(logs), "--json", "--jobs", "2"], ["reality", str(logs), "--json", "--jobs", "1"]],
                 worker_step=failure)
    parallel, serial = data["runs"]
    assert_same(parallel, serial)
    assert serial["code"] == 0 and len(json.loads(serial["out"])["sessions"]) == 4
    assert parallel["alive"] == []
    if failure == "die":  # the worker died on its first log: every result is this process's
        assert forked(parallel, data["parent"]) == set()


def test_ctrl_c_stops_the_workers_and_exits_130(logs: Path, tmp_path: Path) -> None:
    """Ctrl-C reaches the whole process group: the workers ignore it, the parent stops and reaps them."""
    started = tmp_path / "started"
    started.mkdir()
    spec = json.dumps({"runs": [["reality", str(logs), "--jobs", "3"]], "worker_step": f"hang:{started}"})
    proc = subprocess.Popen([sys.executable, str(HELPER), spec], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(started.iterdir())) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [int(p.name) for p in started.iterdir()]
        assert len(workers) == 2, "the workers never started"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-3000:]
    (run,) = json.loads(out.strip().splitlines()[-1])["runs"]
    # both workers had started their log; when the command returned they were stopped and reaped
    assert run["code"] == 130 and run["out"] == "" and sorted(run["started"]) == sorted(workers)
    assert run["alive"] == []


def test_the_real_sessions_print_the_same_with_two_workers_as_in_one_process() -> None:
    folder = need_shared(shared_dir() / "real_sessions")
    flags = [[], ["--json"], ["--ignore-usage"], ["--ignore-usage", "--json"], ["--briefings"],
             ["--briefings", "--json"]]
    runs = [["reality", str(folder), *f, "--jobs", "2"] for f in flags] + [["reality", str(folder), *f, "--jobs", "1"]
                                                                          for f in flags]
    data = fresh(runs)
    for p, s in zip(data["runs"][: len(flags)], data["runs"][len(flags):], strict=True):
        assert_same(p, s)
        assert p["code"] == 0 and len(forked(p, data["parent"])) == 1
    assert "14 automatic compactions; within ±0: 14" in data["runs"][len(flags)]["out"]


def test_map_in_processes_keeps_input_order_and_marks_what_failed() -> None:
    """Four processes: the three heaviest items go to the three workers for sure (one raises, one returns what
    pickle refuses); this process takes the lightest ones left, and an error of its own is marked the same."""
    code = """
import json, os, threading
from workbench.cli.parallel import WorkerFailed, last_workers, map_in_processes

def fn(x):
    if x in (0, 6):
        raise ValueError(f"item {x}")
    if x == 5:
        return threading.Lock()
    return (x * x, os.getpid())

out = map_in_processes(fn, list(range(8)), 4, weights=[0, 1, 2, 3, 4, 5, 6, 7])
print(json.dumps([o.reason if isinstance(o, WorkerFailed) else o for o in out]))
print(json.dumps({"pids": last_workers, "parent": os.getpid()}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results, pids = (json.loads(line) for line in proc.stdout.strip().splitlines()[-2:])
    assert [r[0] for r in results[1:5]] == [1, 4, 9, 16] and results[7][0] == 49
    assert results[0] == "ValueError: item 0" and results[6] == "ValueError: item 6" and "pickle" in results[5].lower()
    by, parent = pids["pids"], pids["parent"]
    assert by[7] == results[7][1] != parent  # a worker's, recorded as such
    assert all(by[i] == results[i][1] for i in range(1, 5)) and by[0] == by[5] == by[6] == parent


def test_a_process_where_polars_has_run_does_the_work_itself() -> None:
    """After a polars query its compute pool's threads exist here and not in a forked child, whose first query
    would wait on them forever: the command then does every log in this process."""
    code = """
import polars as pl
from workbench.cli.parallel import fork_unsafe_reason, worker_count
import workbench.cli.reality
print(fork_unsafe_reason(), worker_count(2, 5))
pl.DataFrame({"a": list(range(1000))}).group_by((pl.col("a") % 7).alias("k")).agg(pl.col("a").sum())
print(fork_unsafe_reason(), worker_count(2, 5))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    before, after = proc.stdout.strip().splitlines()[-2:]
    assert before == "None 2"
    assert after.startswith("native threads running: ") and "polars-" in after and after.endswith(" 1")


def test_in_a_threaded_process_the_command_does_not_fork(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    from workbench.cli import main, parallel

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert parallel.worker_count(None, 4) == 1 and "Python thread" in str(parallel.fork_unsafe_reason())
        parallel.last_workers.clear()
        assert main(["reality", str(logs), "--json", "--jobs", "2"]) == 0
    finally:
        stop.set()
        other.join()
    assert parallel.last_workers == []  # no pool
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 4


def test_jobs_must_be_a_positive_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit) as exit_info:
            main(["reality", "x.jsonl", "--jobs", bad])
        assert exit_info.value.code == 2
    assert "argument --jobs/--workers: " in capsys.readouterr().err


def test_when_no_worker_can_be_forked_this_process_does_every_item() -> None:
    code = """
import json, os
from workbench.cli.parallel import last_workers, map_in_processes

def refuse():
    raise BlockingIOError(11, "Resource temporarily unavailable")

os.fork = refuse
print(json.dumps({"out": map_in_processes(abs, [-3, -1, -2], 3, weights=[3, 1, 2]), "pids": last_workers,
                  "parent": os.getpid()}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["out"] == [3, 1, 2] and data["pids"] == [data["parent"]] * 3
