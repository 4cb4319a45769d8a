"""The command line as a newcomer meets it (issue 21): an agent log is probed as its agent runs it, the header names
the trigger actually used, a typo gets a "did you mean", counts read "1 file", and tables fit the terminal."""

from __future__ import annotations

import functools
import io
import random
import re
import sys

import pytest
from agent_log_builders import ClaudeLog, text_block, tool_use
from conftest import REPO
from scripted import uniform_history

from workbench.cli import main
from workbench.history.samples import synth
from workbench.history.writers import write_canonical_jsonl
from workbench.knobs import Knobs


@pytest.fixture
def history_file(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(60)), encoding="utf-8")
    return path


def claude_log(turns: int = 16, chars: int = 40_000) -> ClaudeLog:
    """A Claude Code 2.1.25 log of ``turns`` Read steps with ``chars`` of file text each: big enough to compact."""
    rng = random.Random(21)
    log = ClaudeLog()
    billed = 40_000
    for i in range(turns):
        log.user(f"Step {i}: fix the parser in src/p{i}.py.")
        body = ""
        while len(body) < chars:
            body += synth.sentence(rng, 20) + " "
        log.assistant([text_block("Reading."), tool_use(f"t{i}", "Read", file_path=f"/r/src/p{i}.py")],
                      input_total=billed, output=50)
        log.tool_result(f"t{i}", body)
        billed += len(body) // 4
    return log


@functools.cache
def claude_text() -> str:
    """``claude_log()``'s text, built once per process: 640,000 characters of seeded filler took ~0.4 s for each of
    the ~40 tests that write it (their setup was most of this file's time); the text is the same each time."""
    return claude_log().text()


@pytest.fixture
def claude_file(tmp_path):
    path = tmp_path / "claude.jsonl"
    path.write_text(claude_text(), encoding="utf-8")
    return path


# -- item 5: probe replays an agent log as its agent does, and says so ------------------------------------------


def test_probe_on_an_agent_log_uses_the_agents_preset_and_says_which(claude_file, capsys):
    """The same preset, window and model as ``simulate`` (agent_settings); stagewise's defaults compress it otherwise."""
    from workbench.analysis.fact_probes.probes import probe_run
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.history.readers import load_history
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    history = load_history(claude_file)
    own = simulate(history, agent_settings(history).knobs, ExtractiveBriefer())
    default = simulate(history, Knobs(), ExtractiveBriefer())
    expected = probe_run(own, history).summary()
    assert expected != probe_run(default, history).summary()  # the test can tell them apart

    assert main(["probe", str(claude_file), "--json"]) == 0
    captured = capsys.readouterr()
    import json

    assert json.loads(captured.out)["summary"] == json.loads(json.dumps(expected))
    assert "preset claude_code" in captured.err and "window 200,000" in captured.err


def test_probe_with_a_preset_given_uses_that_preset(claude_file, capsys):
    assert main(["probe", str(claude_file), "--preset", "stagewise", "--json"]) == 0
    captured = capsys.readouterr()
    assert "preset claude_code" not in captured.err


def gemini_session(tmp_path):  # noqa: ANN001, ANN201
    """A two-call Gemini CLI session file (it names no version; its window is 1,048,576 tokens)."""
    import json

    from native_log_builders import GeminiLog

    log = GeminiLog().user("read a").gemini("reading", prompt=20_000).user("go on").gemini("done", prompt=21_000)
    path = tmp_path / "session-gemini.json"
    path.write_text(json.dumps(log.doc()), encoding="utf-8")
    return path


def test_an_agent_log_of_unknown_version_is_named_without_a_dangling_space(tmp_path, capsys):
    """A Gemini CLI session file names no version: "replaying as gemini_cli does", not "gemini_cli  does"."""
    path = gemini_session(tmp_path)
    assert main(["probe", str(path)]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "replaying as" in line]
    assert len(said) == 1 and "replaying as gemini_cli does (preset gemini_cli," in said[0], err
    assert "  " not in said[0]


def test_probe_of_a_log_that_never_compacts_says_nothing_was_probed(tmp_path, capsys):
    """Gemini CLI's 1,048,576-token window: no compaction, so no retention to report (it said "100.0% (0 kept)")."""
    path = gemini_session(tmp_path)
    assert main(["probe", str(path)]) == 0
    out = capsys.readouterr().out
    assert "probed    0 compressions, 0 fact checks" in out
    assert "nothing was compacted" in out and "100.0%" not in out and "by probe" not in out


