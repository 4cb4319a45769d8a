"""Post-compaction probes: the facts of a scripted session are pinned, then traced through compressions."""

from __future__ import annotations

import math

import polars as pl
import pytest
from conftest import REPO
from real_histories import real_history_paths

from workbench.analysis.fact_probes.probes import (
    PROBE_COLUMNS,
    PROBES,
    extract_facts,
    fact_found,
    fact_index,
    probe_briefer,
    probe_run,
    probe_summary,
)
from workbench.briefing.base import BriefRecord, BriefRequest
from workbench.briefing.simulated import SimulatedBriefer
from workbench.history.model import History, Message, text_part, tool_call_part, tool_result_part
from workbench.knobs import Knobs
from workbench.replay import simulate


def _user(i: int, text: str) -> Message:
    return Message(id=f"m{i:02d}", role="user", parts=(text_part(text),))


def _call(i: int, name: str, inp: dict, *, text: str | None = None, state: str = "output-available",
          error: str | None = None) -> Message:
    parts = (text_part(text),) if text else ()
    call = tool_call_part(name, f"c{i}", inp, state=state, error_text=error)
    return Message(id=f"m{i:02d}", role="assistant", parts=(*parts, call))


def _result(i: int, name: str, output: str) -> Message:
    return Message(id=f"m{i:02d}", role="tool", parts=(tool_result_part(name, f"c{i - 1}", output),))


def scripted_session(padding: int = 0) -> History:
    """A short coding session with planted facts, then ``padding`` filler turns that carry none."""
    msgs = [
        _user(0, "Please fix the login bug in `src/auth/login.py`. We decided to use JWT tokens. "
                 "Never commit secrets to the repo. See https://example.com/docs/auth and [the spec](docs/spec.md)."),
        _call(1, "Read", {"file_path": "src/auth/login.py"}, text="I'll read the login module first."),
        _result(2, "Read", "def login(user):\n    return session[user]\n"),
        _call(3, "Bash", {"command": "pytest tests/test_login.py -q"}),
        _result(4, "Bash", "Traceback (most recent call last):\n  File \"src/auth/login.py\", line 2, in login\n"
                           "KeyError: 'token'\n"),
        _call(5, "Edit", {"file_path": "src/auth/login.py", "old_string": "session[user]", "new_string": "x"}),
        _result(6, "Edit", "The file has been updated."),
        _call(7, "Write", {"file_path": "src/auth/tokens.py", "content": "import jwt\n"}),
        _result(8, "Write", "File created successfully"),
        _call(9, "exec_command", {"cmd": "npm run build"}),
        _result(10, "exec_command", "Process exited with code 2\nOutput:\nerror TS2304: Cannot find name 'jwt'.\n"),
        _call(11, "delete_file", {"path": "src/auth/old_session.py"}, state="output-error",
              error="EACCES: permission denied, unlink 'src/auth/old_session.py'"),
        _user(12, "Don't change the public API. Add a test for token refresh."),
        Message(id="m13", role="assistant",
                parts=(text_part("Next I will add `tests/test_refresh.py` and run the whole suite."),)),
    ]
    for k in range(padding):
        i = len(msgs)
        role = "user" if k % 2 == 0 else "assistant"
        msgs.append(Message(id=f"m{i:02d}", role=role, parts=(text_part(f"filler turn {k} " + "lorem " * 300),)))
    return History(id="scripted", messages=tuple(msgs))


# -- extraction: every planted fact, named ---------------------------------------------------------

