"""The linear fact matcher finds exactly what checking every fact against every message finds.

``workbench probe`` was quadratic (17.6M ``fact_found`` calls at 30k messages, issue 12 item 16); the
anchors of ``workbench.analysis.fact_probes.fact_matcher`` skip only pairs that cannot match. These tests compare
against the brute force on shipped samples, real transcripts (when ../shared is there) and texts
built to sit on the anchors' edge cases. Speed is measured in benchmarks/, not here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, need_shared, shared_dir

from workbench.analysis.fact_probes.fact_matcher import FactMatcher, runs_of
from workbench.analysis.fact_probes.fact_rules import word_set
from workbench.analysis.fact_probes.facts import Fact, extract_facts, fact_found
from workbench.analysis.fact_probes.probes import fact_index
from workbench.counting.encodings import render_for_tokenizer
from workbench.history.readers import load_history


def _brute(history):
    facts = extract_facts(history)
    texts = [render_for_tokenizer(m).lower() for m in history.messages]
    words = [word_set(t) for t in texts]  # once per text, not once per (fact, text): the same sets, ~2x faster
    return {(k, j) for j, t in enumerate(texts) for k, f in enumerate(facts)
            if f.index <= j and fact_found(f, t, words[j])}


def _sparse(history):
    index = fact_index(history)
    return {(int(k), j) for j in range(len(history.messages)) for k in index.mentions_of(j)}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["short.jsonl", "tool_heavy.jsonl"])
def test_same_mentions_as_brute_force_on_the_samples(name):
    history = load_history(REPO / "sample_histories" / name)
    assert _sparse(history) == _brute(history)


@pytest.mark.slow
def test_same_mentions_as_brute_force_on_real_transcripts():
    folder = need_shared(shared_dir() / "real_histories")
    paths = sorted(Path(folder).glob("*.jsonl"))[:6]
    assert paths
    for path in paths:
        history = load_history(path)
        assert _sparse(history) == _brute(history), path.name


@pytest.mark.parametrize(
    ("fact", "text", "found"),
    [
        (Fact(kind="artifact", key="a.py", index=0, needles=("a.py",), path_like=True), "see data.py", False),
        (Fact(kind="artifact", key="a.py", index=0, needles=("a.py",), path_like=True), "see ./a.py now", True),
        (Fact(kind="artifact", key="x", index=0, needles=("app/x.ts",), path_like=True), "/src/app/x.ts:3", True),
        (Fact(kind="link", key="u", index=0, needles=("https://ex.com/a",)), "go to https://ex.com/abc", True),
        (Fact(kind="error", key="e", index=0, needles=("foo bar",)), "xfoo barx", True),  # no exact run: brute
        (Fact(kind="error", key="e", index=0, needles=("é-ü",)), "café-über", True),
        (Fact(kind="decision", key="d", index=0, words=("numpy", "pandas", "polars", "arrow", "duckdb")),
         "we use polars with arrow and duckdb", True),
        (Fact(kind="decision", key="d", index=0, words=("numpy", "pandas", "polars", "arrow", "duckdb")),
         "we use polars with arrow", False),
    ],
)
def test_anchors_never_miss_a_match(fact, text, found):
    """Edge cases of the anchor rule (path boundaries, runs at a needle's ends, unicode, word share)."""
    low = text.lower()
    assert fact_found(fact, low, word_set(low)) is found
    assert (list(FactMatcher([fact]).found_in(low, word_set(low))) == [0]) is found


def test_runs_are_maximal_alphanumeric_runs():
    assert runs_of("src/app_x.ts:3 café") == {"src", "app", "x", "ts", "3", "café"}


@pytest.mark.slow
def test_briefings_line_by_line_find_what_the_whole_text_finds(long_history):
    """``found_in_lines`` (each distinct line matched once) agrees with ``fact_found`` on the whole briefing."""
    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    history = long_history
    index = fact_index(history)
    run = simulate(history, Knobs(context_window_tokens=32_000), ExtractiveBriefer())
    texts = list(dict.fromkeys(c.record.text for c in run.compressions if c.record.text))
    assert len(texts) > 100
    for text in texts[::50] + texts[-1:]:  # the brute force costs ~1 s a briefing here
        low = text.lower()
        words = word_set(low)
        brute = [k for k, f in enumerate(index.facts) if fact_found(f, low, words)]
        assert index.matcher.found_in_lines(low).tolist() == brute
        assert index.matcher.found_in_lines(low).tolist() == brute  # again, from the line cache


@pytest.mark.parametrize("text", [
    "polars\narrow and\nduckdb",  # the words of one fact on three lines
    "see\n./a.py\n",  # a path alone on a line: the newline is a path boundary
    "x/a.py\ndata.py",
    "https://ex.com/a\n",
    "",
])
def test_lines_edge_cases(text):
    facts = [
        Fact(kind="decision", key="d", index=0, words=("numpy", "pandas", "polars", "arrow", "duckdb")),
        Fact(kind="artifact", key="a.py", index=0, needles=("a.py",), path_like=True),
        Fact(kind="link", key="u", index=0, needles=("https://ex.com/a",)),
        Fact(kind="error", key="e", index=0, needles=("foo bar",)),
    ]
    matcher = FactMatcher(facts)
    brute = [k for k, f in enumerate(facts) if fact_found(f, text, word_set(text))]
    assert matcher.found_in_lines(text).tolist() == brute
    assert matcher.found_in(text, word_set(text)).tolist() == brute
