"""Every reproducer of issue 12, as a named test: no crash on any input, errors as one bounded line.

Each test is one of the issue's minimal reproducers, named by the behaviour wanted:
exit 0 with a valid result, or exit 2 with one line naming the file, the line where there is one,
and the field. Faults (cache, kill -9, concurrent runs) are in tests/test_faults.py, the bounded
fuzz campaign in tests/test_fuzz.py. A subprocess timeout here is a hang guard, not a speed target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from scripted import uniform_history

from workbench.cli import main
from workbench.history.errors import HistoryError
from workbench.history.readers import load_history
from workbench.history.writers import write_canonical_jsonl
from workbench.knobs import Knobs, load_knobs

SMALL = ["--set", "context_window_tokens=8000", "--set", "trigger_hard_cap_tokens=5000"]
HANG_GUARD_S = 120


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in a fresh process (a hang or a crash of the interpreter shows here)."""
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, env={**os.environ, **(env or {})}, cwd=REPO)


def one_error_line(err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    assert "Traceback" not in err and len(lines[0]) <= 600, lines[0][:700]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def stagewise_json(path: Path, messages: list[dict]) -> Path:
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def uimessages(n: int = 40, text: str = "word " * 400) -> list[dict]:
    return [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant", "parts": [{"type": "text", "text": text}]}
            for i in range(n)]


# ── crashes and hangs ───────────────────────────────────────────────────────────────────────────


def test_deep_json_nesting_is_refused_by_depth(tmp_path, capsys):
    path = tmp_path / "d.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["simulate", str(path)]) == 2
    one_error_line(capsys.readouterr().err, str(path), "nested 100,000 levels deep")
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n" + '{"a":' * 5000 + "1" + "}" * 5000 + "\n")
    with pytest.raises(HistoryError, match=r"d\.jsonl:2: JSON nested 5,000 levels deep"):
        load_history(jsonl)


def test_depth_just_under_the_limit_replays_end_to_end(tmp_path):
    """A value 190 deep inside a tool input loads and goes through simulate, probe, bundles and offload."""
    deep: object = "leaf"
    for _ in range(190):
        deep = {"k": deep}
    msgs = uimessages(30)
    msgs[3]["parts"].append({"type": "tool-read", "toolCallId": "c1", "state": "output-available", "input": deep,
                             "output": deep})
    path = stagewise_json(tmp_path / "deep.json", msgs)
    for args in (["simulate", str(path), "--json"], ["probe", str(path)],
                 ["bundles", str(path), "--out", str(tmp_path / "b")],
                 ["simulate", str(path), "--preset", "msagent", "--offload-dir", str(tmp_path / "o")]):
        assert main([*args, *SMALL]) == 0, args


@pytest.mark.parametrize("command", ["simulate", "probe", "bundles"])
def test_an_object_id_is_refused_at_load(tmp_path, capsys, command):
    msgs = uimessages()
    msgs[5]["id"] = {"x": 1}
    path = stagewise_json(tmp_path / "idd.json", msgs)
    extra = ["--out", str(tmp_path / "out")] if command == "bundles" else []
    assert main([command, str(path), "--briefer", "extractive", *extra, *SMALL]) == 2
    one_error_line(capsys.readouterr().err, "idd.json", "messages[5]", "field 'id'")


def test_a_role_that_is_not_text_is_refused_at_load(tmp_path):
    msgs = uimessages()
    msgs[2]["role"] = ["user"]
    with pytest.raises(HistoryError, match=r"messages\[2\]: field 'role': must be a string"):
        load_history(stagewise_json(tmp_path / "r.json", msgs))


def _surrogate_history(tmp_path: Path) -> Path:
    return stagewise_json(tmp_path / "sur.json", uimessages(30, text="x \ud800 " * 2000))


def test_lone_surrogates_reach_the_offload_log_as_a_stated_replacement(tmp_path, capsys):
    path = _surrogate_history(tmp_path)
    out = tmp_path / "off"
    assert main(["simulate", str(path), "--preset", "msagent", "--offload-dir", str(out), *SMALL]) == 0
    log = out / "conversation_history" / "sur.md"
    text = log.read_text(encoding="utf-8")
    assert text.startswith("## Offloaded at ") and "x \ufffd x" in text
    assert "lone surrogate(s) written as U+FFFD" in capsys.readouterr().err


