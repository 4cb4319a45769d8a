"""Sweeps: knob sets × histories → one row per run, on any executor, exported to parquet and CSV."""

from __future__ import annotations

import dataclasses
import importlib.util
import time

import polars as pl
import pytest
from real_histories import real_history_paths

from workbench.analysis.fact_probes.probes import PROBE_COLUMNS
from workbench.cli import main
from workbench.explore import sweep as sweep_module
from workbench.explore.sweep import (
    expand_history_paths,
    knob_grid,
    knob_sample,
    knobs_of_row,
    read_sweep,
    sweep,
    sweep_metric_columns,
    write_sweep,
)
from workbench.history.model import History, Message, text_part
from workbench.history.writers import dump_canonical_jsonl
from workbench.knobs import Knobs
from workbench.replay import Metrics, simulate

KNOB_COLUMNS = [f.name for f in dataclasses.fields(Knobs)]
METRIC_COLUMNS = [f.name for f in dataclasses.fields(Metrics)]


def small_history(name: str, turns: int = 40, chars: int = 3_000) -> History:
    msgs = tuple(
        Message(id=f"{name}{i}", role="user" if i % 2 == 0 else "assistant", parts=(text_part(f"{i} " + "x" * chars),))
        for i in range(turns)
    )
    return History(id=name, messages=msgs)


@pytest.fixture
def history_files(tmp_path):
    paths = []
    for name, turns in (("alpha", 40), ("beta", 70)):
        paths.append(dump_canonical_jsonl(small_history(name, turns), tmp_path / f"{name}.jsonl"))
    return paths


# -- knob sets -------------------------------------------------------------------------------------


def test_a_grid_has_every_combination_over_the_base():
    base = Knobs(context_window_tokens=32_000)
    grid = knob_grid({"trigger_ratio": [0.5, 0.7], "kept_budget_ratio": [0.1, 0.2, 0.3]}, base=base)
    assert [(k.trigger_ratio, k.kept_budget_ratio) for k in grid] == [
        (0.5, 0.1), (0.5, 0.2), (0.5, 0.3), (0.7, 0.1), (0.7, 0.2), (0.7, 0.3)]
    assert {k.context_window_tokens for k in grid} == {32_000}


def test_a_grid_refuses_an_out_of_range_value_by_name():
    with pytest.raises(ValueError, match="trigger_ratio"):
        knob_grid({"trigger_ratio": [0.5, 1.5]})


def test_a_random_sample_is_seeded_in_range_and_whole_for_int_knobs():
    space = {"trigger_ratio": (0.3, 0.9), "target_briefing_chars": (1_000, 40_000), "check_point": ["message", "step"]}
    a = knob_sample(space, 50, seed=7)
    assert a == knob_sample(space, 50, seed=7)
    assert a != knob_sample(space, 50, seed=8)
    assert all(0.3 <= k.trigger_ratio <= 0.9 for k in a)
    assert all(isinstance(k.target_briefing_chars, int) for k in a)
    assert {k.check_point for k in a} == {"message", "step"}


# -- the sweep -------------------------------------------------------------------------------------


def test_each_row_is_one_run_with_its_knobs_and_every_metric(history_files):
    """A row carries config, history, all knobs and all metrics, equal to a direct replay."""
    from workbench.history.readers import load_history

    knobs = knob_grid({"trigger_ratio": [0.4, 0.6]}, base=Knobs(context_window_tokens=8_000))
    frame = sweep(history_files, knobs, workers=1)
    assert frame.height == 4
    assert {"config", "history", "history_path", *KNOB_COLUMNS, *METRIC_COLUMNS} <= set(frame.columns)
    assert frame.select("config", "history").rows() == [(0, "alpha"), (0, "beta"), (1, "alpha"), (1, "beta")]
    row = frame.row(3, named=True)
    direct = simulate(load_history(history_files[1]), knobs[1]).metrics.to_dict()
    assert {k: row[k] for k in direct} == direct
    assert knobs_of_row(row) == knobs[1]


def test_probes_add_retention_columns(history_files):
    frame = sweep(history_files, [Knobs(context_window_tokens=8_000)], workers=1, probes=True)
    assert set(PROBE_COLUMNS) <= set(frame.columns)
    assert set(PROBE_COLUMNS) <= set(sweep_metric_columns(frame))


def test_in_memory_histories_are_accepted():
    frame = sweep([small_history("mem")], [Knobs(context_window_tokens=8_000)], workers=1)
    assert frame["history"].to_list() == ["mem"]
    assert frame["history_path"].to_list() == [None]


