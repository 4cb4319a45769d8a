"""Token counting: tiktoken encodings work offline from litellm's files; counts are made once per message."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from scripted import tool_history, uniform_history

from workbench.counting.encodings import (
    TOKENIZER_OVERHEAD_TOKENS,
    count_text_tokens,
    get_encoding,
    litellm_tokenizer_dir,
)
from workbench.counting.tokens import CountCache
from workbench.knobs import Knobs
from workbench.replay import simulate


def test_litellm_ships_the_encodings():
    folder = litellm_tokenizer_dir()
    assert folder is not None and folder.is_dir()
    assert len([p for p in folder.iterdir() if len(p.name) == 40]) >= 3  # tiktoken's sha1-named cache files


def test_encodings_load_offline_in_a_fresh_process():
    """No network: a clean process with TIKTOKEN_CACHE_DIR unset still encodes with both encodings."""
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env["HTTPS_PROXY"] = env["HTTP_PROXY"] = "http://127.0.0.1:9"  # any download attempt would fail fast
    code = (
        "from workbench.counting.encodings import get_encoding; "
        "print(len(get_encoding('cl100k_base').encode('hello world')), "
        "len(get_encoding('o200k_base').encode('hello world')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "2"]


@pytest.mark.parametrize(
    ("text", "encoding", "tokens"),
    [("hello world", "cl100k_base", 2), ("hello world", "o200k_base", 2), ("", "cl100k_base", 0)],
)
def test_known_counts(text, encoding, tokens):
    assert count_text_tokens(text, encoding) == tokens == len(get_encoding(encoding).encode(text))


def test_estimate_counts_utf16_units():
    assert count_text_tokens("a" * 9, "estimate") == 3  # ceil(9 / 4)
    assert count_text_tokens("😀" * 2, "estimate") == 1  # 4 UTF-16 units


def test_tokenizer_counts_per_message_include_the_chat_overhead():
    h = uniform_history(3, chars=8)  # "aaaaaaaa" per message
    counts = CountCache().counts_for(h).encoded("cl100k_base")
    enc = get_encoding("cl100k_base")
    for msg, value in zip(h.messages, counts, strict=True):
        assert value == len(enc.encode(msg.role + "\n" + "a" * 8)) + TOKENIZER_OVERHEAD_TOKENS


def test_trigger_counter_and_estimator_are_chosen_separately():
    """Counting the trigger with a tokenizer changes when compression fires; the walk keeps its estimate."""
    h = tool_history(60)
    est = simulate(h, Knobs(context_window_tokens=32_000))
    tok = simulate(h, Knobs(context_window_tokens=32_000, trigger_counter="o200k_base"))
    assert est.compressions and tok.compressions
    assert [c.index_started for c in est.compressions] != [c.index_started for c in tok.compressions]
    assert tok.knobs.boundary_counter == "estimate"


def test_each_message_is_counted_once_across_knob_changes():
    cache = CountCache()
    h = uniform_history(40)
    simulate(h, Knobs(trigger_counter="cl100k_base"), cache=cache)
    encoded_before = dict(cache.encoded["cl100k_base"])
    simulate(h, Knobs(trigger_counter="cl100k_base", trigger_ratio=0.3, chars_per_token=3.0), cache=cache)
    assert cache.encoded["cl100k_base"] == encoded_before
    assert len(encoded_before) == len({m.digest for m in h.messages})


def _slices(h, n: int):
    """Overlapping windows of ``h`` as histories of their own, the way a log replay cuts them."""
    from workbench.history.model import History

    step = max(1, len(h.messages) // n)
    return [History(id=f"{h.id}@{lo}", messages=h.messages[lo : lo + 2 * step]) for lo in range(0, len(h.messages), step)]


@pytest.mark.parametrize("counter", ["estimate", "cl100k_base"])
def test_counts_keyed_by_identity_equal_counts_keyed_by_content(counter):
    """CountCache(by_identity=True) gives every window the same replay as the content-keyed cache, and
    computes no content digest at all (the point of it: hashing every message's content cost a log replay
    0.3x of reading the log)."""
    knobs = Knobs(context_window_tokens=24_000, trigger_counter=counter)
    hashed, unhashed = tool_history(40), tool_history(40)  # equal content, other objects
    by_content, by_identity = CountCache(), CountCache(by_identity=True)
    compressed = 0
    for a_seg, b_seg in zip(_slices(hashed, 4), _slices(unhashed, 4), strict=True):
        a = simulate(a_seg, knobs, cache=by_content)
        b = simulate(b_seg, knobs, cache=by_identity)
        assert a.timeline.equals(b.timeline)
        assert a.compressions == b.compressions and a.metrics == b.metrics
        compressed += len(a.compressions)
        assert "_digest" not in b_seg.__dict__
    assert compressed  # the windows do compact: the comparison covers the briefing request's counts too
    assert all("_digest" in m.__dict__ for m in hashed.messages)
    assert not any("_digest" in m.__dict__ for m in unhashed.messages)


def test_identity_keys_share_parts_with_metadata_copies_and_hold_what_they_keyed():
    h = uniform_history(6)
    cache = CountCache(by_identity=True)
    copy = h.messages[0].with_metadata(usage={"input_tokens": 5})
    assert cache.parts_key(copy) == cache.parts_key(h.messages[0])  # text counts read only the parts
    assert cache.key(copy) != cache.key(h.messages[0])  # stagewise's count reads metadata too
    assert all(cache._held[k] is obj for k, obj in ((cache.key(copy), copy), (id(copy.parts), copy.parts)))
    assert CountCache().key(copy) == copy.digest


def test_a_metadata_copy_counts_its_parts_once_and_its_own_metadata(monkeypatch):
    import workbench.counting.tokens as tokens_module
    from workbench.history.model import History
    from workbench.stagewise.estimate import content_chars

    h = uniform_history(4)
    first = h.messages[0]
    copies = [first.with_metadata(usage={"input_tokens": 5}), first.with_metadata(compressedHistory="x" * 40)]
    both = History(id="copies", messages=(*h.messages, *copies))
    counted = []
    real = tokens_module.parts_chars
    monkeypatch.setattr(tokens_module, "parts_chars", lambda parts: counted.append(parts) or real(parts))
    for cache in (CountCache(by_identity=True), CountCache()):
        counted.clear()
        chars = cache.counts_for(both).content_chars
        assert chars.tolist() == [content_chars(m) for m in both.messages]  # the briefing's 40 chars counted
        assert len(counted) == (4 if cache.by_identity else 6)  # by content, each copy is another key