def test_bundles_of_a_history_with_lone_surrogates_are_complete(tmp_path, capsys):
    path = _surrogate_history(tmp_path)
    out = tmp_path / "bun"
    assert main(["bundles", str(path), "--out", str(out), *SMALL]) == 0
    folders = [p for p in out.rglob("compression-*") if p.is_dir()]
    assert folders and all(sorted(f.name for f in p.iterdir()) == sorted(
        ["system-prompt.md", "user-message.md", "compact-history.xml", "actual-output.md", "metadata.json"])
        for p in folders)
    for p in folders:
        json.loads((p / "metadata.json").read_text(encoding="utf-8"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left behind


def test_lone_surrogates_survive_json_output_losslessly(tmp_path, capsys):
    path = _surrogate_history(tmp_path)
    assert main(["simulate", str(path), "--briefer", "extractive", "--json", "--no-timeline", *SMALL]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "\ud800" in data["compressions"][0]["briefing_text"]  # escaped on the way out, restored on the way in


def test_the_compressions_view_shows_lone_surrogates_replaced(tmp_path):
    from workbench.analysis.inspector import compression_view
    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.replay import simulate

    history = load_history(_surrogate_history(tmp_path))
    run = simulate(history, Knobs(context_window_tokens=8000, trigger_hard_cap_tokens=5000), ExtractiveBriefer())
    view = compression_view(run, history, 0)
    assert view.folded.height > 0 and "\ufffd" in view.folded["preview"][0]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--set", "context_window_tokens=" + "9" * 400], ["context_window_tokens", "a 400-digit number"]),
        (["--set", "trigger_ratio=" + "9" * 400], ["trigger_ratio", "a 400-digit number"]),
        (["--set", "manual_compact_checks=" + "7" * 5000], ["manual_compact_checks", "under 10^9"]),
    ],
    ids=["int-400-digits", "float-400-digits", "checks-5000-digits"],
)
def test_a_huge_number_in_set_fails_with_one_line_naming_the_knob(tmp_path, capsys, args, needles):
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(10)))
    assert main(["simulate", str(path), *args]) == 2
    one_error_line(capsys.readouterr().err, "--set", *needles)


@pytest.mark.parametrize(
    ("yaml_text", "needles"),
    [
        ("version: 1\n1: 2\n", ["k.yaml:2", "knob names must be text", "1"]),
        ("version: 1\n~: 2\n", ["k.yaml:2", "knob names must be text", "None"]),
        ("version: 1\ntrigger_ratio: " + "[" * 100_000 + "]" * 100_000 + "\n", ["k.yaml:2", "nested more than"]),
        ("version: 1\ntrigger_ratio: 0.5\nkept_budget_ratio: 0.1\ntrigger_ratio: 0.7\n",
         ["k.yaml:4", "duplicate knob 'trigger_ratio' (also on line 2)"]),
        ("version: 1\nstrategy: bogus\n", ["k.yaml:2", "strategy must be one of", "'bogus'"]),
    ],
    ids=["int-key", "null-key", "deep-value", "duplicate-key", "unknown-strategy"],
)
def test_a_bad_knob_file_fails_with_one_line_naming_its_line(tmp_path, capsys, yaml_text, needles):
    cfg = tmp_path / "k.yaml"
    cfg.write_text(yaml_text, encoding="utf-8")
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(10)))
    assert main(["simulate", str(path), "--config", str(cfg)]) == 2
    one_error_line(capsys.readouterr().err, *needles)


