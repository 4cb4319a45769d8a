"""The browser benchmark's harness works: ``python -m pytest benchmarks/test_browser_benchmark.py``.

Outside the unit suite (``testpaths`` is ``tests``): it starts ``streamlit run`` four times and Chromium for each
(~1.5 min on 2 cores), and it checks the harness, not the app, which tests/test_browser*.py check in Chromium.
No timing is asserted; the targets are the ``browser_*`` rows of ``python benchmarks/run.py --only browser``.
"""

from __future__ import annotations

import importlib.util
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
