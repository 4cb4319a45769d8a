"""Playground bundles in stagewise's layout: real compression points, replayed compressions, the command."""

from __future__ import annotations

import json

import pytest
from conftest import in_ci, shared_dir

from workbench.analysis.bundles import (
    FILES,
    bundle_folders,
    chat_folder,
    clean_title,
    make_bundles,
    real_bundles,
    run_bundles,
)
from workbench.briefing.extractive import ExtractiveBriefer
from workbench.briefing.prompt import SYSTEM_PROMPT, build_user_message
from workbench.cli import main
from workbench.history.model import History, Message, text_part
from workbench.knobs import Knobs
from workbench.replay import simulate
from workbench.stagewise.serialize import serialize_compact_history

SAMPLE = shared_dir() / "golden" / "stagewise_instances_sample.sqlite"
CHAT_B = "5e5e5e5e-0000-4000-8000-000000000002"
STAGEWISE_FIELDS = [
    "chatId", "chatTitle", "channel", "compressionNumber", "totalCompressions", "totalChatMessages",
    "boundaryMessageIndex", "boundaryMessageId", "totalMessagesInSlice", "serializedMessageCount",
    "previousCompressionIndex", "previousCompressionSize", "compactHistoryChars", "userMessageChars",
    "actualOutputChars", "actualOutputIncludesPreviousTag",
]
# Missing shared data skips with the reason, but fails under CI (where ../shared is always laid beside the clone).
needs_sample = pytest.mark.skipif(not SAMPLE.is_file() and not in_ci(), reason=f"sample store not found: {SAMPLE}")


def chat_b() -> History:
    from workbench.history.readers.stagewise_store import load_stagewise_sqlite

    return load_stagewise_sqlite(SAMPLE, chat_id=CHAT_B)


@pytest.mark.parametrize(
    ("title", "folder"),
    [("SYNTHETIC chat B: chained briefings", "synthetic-chat-b-chained-briefings"),
     ("Fix   the *bug*  in a.py!", "fix-the-bug-in-apy"), ("", ""), ("x" * 100, "x" * 80)],
    ids=["sample", "punctuation", "untitled", "long"],
)
def test_titles_are_cleaned_like_the_script(title, folder):
    assert clean_title(title) == folder
    assert chat_folder(3, title) == f"003-{folder}"


@needs_sample
def test_real_points_give_one_bundle_each_with_stagewise_metadata():
    h = chat_b()
    files = real_bundles(h, channel="prerelease")
    folders = bundle_folders(list(files))
    assert folders == ["001-synthetic-chat-b-chained-briefings/compression-001",
                       "001-synthetic-chat-b-chained-briefings/compression-002"]
    for folder in folders:
        assert {f"{folder}/{name}" for name in FILES} <= set(files)
    first = json.loads(files[folders[0] + "/metadata.json"])
    second = json.loads(files[folders[1] + "/metadata.json"])
    assert list(second) == [*STAGEWISE_FIELDS, "workbench"]
    assert (first["boundaryMessageIndex"], first["previousCompressionIndex"], first["previousCompressionSize"],
            first["serializedMessageCount"]) == (9, None, None, 9)
    assert (second["boundaryMessageIndex"], second["previousCompressionIndex"], second["previousCompressionSize"],
            second["serializedMessageCount"], second["totalMessagesInSlice"]) == (18, 9, 350, 9, 18)
    assert (second["chatId"], second["channel"], second["totalChatMessages"], second["totalCompressions"]) == (
        CHAT_B, "prerelease", 24, 2)
    assert second["boundaryMessageId"] == "5e5e5e5e-0002-4000-9000-000000000018"
    assert files[folders[1] + "/actual-output.md"] == h.messages[18].briefing
    assert second["actualOutputChars"] == 593 and second["actualOutputIncludesPreviousTag"] is False
    compact = files[folders[1] + "/compact-history.xml"]
    assert compact.startswith("<previous-chat-history>## SYNTHETIC briefing B1")  # chained: stops at seq 9
    assert files[folders[1] + "/user-message.md"] == build_user_message(compact, 350)
    assert second["compactHistoryChars"] == len(compact)
    assert files[folders[0] + "/system-prompt.md"] == SYSTEM_PROMPT