def _alias_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghij"):
        prev = "abcdefghij"[i]
        lines.append(f"{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    return "version: 1\ntrigger_ratio: " + "\n  ".join(["", *lines]) + "\n"


def test_a_yaml_alias_bomb_is_refused_before_expansion(tmp_path):
    bomb = _alias_bomb()
    assert 400 < len(bomb) < 3000
    cfg = tmp_path / "bomb.yaml"
    cfg.write_text(bomb)
    history = tmp_path / "h.jsonl"
    history.write_text(write_canonical_jsonl(uniform_history(10)))
    done = run_cli("simulate", str(history), "--config", str(cfg))
    assert done.returncode == 2
    one_error_line(done.stderr, "bomb.yaml:", "aliases (*a) are not allowed")
    with pytest.raises(ValueError, match="aliases"):
        load_knobs(bomb)


@pytest.mark.slow
def test_a_catastrophic_pin_pattern_stops_with_a_clear_error(tmp_path):
    msgs = [{"role": "user", "content": "a" * 34 + "!"}, {"role": "assistant", "content": "ok"}] * 3
    history = tmp_path / "p.jsonl"
    history.write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    done = run_cli("simulate", str(history), "--preset", "msagent", "--set", "pin_pattern=^(a|a)*$")
    assert done.returncode == 2
    one_error_line(done.stderr, "pin_pattern '^(a|a)*$' ran over", "message 0", "backtracks catastrophically")


def test_an_ordinary_pin_pattern_still_pins():
    from workbench.knobs import compile_pin_pattern

    rx = compile_pin_pattern(r"^# AGENTS\.md")
    assert rx.search("# AGENTS.md instructions") and not rx.search("nothing here")
    with pytest.raises(ValueError, match="pin_pattern must be a regular expression"):
        Knobs(pin_pattern="(")


def test_a_five_megabyte_role_gives_a_short_line(tmp_path, capsys):
    path = tmp_path / "role.jsonl"
    path.write_text(json.dumps({"role": "x" * 5_000_000, "content": "hi"}) + "\n")
    assert main(["simulate", str(path)]) == 2
    line = one_error_line(capsys.readouterr().err, "role.jsonl:1", "field 'role'", "(5,000,000 chars)")
    assert len(line) < 400


def test_a_million_unknown_yaml_keys_stop_at_the_node_limit(tmp_path):
    cfg = tmp_path / "many.yaml"
    cfg.write_text("version: 1\n" + "".join(f"k{i}: {i}\n" for i in range(1_000_000)))
    history = tmp_path / "h.jsonl"
    history.write_text(write_canonical_jsonl(uniform_history(10)))
    done = run_cli("simulate", str(history), "--config", str(cfg))
    assert done.returncode == 2
    one_error_line(done.stderr, "many.yaml:", "bytes, over the 4,000,000-byte limit for a knobs file")
    text = "version: 1\n" + "".join(f"k{i}: {i}\n" for i in range(3000))
    with pytest.raises(ValueError, match=r"<yaml>:2500: more than 5,000 YAML values"):
        load_knobs(text)
    with pytest.raises(ValueError, match=r"<yaml>:2: unknown knob 'k0'"):
        load_knobs("version: 1\n" + "".join(f"k{i}: {i}\n" for i in range(100)))
    from workbench.knobs import knobs_from_dict

    with pytest.raises(ValueError, match=r"unknown knobs 'k0', 'k1', 'k10', 'k11', 'k12' \(and 95 more\)"):
        knobs_from_dict({f"k{i}": i for i in range(100)})
    with pytest.raises(ValueError) as info:
        load_knobs("version: 1\n" + "x" * 900 + ": 1\n")
    assert len(str(info.value)) < 300 and "(900 chars)" in str(info.value)


@pytest.mark.slow  # 3-4 s: two CLI processes (each imports the engine before it looks at the file)
def test_dev_zero_and_a_fifo_are_refused_without_reading(tmp_path):
    done = run_cli("simulate", "/dev/zero")
    assert done.returncode == 2
    one_error_line(done.stderr, "/dev/zero", "not a regular file (a character device)")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    done = run_cli("simulate", str(fifo))  # opening a FIFO for reading would block forever
    assert done.returncode == 2
    one_error_line(done.stderr, "pipe.jsonl", "a pipe (FIFO)")


def test_files_over_the_size_limit_are_refused_with_the_override_named(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(10)))
    done = run_cli("simulate", str(path), env={"WORKBENCH_MAX_HISTORY_BYTES": "1000"})
    assert done.returncode == 2
    one_error_line(done.stderr, "h.jsonl", "over the 1,000-byte limit", "WORKBENCH_MAX_HISTORY_BYTES")
    assert load_history(path, max_bytes=10**9).messages


