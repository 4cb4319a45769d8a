"""The append-only log writer (workbench/io/append.py): each append is all or nothing (issue 19, item 7).

An append is journaled beside the log (``.NAME.append``: the size before and after) and written in one write;
the next append finds the journal of one that a crash or a full disk cut short and rolls exactly those bytes
back, so the log only ever holds whole appends. A torn tail that no journal explains (a log from elsewhere) is
reported and never glued to.
"""

from __future__ import annotations

import errno
import json

import pytest

import workbench.io.append as append
from workbench.io.append import append_section, journal_path


def test_a_torn_tail_without_a_journal_is_reported_and_never_glued_to(tmp_path):
    log = tmp_path / "t.md"
    assert append_section(log, "## A\n\nbody\n\n").torn_line is None
    with log.open("a") as fh:
        fh.write("## B\n\nhalf a li")
    report = append_section(log, "## C\n\nc\n\n")
    assert report.torn_line == 5 and "t.md:5: the last section was cut off" in report.warnings()[0]
    assert log.read_text() == "## A\n\nbody\n\n## B\n\nhalf a li\n\n## C\n\nc\n\n"


def test_an_append_cut_by_a_crash_is_rolled_back_by_the_next_one(tmp_path):
    """What a kill mid-write leaves (the journal and part of the bytes) goes; the appends before it stay whole."""
    log = tmp_path / "t.md"
    append_section(log, "## A\n\nbody\n\n")
    good = log.read_bytes()
    cut = b"## B\n\nhalf of a section whose end is the blank line\n\nand then more"
    journal_path(log).write_text(json.dumps({"from": len(good), "to": len(good) + len(cut) + 40}))
    with log.open("ab") as fh:
        fh.write(cut)
    report = append_section(log, "## C\n\nc\n\n")
    assert log.read_bytes() == good + b"## C\n\nc\n\n"
    assert report.rolled_back == (5, len(cut), len(cut) + 40) and report.torn_line is None
    (warning,) = report.warnings()
    assert f"t.md:5: an append cut off by a crash ({len(cut):,} of {len(cut) + 40:,} bytes) was rolled back" in warning
    assert not journal_path(log).exists()


def test_a_journal_of_a_finished_append_or_one_that_does_not_fit_changes_nothing(tmp_path):
    log = tmp_path / "t.md"
    append_section(log, "## A\n\nbody\n\n")
    size = log.stat().st_size
    journal_path(log).write_text(json.dumps({"from": 0, "to": size}))  # killed after the write, before the cleanup
    assert append_section(log, "## B\n\n").warnings() == []
    journal_path(log).write_text(json.dumps({"from": size + 100, "to": size + 200}))  # not this file's bytes
    journal_path(log).write_text("not json")
    assert append_section(log, "## C\n\n").warnings() == []
    assert log.read_text() == "## A\n\nbody\n\n## B\n\n## C\n\n" and not journal_path(log).exists()


def test_a_full_disk_mid_append_leaves_the_log_as_it_was(tmp_path, monkeypatch):
    log = tmp_path / "t.md"
    append_section(log, "## A\n\nbody\n\n")
    good = log.read_bytes()
    real = append.write_all

    def half_then_full(fd, data):  # noqa: ANN001, ANN202
        real(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(append, "write_all", half_then_full)
    with pytest.raises(OSError, match="No space"):
        append_section(log, "## B\n\n" + "x" * 1000 + "\n\n")
    assert log.read_bytes() == good and not journal_path(log).exists()


def test_a_failed_first_append_leaves_no_empty_log(tmp_path, monkeypatch):
    def full(fd, data):  # noqa: ANN001, ANN202
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(append, "write_all", full)
    with pytest.raises(OSError):
        append_section(tmp_path / "new.md", "## A\n\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
