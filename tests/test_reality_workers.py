"""``workbench reality`` over many logs shares them between this process and workers forked from it: what it
prints, warns and raises is what the command in one process prints, warns and raises, in the logs' order."""

from __future__ import annotations

import json
import os
import sys

import pytest
from test_reality import claude_crossing

import workbench.cli.reality as reality_cli
from workbench.cli import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")


def _folder(tmp_path, count=5):
    """``count`` logs of different sizes (one with a corrupt line in the middle, warned of) and a file that is no
    history (skipped, with a note)."""
    for n in range(count):
        text = claude_crossing(first=150_000 + 1_000 * n).compact("auto", 167_700, "S." * (n + 1)).user("go").text()
        if n == 2:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[:3] + ['{"type": "user"}{"glued": 1}\n'] + lines[3:])
        (tmp_path / f"log{n}.jsonl").write_text(text + "\n" * n)
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    return tmp_path


def _run(capsys, *args):
    code = main(["reality", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("extra", [["--json"], [], ["--briefings"]])
def test_workers_print_and_warn_exactly_what_one_process_does(tmp_path, capsys, extra):
    folder = _folder(tmp_path)
    one = _run(capsys, folder, *extra, "--workers", "1")
    for workers in ("2", "4"):
        assert _run(capsys, folder, *extra, "--workers", workers) == one
    code, out, err = one
    assert code == 0
    assert err.index("log2.jsonl:4") < err.index("skipped") and "line skipped" in err  # in the logs' order
    if extra == ["--json"]:
        assert [s["file"] for s in json.loads(out)["sessions"]] == [f"log{n}.jsonl" for n in range(5)]


def test_a_named_file_that_is_no_history_fails_the_same_with_workers(tmp_path, capsys):
    folder = _folder(tmp_path, count=3)
    bad = folder / "bad.jsonl"
    bad.write_text("not json at all\n{}\n")
    args = (folder / "log0.jsonl", bad, folder / "log1.jsonl")
    one = _run(capsys, *args, "--workers", "1")
    assert one[0] == 2 and "bad.jsonl:" in one[2] and "unknown" in one[2]
    many = _run(capsys, *args, "--workers", "3")
    assert many == one, many[2]


def test_a_log_whose_worker_dies_is_followed_here(tmp_path, capsys, monkeypatch):
    """A worker killed mid-log (here every worker exits at once on its first log) costs no log: this process
    follows what the pool had and did not send, and says so for each."""
    folder = _folder(tmp_path, count=6)
    one = _run(capsys, folder, "--json", "--workers", "1")
    real = reality_cli._follow_one

    def dying(n):
        if reality_cli._IN_WORKER:
            os._exit(9)
        return real(n)

    monkeypatch.setattr(reality_cli, "_follow_one", dying)
    noted = []
    for _ in range(3):
        code, out, err = _run(capsys, folder, "--json", "--workers", "2")
        assert (code, out) == one[:2]
        notes = [line for line in err.splitlines() if "a worker ended before it sent" in line]
        assert [line for line in err.splitlines() if line not in notes] == one[2].splitlines()
        assert all(line.endswith(": followed here") and str(folder) in line for line in notes), notes
        assert len(notes) == len(set(notes))  # each log once
        noted += notes
    assert noted  # the pool took a log in at least one run (it takes the smallest while this process does the rest)


def test_an_error_in_a_worker_is_raised_in_the_logs_order_with_its_traceback(tmp_path, capsys, monkeypatch):
    folder = _folder(tmp_path, count=4)
    import workbench.analysis.real_logs.reality as reality

    def broken(history, **kwargs):
        raise RuntimeError(f"broken on {history.source_path}")

    monkeypatch.setattr(reality, "follow_log", broken)
    with pytest.raises(RuntimeError, match="broken on .*log0.jsonl"):  # the first log's, whoever followed it
        main(["reality", str(folder), "--workers", "2"])
    # what a worker returns for it: the error, with the traceback it would lose in the pickle as a note
    monkeypatch.setattr(reality_cli, "_JOB", (reality_cli.argparse.Namespace(
        preset=None, config=None, assignments=[], ignore_usage=False, briefings=False), [(folder / "log0.jsonl", True)]))
    monkeypatch.setattr(reality_cli, "_IN_WORKER", True)
    err, error, scores = reality_cli._follow_one(0)
    assert isinstance(error, RuntimeError) and scores is None
    assert "Traceback" in error.__notes__[0] and 'raise RuntimeError(f"broken on' in error.__notes__[0]


def test_the_pool_ends_with_no_thread_for_the_interpreters_exit_to_race():
    """``stop_pool`` (this command's and the sweeps') returns with the pool's manager thread ended and its wake-up
    pipe closed: a manager thread still running at exit closes that pipe while Python's exit hook writes to it
    ("Exception ignored ... Bad file descriptor" on stderr; the project's CI on 0524c52). Checked at once, where
    the race was: without the join this failed in 5 runs of 6."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from workbench.explore.pools import stop_pool

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    assert pool.submit(os.getpid).result() != os.getpid()
    manager, wakeup = pool._executor_manager_thread, pool._executor_manager_thread_wakeup
    stop_pool(pool)
    assert not manager.is_alive() and wakeup._closed


def test_worker_count_is_one_per_cpu_and_log_and_one_where_nothing_forks(monkeypatch):
    assert reality_cli.worker_count(8, 3) == 3
    assert reality_cli.worker_count(2, 11) == 2
    assert reality_cli.worker_count(None, 1) == 1
    assert reality_cli.worker_count(None, 100) == len(os.sched_getaffinity(0))
    monkeypatch.setattr(sys, "platform", "darwin")  # macOS: fork is unsafe there, spawn imports the engine again
    assert reality_cli.worker_count(4, 10) == 1


def test_workers_must_be_a_positive_whole_number(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["reality", str(tmp_path), "--workers", "0"])
    assert exit_.value.code == 2 and "at least 1, not 0" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [[], ["--ignore-usage", "--briefings"]])
def test_workers_fork_safely_after_polars_and_a_tokenizer_have_run_their_threads(tmp_path, extra):
    """The workers are forked from a process whose polars thread pool and tokenizer threads have run (as in a
    notebook, or after an earlier command): they use none of it, so the command ends, with the one-process output;
    with ``--ignore-usage`` each worker counts with the tokenizer itself. In a child process, under a time limit,
    so that a deadlock fails the test instead of hanging it."""
    import subprocess

    folder = _folder(tmp_path, count=4)
    script = (
        "import sys, polars as pl\n"
        "pl.DataFrame({'a': list(range(100_000)), 'b': [i % 7 for i in range(100_000)]})"
        ".group_by('b').agg(pl.col('a').sum())\n"
        "from workbench.history.readers import load_history\n"
        "from workbench.counting.tokens import CountCache\n"
        "CountCache().counts_for(load_history(sys.argv[3])).encoded('o200k_base')\n"
        "from workbench.cli import main\n"
        "sys.exit(main(['reality', sys.argv[1], '--json', '--workers', sys.argv[2], *sys.argv[4:]]))\n")
    runs = [subprocess.run([sys.executable, "-c", script, str(folder), workers, str(folder / "log3.jsonl"), *extra],
                           capture_output=True, text=True, timeout=120) for workers in ("1", "2")]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr[-2000:]
    assert runs[1].stdout == runs[0].stdout and runs[1].stderr == runs[0].stderr
    assert len(json.loads(runs[1].stdout)["sessions"]) == 4