# ── silent acceptance and vague errors (more in tests/test_load_warnings.py) ─────────────────────


def test_a_config_that_is_not_utf8_names_file_and_line(tmp_path, capsys):
    history = tmp_path / "h.jsonl"
    history.write_text(write_canonical_jsonl(uniform_history(10)))
    bad = tmp_path / "latin.yaml"
    bad.write_bytes(b"version: 1\ntrigger_ratio: 0.5\n# caf\xe9\n")
    assert main(["simulate", str(history), "--config", str(bad)]) == 2
    one_error_line(capsys.readouterr().err, "latin.yaml:3", "not UTF-8 text (byte 35)")
    wide = tmp_path / "wide.yaml"
    wide.write_bytes("version: 1\n".encode("utf-16"))
    assert main(["simulate", str(history), "--config", str(wide)]) == 2
    one_error_line(capsys.readouterr().err, "wide.yaml:1", "UTF-16")


def test_an_uploaded_broken_store_is_named_after_the_upload():
    from workbench.ui.sources import read_upload

    with pytest.raises(HistoryError) as info:
        read_upload("mine.sqlite", b"SQLite format 3\x00" + b"\x00" * 4096)
    assert str(info.value).startswith("mine.sqlite: ") and "/tmp" not in str(info.value)


def test_multi_line_errors_are_printed_on_one_line(tmp_path, capsys):
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(10)))
    assert main(["simulate", str(path), "--set", "strategy=a\nb\nc"]) == 2
    one_error_line(capsys.readouterr().err, "--set", "strategy must be one of")


def test_a_key_inside_a_successful_answer_never_reaches_cache_or_output(fake_provider, tmp_path, capsys):
    key = "shapeless-key-value-42-do-not-store"
    history = tmp_path / "h.jsonl"
    history.write_text(write_canonical_jsonl(uniform_history(40)))
    cache = tmp_path / "cache"
    env_name = "WORKBENCH_TEST_PROVIDER_SECRET"
    os.environ[env_name] = key
    try:
        code = main(["simulate", str(history), "--set", "context_window_tokens=32000", "--briefer", "live",
                     "--model", "openai/fake-parrot", "--api-base", fake_provider.api_base, "--api-key-env", env_name,
                     "--cache-dir", str(cache), "--json", "--no-timeline"])
    finally:
        del os.environ[env_name]
    out = capsys.readouterr().out
    assert code == 0 and fake_provider.counts["fake-parrot"] > 0
    data = json.loads(out)
    texts = [c["briefing_text"] for c in data["compressions"]]
    assert texts and all("you called me with Bearer ***" in t for t in texts)  # the provider did quote it
    assert key not in out
    for path in cache.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


# ── scale: the probe's work grows linearly (its time is measured in benchmarks/) ─────────────────


def test_probe_work_grows_linearly_with_the_history(monkeypatch):
    """Doubling the history doubles the fact checks (it quadrupled: every fact × every message)."""
    import workbench.analysis.fact_probes.fact_matcher as fm
    from workbench.analysis.fact_probes.probes import probe_history
    from workbench.history.model import History, Message

    calls = {"n": 0}
    real = fm._needle_found

    def counting(fact, text):  # noqa: ANN001, ANN202
        calls["n"] += 1
        return real(fact, text)

    monkeypatch.setattr(fm, "_needle_found", counting)
    base = load_history(REPO / "sample_histories" / "short.jsonl")

    def repeated(k: int) -> History:
        msgs = [Message(id=f"{m.id}~{r}", role=m.role, parts=m.parts, metadata=m.metadata, extra=m.extra)
                for r in range(k) for m in base.messages]
        return History(id=f"rep{k}", messages=tuple(msgs))

    work = []
    for k in (2, 4):
        calls["n"] = 0
        probe_history(repeated(k), Knobs(context_window_tokens=32_000))
        work.append(calls["n"])
    assert work[1] <= 2.6 * work[0], work
