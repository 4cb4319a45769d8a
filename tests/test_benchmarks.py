"""benchmarks/run.py works: a tiny run of the replay measure prints its table (no timing is asserted).

The full checks of the browser and reality rows (a fresh `streamlit run` per cold start; fresh processes running
`workbench reality` over ../shared; ~1.5 and ~1 min) are `python -m pytest benchmarks/test_harness.py`, outside the
unit suite; the app in Chromium is tests/test_browser*.py's, `workbench reality` tests/test_reality*.py's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


@pytest.mark.slow
def test_quick_replay_benchmark_prints_a_table() -> None:
    """`run.py --quick --only replay` checks the naive replay against simulate and prints the replay's rows: against
    `json.loads`, and its growth per preset."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--only", "replay", "--runs", "1"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert out.startswith("Machine: ")
    assert "| replay of a 1,000-message history (tokens already counted) |" in out
    for label in ("default knobs", "`claude_code` preset", "`codex_cli` preset"):
        assert f"| replay time per message at 2,000 messages, {label} | the same at 500 messages" in out
    assert "| replay | 1k: " in out  # the growth table


def test_naive_replay_agrees_with_simulate() -> None:
    """The naive reference computes the same run as the engine, compressions and timeline included."""
    spec = importlib.util.spec_from_file_location("bench_naive", REPO / "benchmarks" / "naive.py")
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


def _reality_table(env: dict[str, str]) -> str:
    import os

    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--only", "reality", "--runs", "1"],
        capture_output=True, text=True, timeout=300, cwd=REPO, env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
def test_reality_benchmark_skips_without_the_shared_logs(tmp_path: Path) -> None:
    """Without ../shared the rows say why they were not measured, and the script still succeeds."""
    out = _reality_table({"WORKBENCH_SHARED": str(tmp_path / "missing")})
    assert f"skipped: {tmp_path / 'missing' / 'real_sessions'} not found" in out
