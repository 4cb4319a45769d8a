"""The benchmark rows that take minutes work: ``python -m pytest benchmarks/test_harness.py``.

Outside the unit suite (``testpaths`` is ``tests``), which keeps the quick checks (tests/test_benchmarks.py: the
replay rows of ``run.py --quick``, the naive reference, the reality rows without ../shared). Here: the browser rows
start ``streamlit run`` four times and Chromium for each (~1.5 min on 2 cores); the reality rows run
``workbench reality`` over ../shared/real_sessions in fresh processes (~1 min). They check the harness, not the
app or the command (tests/test_browser*.py and tests/test_reality*.py do). No timing is asserted: the targets are
the rows of ``python benchmarks/run.py``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_browser_benchmark_measures_both_waits() -> None:
    """`benchmarks/browser.py` serves the app, times a cold start and a slider move in Chromium."""
    spec = importlib.util.spec_from_file_location("bench_browser", HERE / "browser.py")
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


def test_reality_benchmark_times_the_command_beside_json_loads() -> None:
    """The reality rows: the first run in a fresh process and a later one, each against json.loads of the lines."""
    shared = Path(os.environ.get("WORKBENCH_SHARED") or HERE.parents[1] / "shared")
    if not (shared / "real_sessions").is_dir():
        pytest.skip(f"shared data not found: {shared / 'real_sessions'} (set WORKBENCH_SHARED)")
    proc = subprocess.run(
        [sys.executable, str(HERE / "run.py"), "--quick", "--only", "reality", "--runs", "1"],
        capture_output=True, text=True, timeout=600, cwd=HERE.parent,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "| `workbench reality` over ../shared/real_sessions, first run in a process" in out
    assert "| same command, a later run in the same process" in out
    assert "modules a run imports" in out and "CPU time instead of wall time" in out
    assert "skipped" not in out


def test_move_profile_splits_a_key_press_by_script_on_both_pages() -> None:
    """`benchmarks/move_profile.py` profiles a trigger move on our page and on the bare one-slider page, and finds
    plotly.js and Streamlit's frontend at work on each."""
    spec = importlib.util.spec_from_file_location("bench_move_profile", HERE / "move_profile.py")
    assert spec is not None and spec.loader is not None
    profile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(profile)
    if profile.B.chromium() is None:
        pytest.skip("Debian's chromium is not installed")
    found = profile.measure(moves=1)
    for page in ("bare", "ours"):
        (move,) = found[page]
        assert move["plotly.js"] > 0 and move["streamlit"] > 0, (page, move)
    assert "| ours - bare |" in profile.table(found)