EXPECTED_FACTS = [
    ("artifact", "src/auth/login.py", "edited,read,mentioned", 0),
    ("decision", "We decided to use JWT tokens.", "user", 0),
    ("decision", "Never commit secrets to the repo.", "user", 0),
    ("link", "docs/spec.md", "markdown", 0),
    ("link", "https://example.com/docs/auth", "url", 0),
    ("next_step", "Please fix the login bug in `src/auth/login.py`. We decided to use JWT tokens. Never commit "
                  "secrets to the repo. See https://example.com/docs/auth and [the spec](docs/spec.md).", "request", 0),
    ("next_step", "I'll read the login module first.", "plan", 1),
    ("artifact", "tests/test_login.py", "read", 3),
    ("error", "KeyError: 'token'", "Bash", 4),
    ("artifact", "src/auth/tokens.py", "created", 7),
    ("error", "error TS2304: Cannot find name 'jwt'.", "exec_command", 10),
    ("artifact", "src/auth/old_session.py", "deleted", 11),
    ("error", "EACCES: permission denied, unlink 'src/auth/old_session.py'", "delete_file", 11),
    ("decision", "Don't change the public API.", "user", 12),
    ("next_step", "Don't change the public API. Add a test for token refresh.", "request", 12),
    ("artifact", "tests/test_refresh.py", "mentioned", 13),
    ("next_step", "Next I will add `tests/test_refresh.py` and run the whole suite.", "plan", 13),
]


def test_the_scripted_session_yields_exactly_the_planted_facts():
    """Each file path, decision, error, link and next step of the script is extracted once, in order."""
    got = [(f.kind, f.key, f.detail, f.index) for f in extract_facts(scripted_session())]
    assert got == EXPECTED_FACTS


def test_filler_turns_add_no_facts_but_requests():
    """Padding prose without cues or paths adds only requests (and no artifacts, decisions or errors)."""
    facts = extract_facts(scripted_session(padding=6))
    extra = [f for f in facts if f.index >= 14]
    assert {f.kind for f in extra} == {"next_step"}


def test_every_planted_file_of_the_sample_history_is_an_artifact():
    """sample_histories/short.jsonl lists its planted facts in its header: every file is found."""

    from workbench.history.readers import load_history

    path = REPO / "sample_histories" / "short.jsonl"
    history = load_history(path)
    artifacts = {f.key for f in extract_facts(history) if f.kind == "artifact"}
    planted = {f["text"] for f in history.meta["facts"] if f["kind"] == "file"}
    assert planted and planted <= artifacts


@pytest.mark.parametrize(
    ("text", "needle", "found"),
    [
        ("see /repo/src/auth/login.py for details", "auth/login.py", True),
        ("the module data.py changed", "a.py", False),
        ("a.py was renamed", "a.py", True),
        ("src/auth/login.pyc is a cache", "src/auth/login.py", False),
    ],
    ids=["tail-inside-longer-path", "not-inside-a-name", "at-start", "not-a-prefix-of-another-file"],
)
def test_paths_match_on_path_boundaries(text, needle, found):
    """A path counts as present only where it stands as a whole path or a trailing part of one."""
    from workbench.analysis.fact_probes.probes import Fact

    fact = Fact(kind="artifact", key=needle, index=0, needles=(needle,), path_like=True)
    assert fact_found(fact, text.lower()) is found


def test_a_paraphrased_decision_counts_when_most_of_its_words_are_there():
    """Decisions survive paraphrase: 60% of their content words is enough, a bare topic is not."""
    fact = next(f for f in extract_facts(scripted_session()) if f.key == "Never commit secrets to the repo.")
    assert fact_found(fact, "the user said: secrets must never be committed to the repo.".lower()) is True
    assert fact_found(fact, "the repo has secrets".lower()) is False


# -- retention through compressions --------------------------------------------------------------

SMALL = Knobs(context_window_tokens=4_000, trigger_ratio=0.6, kept_budget_ratio=0.1, min_kept_messages=2,
              target_briefing_chars=2_000)


class CannedBriefer:
    """Writes the same briefing every time; records the requests it saw."""

    name = "canned"

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[BriefRequest] = []

    def __call__(self, request: BriefRequest) -> BriefRecord:
        self.requests.append(request)
        n = len(self.text)
        return BriefRecord(text=self.text, chars=n, tokens=math.ceil(n / 4), model="canned")


def test_the_first_compression_folds_the_scripted_facts():
    """With small filler turns the first compression's boundary lies after all planted facts."""
    history = scripted_session(padding=8)
    run = simulate(history, SMALL)
    first = next(c for c in run.compressions if c.status == "landed")
    assert first.boundary >= 14