def test_the_agent_and_version_words_have_one_home():
    from workbench.analysis.real_logs.agent_settings import AgentSettings, agent_words
    from workbench.knobs import Knobs

    assert agent_words("claude_code", "2.1.25") == "claude_code 2.1.25"
    assert agent_words("gemini_cli", None) == agent_words("gemini_cli", "") == "gemini_cli"
    assert AgentSettings(preset=None, knobs=Knobs(), agent="codex", version=None).who == "codex"


# -- item 8: simulate's header names the trigger the run used ---------------------------------------------------


def test_simulate_header_names_the_trigger_claude_code_uses(claude_file, capsys):
    """Claude Code fires at window − 33,000 = 167,000, not at "trigger ratio -1 hard cap 100,000"."""
    assert main(["simulate", str(claude_file)]) == 0
    out = capsys.readouterr().out
    assert "trigger 167,000 tokens = window − 33,000 reserve" in out
    assert "trigger ratio -1" not in out and "hard cap 100,000" not in out


def test_simulate_header_derives_its_words_from_the_runs_limits(history_file, capsys):
    from workbench.history.readers import load_history
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    assert main(["simulate", str(history_file), "--set", "context_window_tokens=32000"]) == 0
    out = capsys.readouterr().out
    run = simulate(load_history(history_file), Knobs(context_window_tokens=32_000))
    assert run.limits.trigger.describe() in out  # "trigger 20,800 tokens = 0.65 × window (hard cap ...)"


