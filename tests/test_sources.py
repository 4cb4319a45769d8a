"""Where the app finds histories: samples, --histories folders, $WORKBENCH_HISTORIES, uploaded bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from upload_samples import format_samples, stagewise_store_bytes

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.samples.datasets import sample_dirs
from workbench.ui.sources import (
    ENV_VAR,
    default_history_file,
    generated_history,
    list_history_files,
    read_upload,
    user_dirs,
)


def test_user_dirs_reads_the_argument_in_both_spellings_and_the_environment(tmp_path):
    """`-- --histories A --histories=B` and WORKBENCH_HISTORIES=C:D give A, B, C, D in that order."""
    argv = ["--histories", "A", "--other", "x", "--histories=B"]
    env = {ENV_VAR: f"C{__import__('os').pathsep}D"}
    assert user_dirs(argv, env) == [Path("A"), Path("B"), Path("C"), Path("D")]
    assert user_dirs([], {}) == []


def test_list_history_files_keeps_history_suffixes_and_drops_duplicates(tmp_path):
    """Only history-like files are offered, each once even when two folders overlap."""
    (tmp_path / "a.jsonl").write_text("{}")
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    files = list_history_files([tmp_path, tmp_path, tmp_path / "missing"])
    assert [f.label for f in files] == [f"{tmp_path.name}/a.jsonl", f"{tmp_path.name}/b.json"]


def test_the_app_opens_on_a_shipped_sample():
    """The repository's samples are found and the long one is the default."""
    files = list_history_files(sample_dirs())
    chosen = default_history_file(files)
    assert chosen is not None and chosen.path.name == "long.jsonl"


def test_generated_history_is_a_fallback_when_no_file_ships():
    """Without the repository, the app still opens on a small synthetic history."""
    history = generated_history()
    assert isinstance(history, History) and len(history) > 10


@pytest.mark.parametrize("fmt", sorted(format_samples()))
def test_read_upload_reads_every_format(fmt):
    """Uploaded bytes of each reader's format give a non-empty history."""
    name, data = format_samples()[fmt]
    (history,) = read_upload(name, data)
    assert len(history) > 0


def test_read_upload_reads_every_chat_of_a_stagewise_store(tmp_path):
    """A SQLite store yields one history per chat with messages."""
    histories = read_upload("instances.sqlite", stagewise_store_bytes(2))
    assert [h.id for h in histories] == ["chat0", "chat1"]
    assert [len(h) for h in histories] == [2, 2]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"messages": [', "bad.json"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b"", "empty"),
        (b"SQLite format 3\x00" + b"\x00" * 100, "bad.json"),
        (b'{"role": "robot", "content": "x"}\n', "bad.json"),
    ],
    ids=["truncated-json", "binary", "empty", "broken-sqlite", "unknown-shape"],
)
def test_bad_uploads_raise_history_error_naming_the_file(data, expected):
    """Whatever is wrong, the error is a HistoryError whose message names the file or the problem."""
    with pytest.raises(HistoryError) as info:
        read_upload("bad.json", data)
    assert expected in str(info.value)