@needs_sample
def test_without_host_markers_the_compact_history_is_the_scripts():
    h = chat_b()
    files = real_bundles(h, host=False)
    compact = files["001-synthetic-chat-b-chained-briefings/compression-001/compact-history.xml"]
    assert compact == serialize_compact_history(h.messages[:9], host=False)


def replayed() -> tuple[History, object]:
    msgs = tuple(Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
                         parts=(text_part(f"step {i} on [](path:w1/f{i}.py) " + "y" * 2_500),)) for i in range(50))
    history = History(id="replayed", messages=msgs, meta={"title": "Replay: demo"})
    return history, simulate(history, Knobs(context_window_tokens=16_000, min_kept_messages=5), ExtractiveBriefer())


def test_replay_bundles_use_the_briefers_text_and_chain_it():
    history, run = replayed()
    files = make_bundles(history, run)
    landed = [c for c in run.compressions if c.status == "landed"]
    folders = bundle_folders(list(files))
    assert len(folders) == len(landed) >= 3
    assert folders[0].startswith("001-replay-demo/compression-001")
    for n, (folder, comp) in enumerate(zip(folders, landed, strict=True), start=1):
        meta = json.loads(files[folder + "/metadata.json"])
        assert files[folder + "/actual-output.md"] == comp.record.text
        assert (meta["compressionNumber"], meta["boundaryMessageIndex"]) == (n, comp.boundary)
        assert meta["compactHistoryChars"] == comp.compact_history_chars  # what the replay's request measured
        assert meta["workbench"]["briefer"] == "extractive"
    second = files[folders[1] + "/compact-history.xml"]
    assert second.startswith("<previous-chat-history>" + landed[0].record.text + "</previous-chat-history>")
    meta = json.loads(files[folders[1] + "/metadata.json"])
    assert (meta["previousCompressionIndex"], meta["previousCompressionSize"]) == (landed[0].boundary,
                                                                                   landed[0].briefing_chars)


def test_size_only_briefings_get_a_placeholder():
    history, _ = replayed()
    run = simulate(history, Knobs(context_window_tokens=16_000, min_kept_messages=5))
    files = run_bundles(history, run)
    outputs = [t for p, t in files.items() if p.endswith("actual-output.md")]
    assert outputs and all("size only, no text" in t for t in outputs)


def test_a_history_without_briefings_needs_a_run():
    history, _ = replayed()
    with pytest.raises(ValueError, match="no briefings"):
        make_bundles(history)


def test_command_writes_files_and_refuses_a_non_empty_folder(tmp_path, capsys):
    history, _ = replayed()
    src = tmp_path / "h.jsonl"
    src.write_text("\n".join(json.dumps(m.to_dict()) for m in history.messages) + "\n")
    out = tmp_path / "out"
    args = ["bundles", str(src), "--out", str(out), "--briefer", "extractive",
            "--set", "context_window_tokens=16000", "--set", "min_kept_messages=5"]
    assert main(args) == 0
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json"))
    assert written and all(p.endswith("/metadata.json") for p in written)
    assert "compression bundles" in capsys.readouterr().out
    assert main(args) == 2
    assert "not empty" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0


@needs_sample
def test_command_on_a_stagewise_store_makes_one_folder_per_chat_with_briefings(tmp_path):
    assert main(["bundles", str(SAMPLE), "--out", str(tmp_path / "b")]) == 0
    chats = sorted(p.name for p in (tmp_path / "b").iterdir())
    # newest first (last_message_at): the side chat, chat B, chat A
    assert chats == ["001-side-chat-synthetic-chat-b-chained-briefings", "002-synthetic-chat-b-chained-briefings",
                     "003-synthetic-chat-a-one-briefing"]
    assert len(list((tmp_path / "b").rglob("metadata.json"))) == 5
