"""Real transcripts and the shipped samples replay under stagewise's defaults at small and large windows."""

from __future__ import annotations

import json

import pytest
from conftest import REPO
from real_histories import real_history_paths

from workbench import Knobs, load_history, simulate
from workbench.cli import main

SAMPLES = REPO / "sample_histories"


@pytest.mark.parametrize("window", [32_000, 200_000], ids=["32k", "200k"])
def test_every_real_history_replays(window):
    for path in real_history_paths():
        history = load_history(path)
        run = simulate(history, Knobs(context_window_tokens=window))
        m = run.metrics
        assert m.messages == len(history) > 0, path.name
        assert m.peak_tokens <= m.baseline_peak_tokens, path.name
        for c in run.compressions:
            assert 0 < c.boundary <= c.index_started, path.name
            if c.status == "landed":
                assert c.tokens_after < c.tokens_before, path.name


def test_small_windows_compress_more_often_than_large_ones():
    small = large = 0
    for path in real_history_paths():
        history = load_history(path)
        small += simulate(history, Knobs(context_window_tokens=32_000)).metrics.compressions
        large += simulate(history, Knobs(context_window_tokens=200_000)).metrics.compressions
    assert small > large > 0


def test_long_sample_chains_ten_compressions_with_visible_growth(capsys):
    """The long sample's JSON shows ≥ 10 chained compressions, each carrying the previous briefing's size."""
    assert main(["simulate", str(SAMPLES / "long.jsonl"), "--json", "--no-timeline"]) == 0
    data = json.loads(capsys.readouterr().out)
    chain = data["compressions"]
    assert len(chain) >= 10
    assert [c["chain_index"] for c in chain] == list(range(1, len(chain) + 1))
    sizes = [c["briefing_chars"] for c in chain]
    assert sizes[1] > sizes[0] and sizes[2] > sizes[1]  # grows while there is room
    assert [c["previous_chars"] for c in chain[1:]] == sizes[:-1]  # each link reads the previous briefing
    assert {c["bucket"] for c in chain} >= {"none", "lt60", "gte85"}
    assert max(sizes) <= data["knobs"]["target_briefing_chars"] * data["knobs"]["sim_overshoot_ratio"] + 1


def test_sample_histories_all_load(long_history):
    names = sorted(p.name for p in SAMPLES.glob("*.jsonl"))
    assert names == ["claude_code.jsonl", "long.jsonl", "short.jsonl", "tool_heavy.jsonl"]
    assert len(long_history) >= 2_000