PRESETS = sorted(p.stem for p in (REPO / "workbench" / "presets").glob("*.yaml"))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_presets_header_says_the_trigger_its_replay_fires_at(preset, claude_file, capsys):
    """One engine function (``policies.trigger.trigger_words``, for the app too) says the trigger the policy uses; the header
    prints it, it equals the Run's own limits, and a threshold compaction of the run started at that number."""
    from workbench.history.readers import load_history
    from workbench.policies.trigger import knob_limits, trigger_words
    from workbench.presets import get_preset
    from workbench.replay import simulate

    knobs = get_preset(preset)
    assert main(["simulate", str(claude_file), "--preset", preset]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    words = trigger_words(knobs)
    assert header.endswith(f"; {words}"), (header, words)
    assert "trigger ratio" not in words and "-1" not in words
    limits = knob_limits(knobs)
    run = simulate(load_history(claude_file), knobs)
    assert run.limits == limits and trigger_words(limits=run.limits) == words
    if limits.trigger.tokens is None or not knobs.proactive_compaction:
        assert words.startswith("trigger: off")  # Claude Code 2.1.153: only the API's refusal (reactive) compacts
        assert not [c for c in run.compressions if c.reason == "threshold"]
        return
    assert words.startswith(f"trigger {limits.trigger.tokens:,.0f} tokens")
    for c in run.compressions:
        if c.reason == "threshold":
            assert c.trigger_tokens == limits.trigger.tokens
            assert c.tokens_before >= limits.trigger.tokens, (c.chain_index, c.tokens_before)


def test_claude_codes_trigger_is_the_window_less_its_reserve_for_each_version():
    """167,000 = 200,000 − 33,000 (2.1.25 on), 155,000 = 200,000 − 45,000 (2.1.1-2.1.20): never "ratio -1"."""
    from workbench.policies.trigger import trigger_words
    from workbench.presets import get_preset

    assert trigger_words(get_preset("claude_code")).startswith("trigger 167,000 tokens = window − 33,000 reserve")
    assert trigger_words(get_preset("claude_code_2_1_1")).startswith("trigger 155,000 tokens = window − 45,000 reserve")
    assert trigger_words(get_preset("codex_cli")).startswith("trigger 244,800 tokens = 0.9 × window")


# -- item 12: --set with a typo, plurals, one progress total ---------------------------------------------------


def test_set_with_a_typo_answers_did_you_mean_in_one_short_line(history_file, capsys):
    assert main(["simulate", str(history_file), "--set", "trigr_ratio=0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown knob 'trigr_ratio' (did you mean trigger_ratio?)" in err
    assert len(err.splitlines()) == 1 and len(err) < 200


def test_reality_set_with_a_typo_answers_did_you_mean(claude_file, capsys):
    assert main(["reality", str(claude_file), "--set", "trigr_ratio=0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "did you mean trigger_ratio?" in err and len(err) < 200


def test_counted_nouns_take_the_right_plural():
    from workbench.history.words import counted

    assert [counted(n, "file") for n in (0, 1, 2, 1234)] == ["0 files", "1 file", "2 files", "1,234 files"]
    assert counted(1, "history", "histories") == "1 history" and counted(3, "history", "histories") == "3 histories"
    assert counted(1, "test request") == "1 test request"


ONE_PLURAL = re.compile(r"(?<![\d,.])1 (?:[a-z]+ )?(?:checks|runs|elisions|facts|messages|compactions|turns|chats|"
                        r"bundles|briefings|requests|files|summaries)\b")


def test_simulates_summary_counts_one_of_each_in_the_singular(history_file):
    """Every counted noun of the summary says "1 check", "1 run", "1 elision": the words read for any count."""
    import dataclasses

    from workbench.cli.simulate import format_summary
    from workbench.history.readers import load_history
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    run = simulate(load_history(history_file), Knobs(context_window_tokens=32_000))
    ones = dataclasses.replace(run.metrics, messages=1, checks=1, overflows=1, overflow_events=1, elisions=1,
                               cooldown_skips=1, thrash_events=1)
    text = format_summary(dataclasses.replace(run, metrics=ones))
    assert not ONE_PLURAL.findall(text), ONE_PLURAL.findall(text)
    assert "(1 message, 1 check)" in text and "1 check above the window in 1 run" in text
    assert "; 1 elision" in text and "1 check held by cooldown" in text


def test_a_one_turn_trigger_and_a_one_chat_bundle_are_singular(history_file, tmp_path, capsys):
    from workbench.policies.trigger import trigger_words

    assert "more than 1 turn in context" in trigger_words(Knobs(strategy="summarize", trigger_max_turns=1))
    assert main(["bundles", str(history_file), "--out", str(tmp_path / "b"), "--set", "context_window_tokens=32000",
                 "--set", "trigger_ratio=0.9"]) == 0
    out = capsys.readouterr().out
    assert not ONE_PLURAL.findall(out), out
    assert " for 1 chat into " in out


def test_a_sweep_of_one_history_and_one_config_says_so_in_the_singular(history_file, capsys):
    assert main(["sweep", str(history_file), "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "1 run (1 knob set × 1 history)" in out


def test_tune_reports_progress_against_one_total(history_file):
    """The bar's total never changes mid-run (it jumped from 343/678 to 348/348), and it ends full."""
    from workbench.explore.tune import Constraints, tune
    from workbench.knobs import Knobs

    calls: list[tuple[int, int]] = []
    tune([history_file], base=Knobs(context_window_tokens=32_000), constraints=Constraints(max_overflows=10**6),
         space={"trigger_ratio": (0.3, 0.9), "kept_budget_ratio": (0.1, 0.3)}, points=3, rounds=2, workers=1,
         progress=lambda done, total: calls.append((done, total)))
    totals = {total for _, total in calls}
    assert len(totals) == 1, sorted(totals)
    dones = [done for done, _ in calls]
    assert dones == sorted(dones) and dones[-1] == totals.pop()


# -- item 12: the reality table at 80 and 120 columns and piped ------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _reality_table(monkeypatch, path, columns: int | None) -> str:
    """``workbench reality`` as printed on a terminal ``columns`` wide, or into a pipe (None)."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    out = _Terminal() if columns else io.StringIO()
    if columns:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["reality", str(path)]) == 0
    monkeypatch.undo()
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())


def _printed(monkeypatch, argv: list[str], columns: int | None) -> str:
    """What ``workbench ARGV`` prints on stdout on a terminal ``columns`` wide, or into a pipe (None)."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    out = _Terminal() if columns else io.StringIO()
    if columns:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(argv) == 0
    monkeypatch.undo()
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())


@pytest.mark.parametrize("columns", [80, 120, None], ids=["80-columns", "120-columns", "piped"])
def test_calibrates_wide_tables_are_never_cut_on_a_terminal(monkeypatch, columns):
    """``workbench calibrate``'s fit tables (14 columns) on a terminal narrower than them: each row a block of
    "column  value" lines, not every header and number cut to "…"; a pipe gets the whole table."""
    from workbench.cli.calibrate import FIT_COLUMNS

    text = _printed(monkeypatch, ["calibrate", str(REPO / "sample_histories" / "claude_code.jsonl")], columns)
    assert "…" not in text, text
    lines = text.splitlines()
    if columns:
        assert max(len(line.rstrip()) for line in lines) <= columns, text
        for name in FIT_COLUMNS:  # every column named, beside its whole value
            assert any(line.strip().startswith(f"{name} ") or line.strip() == name for line in lines), name
        assert "  hidden prefix" in text and "  sim_new_chars_ratio" in text
    else:
        header = next(line for line in lines if line.lstrip().startswith("agent"))
        assert header.split()[:4] == ["agent", "logs", "hidden", "prefix"]


def test_a_table_that_fits_stays_a_table_on_a_terminal(monkeypatch):
    from workbench.cli.progress import print_table

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERM", "dumb")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    out = _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    print_table(["config", "tokens/task", "overflows"], [[0, "1,143,263", 0], [1, "998,001", 2]],
                right=[True, True, True])
    monkeypatch.undo()
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    header = next(line for line in text.splitlines() if line.lstrip().startswith("config"))
    assert header.split() == ["config", "tokens/task", "overflows"] and "row 1 of" not in text
    assert "1,143,263" in text and "998,001" in text


def test_a_table_a_little_too_wide_folds_its_headers_and_keeps_every_number(monkeypatch, history_file):
    """``workbench sweep``'s table at 80 columns: "overflows (checks above the window)" folds over three lines, every
    column and number stays whole on one line a row."""
    argv = ["sweep", str(history_file), "--workers", "1", "--no-progress", "--grid", "trigger_ratio=0.5,0.7",
            "--set", "context_window_tokens=32000"]
    text = _printed(monkeypatch, argv, 80)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80 and "…" not in text and "row 1 of" not in text
    header = next(line for line in lines if line.lstrip().startswith("config"))
    assert header.split()[:4] == ["config", "tokens", "per", "task"] and "trigger_ratio" in header
    rows = [line.split() for line in lines if re.match(r"^\s+[01]\s+[\d,]+\s", line)]
    assert [r[0] for r in rows] == ["0", "1"] and {r[-1] for r in rows} == {"0.5", "0.7"}


def _compacted_log(tmp_path):
    log = ClaudeLog()
    log.user("Refactor the parser.")
    log.assistant([text_block("Reading."), tool_use("t1")], input_total=160_000, output=100)
    log.tool_result("t1", "x" * 20_000)
    log.assistant([tool_use("t2")], input_total=165_200, output=100)
    log.tool_result("t2", "y" * 10_000)
    log.compact("auto", 167_700, "The summary.").user("go on")
    path = tmp_path / "claude_code__a_long_session_file_name_0123456789.jsonl"
    path.write_text(log.text(), encoding="utf-8")
    return path


@pytest.mark.parametrize("columns", [80, 120, None], ids=["80-columns", "120-columns", "piped"])
def test_the_reality_table_fits_the_terminal_and_never_cuts_a_number(monkeypatch, tmp_path, columns):
    path = _compacted_log(tmp_path)
    text = _reality_table(monkeypatch, path, columns)
    lines = text.splitlines()
    if columns:
        assert max(len(line.rstrip()) for line in lines) <= columns, text
    header = next(line for line in lines if line.lstrip().startswith("file"))
    # the columns that say whether the replay fired where the agent did are always there
    for name in ("real", "predicted", "delta"):
        assert name in header.split(), header
    assert "…" not in text  # nothing is cut: a long name wraps, columns that do not fit are left out
    row = " ".join(line for line in lines if "auto" in line)
    assert "167,700" in row and " 5 " in f" {row} " and "+0" in row
    if columns is None:  # a pipe gets every column on one line per row
        assert header.split()[:4] == ["file", "agent", "version", "preset"]
        assert path.name in text
    elif columns == 80:
        assert "left out" in text  # says which columns did not fit and how to see them