def test_a_briefing_keeps_exactly_the_facts_it_names():
    """in_briefing is true for the facts the briefing text names and false for the others."""
    history = scripted_session(padding=8)
    briefer = CannedBriefer("## Files\n[](path:src/auth/login.py) was edited; the test run hit KeyError: 'token'.\n"
                            "## Decisions\nThe user decided to use JWT tokens.")
    report = probe_run(simulate(history, SMALL, briefer), history)
    first = report.frame.filter(pl.col("chain_index") == 1)
    kept = set(first.filter(pl.col("in_briefing"))["key"].to_list())
    assert kept == {"src/auth/login.py", "KeyError: 'token'", "We decided to use JWT tokens."}


def test_the_simulated_briefer_retains_nothing_so_folded_facts_are_at_risk():
    """No briefing text: every fact met only in the folded span is at risk; retained == not at risk."""
    history = scripted_session(padding=8)
    report = probe_run(simulate(history, SMALL, SimulatedBriefer()), history)
    frame = report.frame
    assert frame.height > 0
    assert not frame["in_briefing"].any()
    assert (frame["at_risk"] == ~frame["retained"]).all()
    first = frame.filter(pl.col("chain_index") == 1)
    assert set(first.filter(pl.col("at_risk"))["key"]) >= {"src/auth/tokens.py", "Don't change the public API."}


def test_a_pinned_first_message_keeps_its_facts():
    """Facts of a pinned message stay in context: in_pinned, retained, not at risk."""
    history = scripted_session(padding=8)
    report = probe_run(simulate(history, SMALL.replace(pin_first_user_message=True)), history)
    first = report.frame.filter(pl.col("chain_index") == 1)
    from_first = first.filter(pl.col("source_index") == 0)
    assert from_first.height > 0
    assert from_first["in_pinned"].all() and not from_first["at_risk"].any()
    assert not first.filter(pl.col("source_index") > 0)["in_pinned"].any()


def test_only_the_latest_request_and_plan_are_probed_per_compression():
    """The continuation probe asks about the last user request and the last plan before the boundary."""
    history = scripted_session(padding=8)
    report = probe_run(simulate(history, SMALL), history)
    for _, rows in report.frame.filter(pl.col("kind") == "next_step").group_by("chain_index"):
        assert sorted(rows["detail"].to_list()) == ["plan", "request"]


def test_later_compressions_mark_newly_folded_facts():
    """``new`` marks facts first met between the previous boundary and this one."""
    history = scripted_session(padding=30)
    report = probe_run(simulate(history, SMALL), history)
    by = report.by_compression()
    assert by.height >= 2
    for row in report.frame.iter_rows(named=True):
        previous = report.frame.filter(pl.col("chain_index") == row["chain_index"] - 1)
        was_folded = row["fact_id"] in set(previous["fact_id"])
        assert row["new"] is not was_folded or row["chain_index"] == 1


def test_summary_fast_path_equals_the_frame():
    """probe_summary (used by sweeps) and ProbeReport.summary agree on every number."""
    history = scripted_session(padding=30)
    run = simulate(history, SMALL, CannedBriefer("src/auth/login.py KeyError: 'token'"))
    fast = probe_summary(run, history)
    slow = probe_run(run, history).summary()
    assert set(fast) == set(PROBE_COLUMNS)
    for key in PROBE_COLUMNS:
        assert fast[key] == pytest.approx(slow[key]), key


def test_no_compression_means_nothing_at_risk():
    """A run that never compacts folds nothing: retention 1, nothing at risk."""
    history = scripted_session()
    s = probe_summary(simulate(history, Knobs()), history)
    assert (s["facts_checked"], s["facts_at_risk"], s["retention"]) == (0, 0, 1.0)


def test_by_probe_covers_the_four_probe_types():
    history = scripted_session(padding=8)
    table = probe_run(simulate(history, SMALL), history).by_probe()
    assert table["probe"].to_list() == list(PROBES)


def test_the_fact_index_is_computed_once_per_history():
    history = scripted_session(padding=2)
    assert fact_index(history) is fact_index(history)


def test_the_extractive_briefer_is_the_default_for_probes():
    """Probes need briefing text; the extractive briefer writes it offline."""
    assert probe_briefer().name == "extractive"


