"""The command line: readable summaries, JSON with four sections, and one-line errors with exit code 2."""

from __future__ import annotations

import json

import pytest
from scripted import uniform_history

from workbench.cli import main
from workbench.history.writers import write_canonical_jsonl


@pytest.fixture
def history_file(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(60)), encoding="utf-8")
    return path


def test_simulate_prints_a_summary(history_file, capsys):
    assert main(["simulate", str(history_file), "--set", "context_window_tokens=32000"]) == 0
    out = capsys.readouterr().out
    assert "4 landed, 0 failed" in out
    assert "Counterfactual replay" in out


def test_simulate_json_has_knobs_metrics_compressions_timeline(history_file, capsys):
    assert main(["simulate", str(history_file), "--set", "context_window_tokens=32000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"knobs", "metrics", "compressions", "timeline"}
    assert data["metrics"]["compressions"] == 4
    assert [c["briefing_chars"] for c in data["compressions"]] == sorted(
        c["briefing_chars"] for c in data["compressions"]
    )


def test_config_file_then_set(history_file, tmp_path, capsys):
    cfg = tmp_path / "k.yaml"
    cfg.write_text("version: 1\ncontext_window_tokens: 32000\ntrigger_ratio: -1\n", encoding="utf-8")
    assert main(["simulate", str(history_file), "--config", str(cfg), "--json", "--no-timeline"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["compressions"] == 0
    assert main(["simulate", str(history_file), "--config", str(cfg), "--set", "trigger_ratio=0.65", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["compressions"] == 4


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "trigger_ratio=3"], "trigger_ratio must be in [0, 1] or -1, got 3"),
        (["--set", "trigger_ratoi=0.5"], "unknown knob 'trigger_ratoi' (did you mean trigger_ratio?)"),
        (["--set", "nonsense"], "expected knob=value"),
        (["--preset", "nope"], "unknown preset 'nope'"),
    ],
)
def test_bad_knobs_exit_2_with_one_line(history_file, capsys, args, expected):
    assert main(["simulate", str(history_file), *args]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "empty"),
        ('[{"id": "a", "role": "user", "parts": [{"type": "text", "text": "hi"}]', "invalid JSON"),
        ('{"id": "a", "role": "robot", "content": "hi"}\n', "robot"),
        ('{"id": "a", "role": "user", "content": 5}\n', "content"),
    ],
    ids=["empty", "truncated", "unknown-role", "wrong-type"],
)
def test_bad_history_exits_2_naming_file_and_problem(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.jsonl" in err and expected in err
    assert len(err.splitlines()) == 1
    assert path.read_text(encoding="utf-8") == content  # nothing the user had is touched


def test_invalid_yaml_exits_2_naming_the_line(history_file, tmp_path, capsys):
    cfg = tmp_path / "k.yaml"
    cfg.write_text("version: 1\ntrigger_ratio: 0.5: x\n", encoding="utf-8")
    assert main(["simulate", str(history_file), "--config", str(cfg)]) == 2
    assert f"{cfg}:2: invalid YAML" in capsys.readouterr().err


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["simulate", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


ENGINE = ("workbench.replay", "polars", "numpy", "plotly", "litellm")


def test_a_bad_file_is_refused_before_the_engine_is_imported(tmp_path):
    """A missing file, or one that is not a log, is refused with the same exit code and line as ever before the
    replay engine, polars, plotly or litellm are imported (they were most of a refusal's CPU time); sweep, tune,
    reality and calibrate refuse a missing path so too."""
    import subprocess
    import sys

    not_a_log = tmp_path / "notes.txt"
    not_a_log.write_text("hello\nworld\n", encoding="utf-8")
    cases = [[command, str(path)] for command in ("simulate", "probe") for path in (tmp_path / "nope.jsonl", not_a_log)]
    cases += [[command, str(tmp_path / "nope.jsonl")] for command in ("sweep", "tune", "reality", "calibrate")]
    code = (
        "import contextlib, io, json, sys\n"
        "from workbench.cli import main\n"
        "out = []\n"
        f"for argv in {cases!r}:\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err):\n"
        "        rc = main(argv)\n"
        f"    out.append([rc, err.getvalue(), [m for m in {ENGINE!r} if m in sys.modules]])\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    results = json.loads(proc.stdout)
    for (command, path), (rc, err, loaded) in zip(cases, results, strict=True):
        missing = path.endswith("nope.jsonl")
        said = {"simulate": f"{path}: cannot read: No such file or directory", "probe": f"{path}: cannot read: No such file or directory",
                "sweep": f"{path}: no such history file", "tune": f"{path}: no such history file",
                "reality": f"{path}: no such file or folder", "calibrate": f"{path}: no such file or folder"}[command]
        said = said if missing else f"{path}:1:1: invalid JSON"
        assert rc == 2 and err.startswith(f"workbench {command}: error: {said}"), err
        assert len(err.strip().splitlines()) == 1
        assert loaded == [], (command, path)


def test_presets_lists_stagewise(capsys):
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert "stagewise " in out and "stagewise_chat" in out


def test_a_command_parses_as_it_does_among_all_commands(capsys):
    """A run builds its own command's parser alone: each command module is named as its command, and the usage a
    bad argument prints is the one the whole parser gives."""
    from workbench.cli import COMMAND_MODULES, build_parser

    for name in COMMAND_MODULES:
        command = name.rsplit(".", 1)[-1]
        errors = []
        for parser in (build_parser(command), build_parser()):
            with pytest.raises(SystemExit):
                parser.parse_args([command, "--no-such-option"])
            errors.append(capsys.readouterr().err)
        assert errors[0] == errors[1] and errors[0].startswith("usage: workbench ")


def test_python_dash_m_workbench_runs(history_file):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "workbench", "presets"], capture_output=True, text=True)
    assert proc.returncode == 0 and "stagewise" in proc.stdout


def test_a_cut_off_file_is_called_truncated(tmp_path, capsys):
    path = tmp_path / "cut.json"
    path.write_text('[{"id": "a", "role": "user", "parts": [{"type": "text", "text": "hi"}]},', encoding="utf-8")
    assert main(["simulate", str(path)]) == 2
    assert "the text ends early: truncated?" in capsys.readouterr().err


# -- issue 13, item 12: errors on their own line, a sweep says what it ran, probes show retention ---------


def test_an_error_during_a_sweep_starts_its_own_line_after_the_progress_bar(history_file, tmp_path, capsys):
    """The second history is broken: the bar drawn for the first ends its line before the error is printed."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "role": "user", "content": "x"}\n{broken\n', encoding="utf-8")
    assert main(["sweep", str(history_file), str(bad), "--workers", "1"]) == 2
    lines = capsys.readouterr().err.splitlines()  # splitlines also splits at a carriage return
    errors = [line for line in lines if "error:" in line]
    assert errors and all(line.startswith("workbench sweep: error: ") for line in errors), lines
    assert f"{bad}:2" in errors[0]
    assert any("runs" in line for line in lines[: lines.index(errors[0])])  # the bar came first, on its own line


def test_a_sweep_without_a_grid_says_it_ran_one_config(history_file, capsys):
    assert main(["sweep", str(history_file), "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "no --grid, --random or --presets given: ran the one knob set" in out
    assert "1 run (1 knob set × 1 history)" in out and "the one knob set" in out


def test_the_probes_summary_shows_fact_retention(history_file, capsys):
    from workbench.explore.sweep import knob_grid, sweep
    from workbench.explore.tune import Constraints, aggregate
    from workbench.knobs import Knobs

    args = ["sweep", str(history_file), "--grid", "trigger_ratio=0.3,0.6", "--set", "context_window_tokens=20000",
            "--probes", "--workers", "1", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "fact retention" in out and "briefer simulated" in out
    frame = sweep([history_file], knob_grid({"trigger_ratio": [0.3, 0.6]}, base=Knobs(context_window_tokens=20_000)),
                  workers=1, probes=True)
    for row in aggregate(frame, "tokens", Constraints(max_overflows=10**12)).iter_rows(named=True):
        assert f"{row['retention']:.1%}" in out