def test_a_worker_loads_each_history_once_however_many_chunks(history_files, monkeypatch):
    """Tasks carry paths; the worker keeps what it loaded, so chunking costs no re-reads."""
    import workbench.history.readers as readers

    calls: list[str] = []
    real = readers.load_history
    monkeypatch.setattr(readers, "load_history", lambda p, **kw: calls.append(str(p)) or real(p, **kw))
    monkeypatch.setattr(sweep_module, "_WORKER_HISTORIES", {})
    knobs = knob_grid({"trigger_ratio": [0.3, 0.4, 0.5, 0.6, 0.7]}, base=Knobs(context_window_tokens=8_000))
    frame = sweep(history_files, knobs, workers=1, chunk_size=1)
    assert frame.height == 10
    assert sorted(calls) == sorted(str(p) for p in history_files)


def test_progress_counts_runs_up_to_the_total(history_files):
    seen: list[tuple[int, int]] = []
    sweep(history_files, knob_grid({"trigger_ratio": [0.4, 0.5, 0.6]}), workers=1, chunk_size=1,
          progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_process_pool_and_inline_give_the_same_rows(history_files):
    knobs = knob_grid({"trigger_ratio": [0.4, 0.6], "kept_budget_ratio": [0.1, 0.3]},
                      base=Knobs(context_window_tokens=8_000))
    inline = sweep(history_files, knobs, workers=1).drop("replay_ms")
    pooled = sweep(history_files, knobs, workers=2).drop("replay_ms")
    assert inline.equals(pooled)


def test_parquet_and_csv_round_trip(history_files, tmp_path):
    frame = sweep(history_files, knob_grid({"trigger_ratio": [0.4, 0.6]}), workers=1, probes=True)
    back = read_sweep(write_sweep(frame, tmp_path / "s.parquet"))
    assert back.equals(frame)
    csv = read_sweep(write_sweep(frame, tmp_path / "s.csv"))
    assert csv.shape == frame.shape
    assert csv["tokens_per_task"].to_list() == frame["tokens_per_task"].to_list()
    with pytest.raises(ValueError, match=r"\.parquet or \.csv"):
        write_sweep(frame, tmp_path / "s.xlsx")


def test_folders_expand_to_their_history_files(tmp_path, history_files):
    (tmp_path / "README.md").write_text("not a history")
    assert expand_history_paths([tmp_path]) == sorted(history_files)
    with pytest.raises(FileNotFoundError):
        expand_history_paths([tmp_path / "missing.jsonl"])


@pytest.mark.slow
def test_a_thousand_runs_over_the_real_histories_with_two_processes(tmp_path):
    """>= 1,000 replays (with probes) on two processes report their progress, and the parquet loads (their speed:
    benchmarks/run.py's ``sweep`` row)."""
    paths = real_history_paths()
    knobs = knob_sample({"trigger_ratio": (0.3, 0.9), "kept_budget_ratio": (0.05, 0.4),
                         "context_window_tokens": [32_000, 128_000, 200_000]}, 72, seed=3)
    seen: list[int] = []
    frame = sweep(paths, knobs, workers=2, probes=True, progress=lambda d, t: seen.append(d))
    assert frame.height == len(paths) * 72 >= 1_000
    assert seen[-1] == frame.height and len(seen) > 2
    out = write_sweep(frame, tmp_path / "sweep.parquet")
    back = pl.read_parquet(out)
    assert back.shape == frame.shape
    assert back["history"].n_unique() == len(paths)


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed not installed (pip install 'compaction-workbench[dask]')")
def test_a_dask_cluster_runs_the_sweep_through_its_executor(history_files):
    """client.get_executor() is a concurrent.futures executor: the same rows come back."""
    from distributed import Client, LocalCluster

    knobs = knob_grid({"trigger_ratio": [0.4, 0.6]}, base=Knobs(context_window_tokens=8_000))
    expected = sweep(history_files, knobs, workers=1).drop("replay_ms")
    with LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        seen: list[int] = []
        frame = sweep(history_files, knobs, executor=client.get_executor(), progress=lambda d, t: seen.append(d))
    assert frame.drop("replay_ms").equals(expected)
    assert seen[-1] == 4


# -- the command line -----------------------------------------------------------------------------


def test_cli_sweep_writes_parquet_and_draws_progress(history_files, tmp_path, capsys):
    out = tmp_path / "grid.parquet"
    code = main(["sweep", *map(str, history_files), "--set", "context_window_tokens=8000",
                 "--grid", "trigger_ratio=0.4,0.6", "--grid", "kept_budget_ratio=0.1,0.2",
                 "--workers", "1", "--probes", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    assert "8 runs (4 knob sets × 2 histories)" in captured.out
    assert "8/8 runs" in captured.err
    frame = pl.read_parquet(out)
    assert frame.height == 8 and "retention" in frame.columns


def test_cli_random_sample_over_presets_to_csv(history_files, tmp_path, capsys):
    out = tmp_path / "sample.csv"
    code = main(["sweep", *map(str, history_files), "--presets", "all", "--random", "trigger_ratio=0.3:0.8",
                 "--samples", "3", "--workers", "1", "--no-progress", "--out", str(out)])
    assert code == 0
    from workbench.presets import list_preset_names

    assert pl.read_csv(out).height == 2 * 3 * len(list_preset_names())
    assert capsys.readouterr().err == ""


def test_cli_refuses_an_unknown_output_format(history_files, tmp_path, capsys):
    code = main(["sweep", str(history_files[0]), "--out", str(tmp_path / "x.txt"), "--workers", "1"])
    assert code == 2
    assert "use a .parquet or .csv file" in capsys.readouterr().err


# -- histories shipped as bytes (a cluster's workers have no copy of the files) ----------------------------------------


def test_a_shipped_history_gives_the_rows_of_its_path_and_is_loaded_from_its_bytes_once(tmp_path, monkeypatch):
    """A ShippedHistory's task reads the bytes that came with it (here gzipped), keyed by their hash: the rows are
    the path's, and the file is never opened by the worker (it is gone before the sweep)."""
    import gzip
    import hashlib

    from workbench.explore.sweep import ShippedHistory, worker_loads

    plain = dump_canonical_jsonl(small_history("gamma", 60), tmp_path / "gamma.jsonl")
    packed = tmp_path / "gamma.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    knobs = knob_grid({"trigger_ratio": [0.3, 0.5, 0.7]}, base=Knobs(context_window_tokens=8_000))
    expected = sweep([packed], knobs, workers=1)
    data = packed.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    moved = tmp_path / "elsewhere.gz"
    packed.rename(moved)  # the worker cannot read the path: only the bytes
    monkeypatch.setattr(sweep_module, "_WORKER_HISTORIES", {})
    monkeypatch.setattr(sweep_module, "_WORKER_LOADS", sweep_module.Counter())
    shipped = ShippedHistory(path=str(packed), digest=digest, data=data)
    frame = sweep([shipped], knobs, workers=1, chunk_size=1)
    assert frame.drop("replay_ms").equals(expected.drop("replay_ms"))
    assert worker_loads() == {f"sha256:{digest}": 1}  # three tasks, one load


def test_a_shipped_history_that_is_not_one_fails_as_its_file_would(tmp_path):
    from workbench.history.errors import HistoryError
    from workbench.history.readers import load_history, load_history_bytes

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"hello\nthis is not a history\n")
    with pytest.raises(HistoryError) as from_path:
        load_history(bad)
    with pytest.raises(HistoryError) as from_bytes:
        load_history_bytes(bad.read_bytes(), source=str(bad))
    assert str(from_bytes.value) == str(from_path.value)


def test_folders_expand_to_gzipped_logs_too(tmp_path):
    (tmp_path / "a.jsonl.gz").write_bytes(b"")
    (tmp_path / "b.jsonl").write_bytes(b"")
    (tmp_path / "notes.txt.gz").write_bytes(b"")
    assert [p.name for p in expand_history_paths([tmp_path])] == ["a.jsonl.gz", "b.jsonl"]


def test_ctrl_c_in_this_process_share_kills_the_pool_it_started(history_files, monkeypatch):
    """This process runs tasks too: Ctrl-C there cancels the queued tasks and kills the workers, not waits for them."""
    import workbench.replay as replay

    pools = []
    real_pool = sweep_module.default_executor

    def recorded(workers=None):
        pools.append(real_pool(workers))
        return pools[-1]

    workers = []

    def interrupted(*args, **kwargs):
        deadline = time.monotonic() + 60
        while not pools[0]._processes and time.monotonic() < deadline:  # Ctrl-C once the worker is up
            time.sleep(0.05)
        workers.extend(pools[0]._processes.values())
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_module, "default_executor", recorded)
    monkeypatch.setattr(replay, "simulate", interrupted)  # in this process only: the workers import their own
    knobs = knob_grid({"trigger_ratio": [0.3, 0.4, 0.5, 0.6]}, base=Knobs(context_window_tokens=8_000))
    with pytest.raises(KeyboardInterrupt):
        sweep(history_files, knobs, workers=2, chunk_size=1)
    assert len(pools) == 1 and len(workers) == 1  # workers=2: this process and one more
    assert not workers[0].is_alive()


def test_a_short_sweep_is_done_here_while_the_pool_starts(history_files):
    """The pool's tasks are taken back when this process runs out of its own before the pool finished any."""
    knobs = knob_grid({"trigger_ratio": [0.4, 0.6]}, base=Knobs(context_window_tokens=8_000))
    here = sweep(history_files, knobs, workers=1)
    shared = sweep(history_files, knobs, workers=2)
    assert shared.drop("replay_ms").equals(here.drop("replay_ms"))