# -- the real histories ----------------------------------------------------------------------------


def _pooled(paths, knobs, briefer):
    from workbench.history.readers import load_history

    checked = retained = 0
    for p in paths:
        h = load_history(p)
        s = probe_summary(simulate(h, knobs, briefer), h)
        checked += s["facts_checked"]
        retained += s["facts_retained"]
    return retained / checked


@pytest.mark.slow
def test_retention_differs_between_strategies_on_the_real_histories():
    """Presets keep different spans verbatim and brief at different times, so they retain different shares."""
    from workbench.presets import get_preset, list_preset_names

    paths = real_history_paths()
    names = [n for n in ("stagewise", "codex_cli", "opencode") if n in list_preset_names()] or list_preset_names()[:3]
    assert len(names) >= 2
    values = {n: _pooled(paths, get_preset(n).replace(context_window_tokens=32_000), probe_briefer()) for n in names}
    assert len({round(v, 6) for v in values.values()}) >= 2, values


def test_a_text_briefing_retains_more_than_kept_messages_alone():
    """On the real histories the extractive briefing carries most facts; without text few survive."""
    paths = real_history_paths()
    knobs = Knobs(context_window_tokens=32_000)
    with_text = _pooled(paths, knobs, probe_briefer())
    without = _pooled(paths, knobs, SimulatedBriefer())
    assert with_text > 0.5 > without


# -- the LLM judge (offline: litellm's mock_response) ----------------------------------------------

MOCK_SCORES = ('{"accuracy": 4, "context_awareness": 3, "artifact_trail": 2, "completeness": 3, '
               '"continuity": 4, "instruction_following": 5}')


def test_the_judge_grades_the_four_probes_and_caches_every_call(tmp_path):
    """One row per (compression, probe) with six 0-5 scores; a second run is served from the disk cache."""
    from workbench.analysis.fact_probes.probe_judge import DIMENSIONS, judge_run
    from workbench.briefing.cache import BriefingCache

    history = scripted_session(padding=8)
    run = simulate(history, SMALL, CannedBriefer("[](path:src/auth/login.py) edited"))
    with BriefingCache(tmp_path / "cache") as cache:
        first = judge_run(run, history, model="openai/gpt-4o-mini", cache=cache, max_compressions=1,
                          extra_params={"mock_response": MOCK_SCORES})
        assert first["probe"].to_list() == list(PROBES)
        assert first.select(DIMENSIONS).row(0) == (4, 3, 2, 3, 4, 5)
        assert first["mean"].to_list() == [3.5] * 4
        assert first["cache_hits"].sum() == 0
        again = judge_run(run, history, model="openai/gpt-4o-mini", cache=cache, max_compressions=1,
                          extra_params={"mock_response": "not used: the cache answers"})
        assert again["cache_hits"].to_list() == [2] * 4
        assert again.select(DIMENSIONS).row(0) == (4, 3, 2, 3, 4, 5)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"accuracy": 5, "context_awareness": 9, "artifact_trail": -1}', (5, 5, 0, None, None, None)),
        ('Scores: {"accuracy": 2.4, "completeness": 3} done', (2, None, None, 3, None, None)),
        ("no json here", (None,) * 6),
    ],
    ids=["clamped", "embedded-and-rounded", "missing"],
)
def test_judge_replies_are_parsed_and_clamped(reply, expected):
    from workbench.analysis.fact_probes.probe_judge import DIMENSIONS, parse_scores

    scores = parse_scores(reply)
    assert tuple(scores[d] for d in DIMENSIONS) == expected


def test_the_post_compaction_context_holds_the_briefing_and_the_kept_messages():
    from workbench.analysis.fact_probes.probe_judge import post_compaction_context

    history = scripted_session(padding=8)
    run = simulate(history, SMALL, CannedBriefer("BRIEFING TEXT"))
    first = next(c for c in run.compressions if c.status == "landed")
    context = post_compaction_context(run, history, first)
    assert context.startswith("<briefing>\nBRIEFING TEXT")
    assert f"filler turn {first.boundary - 14}" in context
    assert "filler turn 0 " not in context or first.boundary == 14
