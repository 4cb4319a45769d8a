"""The load-warnings channel: what a reader accepted but a person must see, located like an error.

A JSONL file whose last line is cut off (an agent still writing) loads its good lines and names the
bad one; lines of another format and unknown record types are pointed at by line (issue 12 item 13,
issue 13 item 8). The CLI prints them on stderr; the app shows them in the sidebar.
"""

from __future__ import annotations

import json

import pytest
from scripted import uniform_history

from workbench.cli import main
from workbench.history.errors import HistoryError
from workbench.history.readers import load_history, parse_history
from workbench.history.warnings import LoadWarning, shown
from workbench.history.writers import write_canonical_jsonl


def _openai_lines(n: int) -> list[str]:
    return [json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}) for i in range(n)]


@pytest.mark.parametrize("fmt", ["canonical", "openai_jsonl", "claude_code", "codex"])
def test_cut_off_last_line_loads_the_good_lines_with_a_warning(tmp_path, fmt):
    """Every JSONL format: the last line cut mid-value is left out, and the warning names file and line."""
    if fmt == "canonical":
        lines = write_canonical_jsonl(uniform_history(6)).splitlines()
    elif fmt == "openai_jsonl":
        lines = _openai_lines(6)
    elif fmt == "claude_code":
        lines = [json.dumps({"type": "user", "uuid": f"u{i}", "sessionId": "s", "timestamp": "t",
                             "message": {"role": "user", "content": f"hi {i}"}}) for i in range(6)]
    else:
        lines = [json.dumps({"timestamp": "t", "type": "response_item",
                             "payload": {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": f"hi {i}"}]}}) for i in range(6)]
    whole = load_history(_write(tmp_path / "whole.jsonl", "\n".join(lines) + "\n"))
    cut = lines[-1][: len(lines[-1]) // 2]
    path = _write(tmp_path / "live.jsonl", "\n".join([*lines[:-1], cut]))
    h = load_history(path)
    assert len(h) == len(whole) - 1
    assert [str(w) for w in h.warnings] == [
        f"{path}:{len(lines)}: " + h.warnings[0].message
    ]
    assert h.warnings[0].line == len(lines) and "cut off" in h.warnings[0].message
    assert parse_history(path.read_text(), source="x.jsonl").warnings[0].line == len(lines)  # same via text


def test_a_bad_line_in_the_middle_still_fails(tmp_path):
    lines = _openai_lines(4)
    lines[1] = lines[1][:10]
    with pytest.raises(HistoryError, match=r"bad\.jsonl:2:"):
        load_history(_write(tmp_path / "bad.jsonl", "\n".join(lines) + "\n"))


def test_a_cut_off_only_line_fails(tmp_path):
    with pytest.raises(HistoryError, match="one.jsonl:1"):
        load_history(_write(tmp_path / "one.jsonl", '{"role": "user", "content": "hel'))


def test_a_complete_bad_last_line_with_its_newline_fails(tmp_path):
    """A finished line (newline written) that is not JSON is damage, not an agent mid-write."""
    lines = [*_openai_lines(3), '{"role": "user", "content": 12 34}']
    with pytest.raises(HistoryError, match=r"x\.jsonl:4"):
        load_history(_write(tmp_path / "x.jsonl", "\n".join(lines) + "\n"))


def test_uimessage_line_inside_openai_jsonl_is_named(tmp_path):
    lines = _openai_lines(3) + [json.dumps({"id": "m9", "role": "assistant", "parts": [{"type": "text", "text": "x"}]})]
    h = load_history(_write(tmp_path / "mixed.jsonl", "\n".join(lines) + "\n"))
    assert h.source_format == "openai_jsonl"
    (w,) = h.warnings
    assert (w.line, w.field) == (4, "parts") and "UIMessage" in w.message


def test_openai_line_inside_canonical_jsonl_is_named(tmp_path):
    lines = write_canonical_jsonl(uniform_history(3)).splitlines()
    lines.insert(2, json.dumps({"id": "x", "role": "user", "content": "lost text"}))
    h = load_history(_write(tmp_path / "c.jsonl", "\n".join(lines) + "\n"))
    (w,) = h.warnings
    assert (w.line, w.field) == (3, "parts") and "'content'" in w.message


def test_unknown_claude_code_lines_are_counted_by_line(tmp_path):
    good = [json.dumps({"type": "user", "uuid": f"u{i}", "sessionId": "s", "message": {"role": "user",
                                                                                         "content": "hi"}})
            for i in range(3)]
    odd = [json.dumps({"type": "weird", "uuid": f"w{i}"}) for i in range(315)]
    h = load_history(_write(tmp_path / "cc.jsonl", "\n".join(good + odd) + "\n"))
    (w,) = h.warnings
    assert w.line == 4 and w.field == "type" and "314 more lines" in w.message


def test_warnings_do_not_change_equality_or_digest(tmp_path):
    lines = _openai_lines(4)
    a = load_history(_write(tmp_path / "a.jsonl", "\n".join(lines[:3]) + "\n"))
    b = load_history(_write(tmp_path / "a2.jsonl", "\n".join([*lines[:3], lines[3][:7]])))
    assert b.warnings and not a.warnings
    assert len(a) == len(b) and a.messages == b.messages and a.digest == b.digest


def test_cli_prints_each_warning_on_its_own_stderr_line(tmp_path, capsys):
    lines = write_canonical_jsonl(uniform_history(8)).splitlines()
    path = _write(tmp_path / "live.jsonl", "\n".join([*lines, lines[-1][:20]]))
    assert main(["simulate", str(path), "--json", "--no-timeline"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err.splitlines() == [f"workbench simulate: warning: {path}:{len(lines) + 1}: "
                                         + load_history(path).warnings[0].message]


def test_warning_values_are_shown_cut_with_their_length():
    assert shown("x" * 5_000_000).endswith("… (5,000,000 chars)")
    assert len(shown("x" * 5_000_000)) < 120
    assert shown(10**400) == "a 401-digit number"
    w = LoadWarning(source="f.jsonl", line=3, field="role", message="odd")
    assert str(w) == "f.jsonl:3: field 'role': odd" and w.to_dict()["line"] == 3


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_one_bad_file_in_a_folder_is_reported_and_skipped(tmp_path, capsys, command):
    """Issue 13 item 8: `tune DIR` / `sweep DIR` go on without the unreadable file and name it by line."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "good.jsonl").write_text(write_canonical_jsonl(uniform_history(40)), encoding="utf-8")
    (folder / "bad.jsonl").write_text('{"role": "user", "content": 12 34}\n{"role": "user", "content": "x"}\n')
    extra = ["--points", "2", "--rounds", "0"] if command == "tune" else ["--grid", "trigger_ratio=0.5,0.6"]
    assert main([command, str(folder), "--workers", "1", "--no-progress", *extra]) == 0
    captured = capsys.readouterr()
    assert f"workbench {command}: warning: skipped {folder / 'bad.jsonl'}:1:32: invalid JSON" in captured.err
    assert "1 of 2 histories skipped" in captured.err
    assert "× 1 history" in captured.out


def test_a_bad_file_named_explicitly_still_stops_the_sweep(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(write_canonical_jsonl(uniform_history(40)), encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": 12 34}\n{"role": "user", "content": "x"}\n')
    assert main(["sweep", str(good), str(bad), "--workers", "1", "--no-progress"]) == 2
    assert f"{bad}:1:32" in capsys.readouterr().err
