"""The writers' helper (workbench/io/files.py): atomic files and folders, append-only logs, surrogates."""

from __future__ import annotations

import errno
import json

import pytest

import workbench.io.files as files
from workbench.io.files import (
    atomic_folder,
    atomic_path,
    atomic_write_bytes,
    atomic_write_text,
    encodable,
    json_text,
)


def test_atomic_write_replaces_whole_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_failing_write_keeps_the_old_file_and_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def full(fd, data):  # noqa: ANN001, ANN202
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "write_all", full)
    with pytest.raises(OSError, match="No space"):
        atomic_write_bytes(target, b"new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with pytest.raises(OSError, match="No space"):
        atomic_write_bytes(tmp_path / "fresh.txt", b"x")
    assert not (tmp_path / "fresh.txt").exists()  # never a 0-byte file


def test_atomic_path_for_writers_that_want_a_path(tmp_path):
    target = tmp_path / "frame.csv"
    with atomic_path(target) as tmp:
        tmp.write_text("a,b\n1,2\n")
        assert not target.exists()
    assert target.read_text() == "a,b\n1,2\n"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer died")
    assert target.read_text() == "a,b\n1,2\n" and len(list(tmp_path.iterdir())) == 1


def test_atomic_folder_all_or_nothing(tmp_path):
    out = tmp_path / "bundles"
    with pytest.raises(RuntimeError), atomic_folder(out) as tmp:
        (tmp / "a.md").write_text("x")
        raise RuntimeError("killed")
    assert not out.exists() and not list(tmp_path.iterdir())
    with atomic_folder(out) as tmp:
        (tmp / "d").mkdir()
        (tmp / "d" / "a.md").write_text("x")
    assert (out / "d" / "a.md").read_text() == "x"
    (out / "old.txt").write_text("of the earlier run")
    with atomic_folder(out) as tmp:  # into a non-empty folder: replaced whole, nothing of the old one stays
        (tmp / "d").mkdir()
        (tmp / "d" / "a.md").write_text("y")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["d", "d/a.md"]
    assert (out / "d" / "a.md").read_text() == "y" and sorted(p.name for p in tmp_path.iterdir()) == ["bundles"]


@pytest.mark.parametrize("exchange", [True, False], ids=["atomic exchange", "two renames"])
def test_atomic_folder_swaps_an_existing_folder_whole(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(files, "_exchange", lambda a, b: False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale").mkdir()
    (out / "stale" / "x.md").write_text("old")
    with atomic_folder(out) as tmp:
        (tmp / "new.md").write_text("new")
    assert [p.name for p in out.iterdir()] == ["new.md"] and [p.name for p in tmp_path.iterdir()] == ["out"]


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_clean_leftovers_removes_dead_writers_temps_and_puts_an_old_folder_back(tmp_path):
    """Only this target's temp names of dead processes go; a live writer's stay; a folder moved aside by a killed
    swap comes back when the target is missing."""
    import os

    dead, target = _dead_pid(), tmp_path / "out"
    (tmp_path / f".out.{dead}.0123abcd.tmp").write_text("half")
    (tmp_path / f".out.{dead}.0123abce.tmpdir").mkdir()
    old = tmp_path / f".out.{dead}.0123abcf.old"
    old.mkdir()
    (old / "kept.md").write_text("the old bundles")
    mine = tmp_path / f".out.{os.getpid()}.0123abd0.tmp"
    mine.write_text("a live writer's")
    other = tmp_path / f".other.{dead}.0123abd1.tmp"
    other.write_text("another target's")
    (tmp_path / ".out.notes").write_text("not a temp name")
    removed = files.clean_leftovers(target)
    assert len(removed) == 2 and (target / "kept.md").read_text() == "the old bundles"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".out.notes", mine.name, other.name, "out"])


def test_surrogate_policy_json_lossless_text_replaced(tmp_path):
    value = {"t": "a\ud800b", "ok": "😀"}
    text = json_text(value)
    text.encode("utf-8")  # always encodable
    assert json.loads(text) == value
    assert encodable("a\ud800b\udfff") == ("a\ufffdb\ufffd", 2)
    assert atomic_write_text(tmp_path / "x.md", "a\ud800") == 1
    assert (tmp_path / "x.md").read_text(encoding="utf-8") == "a\ufffd"
