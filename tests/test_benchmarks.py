"""benchmarks/run.py works: a tiny run of the replay measure prints its table (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_quick_replay_benchmark_prints_a_table() -> None:
    """`run.py --quick --only replay` checks the naive replay against simulate and prints both rows."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--only", "replay", "--runs", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert out.startswith("Machine: ")
    assert "| replay of a 1,000-message history (tokens already counted) |" in out
    assert "| same replay | naive replay re-summing the context at every check" in out
    assert "| replay | 1k: " in out  # the growth table


def test_naive_replay_agrees_with_simulate() -> None:
    """The naive reference computes the same run as the engine, compressions and timeline included."""
    spec = importlib.util.spec_from_file_location("bench_naive", ROOT / "benchmarks" / "naive.py")
    assert spec is not None and spec.loader is not None
    naive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(naive)

    from workbench.counting.tokens import CountCache
    from workbench.history.samples.generate import generate_session
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    history = generate_session(3, turns=60, tool_heavy=0.4)
    cases = (
        Knobs(context_window_tokens=20_000),
        Knobs(context_window_tokens=30_000, latency_steps=2),
        Knobs(strategy="staged", context_window_tokens=20_000),  # elisions change what is in context
    )
    for knobs in cases:
        cache = CountCache()
        run = simulate(history, knobs, cache=cache)
        assert run.metrics.compressions > 0
        assert naive.same_run(run, naive.naive_simulate(history, knobs, cache=cache))


@pytest.mark.browser
def test_browser_benchmark_measures_both_waits() -> None:
    """`benchmarks/browser.py` serves the app, times a cold start and a slider move in Chromium (no timing asserted)."""
    spec = importlib.util.spec_from_file_location("bench_browser", ROOT / "benchmarks" / "browser.py")
    assert spec is not None and spec.loader is not None
    browser = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = browser  # its dataclasses look their module up
    spec.loader.exec_module(browser)
    if browser.chromium() is None:
        pytest.skip("Debian's chromium is not installed")
    found = browser.measure(runs=1, moves=2)
    assert len(found.cold) == len(found.floor) == 1 and len(found.slider) == len(found.settled) == 2
    assert len(found.returning) == len(found.returning_floor) == 1  # the cache-filling first visits not counted
    assert all(s <= w for s, w in zip(found.slider, found.settled, strict=True))
    assert len(found.slider_floor) == 2  # the bare one-slider page, the slider's reference


def _reality_table(env: dict[str, str]) -> str:
    import os

    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--only", "reality", "--runs", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
def test_reality_benchmark_times_the_command_beside_json_loads() -> None:
    """The reality rows: the first run in a fresh process and a later one, each against json.loads of the lines, and
    the same with ``--jobs 1``."""
    from conftest import need_shared, shared_dir

    need_shared(shared_dir() / "real_sessions")
    out = _reality_table({})
    assert "| `workbench reality` over ../shared/real_sessions, first run in a process" in out
    assert "| same command, a later run in the same process" in out
    assert "modules a run imports" in out and "CPU time (the command's process and its workers)" in out
    assert "| for comparison: the first run with `--jobs 1`" in out  # the serial figure beside the default
    assert "forked workers per run: 0 " not in out or "usable CPU (1 here)" in out  # a pool wherever it can be
    assert "skipped" not in out


def test_reality_benchmark_skips_without_the_shared_logs(tmp_path: Path) -> None:
    """Without ../shared the rows say why they were not measured, and the script still succeeds."""
    out = _reality_table({"WORKBENCH_SHARED": str(tmp_path / "missing")})
    assert f"skipped: {tmp_path / 'missing' / 'real_sessions'} not found" in out
