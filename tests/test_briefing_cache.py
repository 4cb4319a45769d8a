"""The briefing cache: content-addressed keys without credentials, a configurable directory, stats, clear."""

from __future__ import annotations

import pytest

from workbench.briefing.cache import BriefingCache, cache_key
from workbench.cli import main
from workbench.counting.registry import default_cache_dir

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
PARAMS = {"temperature": 0.1, "max_tokens": 20_000}


def test_key_is_stable_and_depends_on_every_input():
    base = cache_key("openai/m", MESSAGES, PARAMS, "v1")
    assert base == cache_key("openai/m", [dict(m) for m in MESSAGES], dict(reversed(PARAMS.items())), "v1")
    assert len(base) == 64
    variants = [
        cache_key("openai/other", MESSAGES, PARAMS, "v1"),
        cache_key("openai/m", [*MESSAGES[:1], {"role": "user", "content": "hello!"}], PARAMS, "v1"),
        cache_key("openai/m", MESSAGES, {**PARAMS, "temperature": 0.2}, "v1"),
        cache_key("openai/m", MESSAGES, PARAMS, "v2"),
    ]
    assert len({base, *variants}) == 5


@pytest.mark.parametrize("field", ["api_key", "api_base", "headers", "extra_headers", "base_url", "timeout"])
def test_credentials_and_transport_never_enter_a_key(field):
    """A key built with a secret (or anything that is not a sampling parameter) is refused by name."""
    with pytest.raises(ValueError, match=field):
        cache_key("openai/m", MESSAGES, {**PARAMS, field: "sk-secret"}, "v1")


def test_directory_from_argument_env_or_home(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
    assert BriefingCache().directory == tmp_path / "env"
    assert BriefingCache(tmp_path / "arg").directory == tmp_path / "arg"
    monkeypatch.delenv("WORKBENCH_CACHE_DIR")
    assert str(default_cache_dir()).endswith(".cache/compaction-workbench")


def test_hits_misses_persist_and_clear_resets(tmp_path):
    with BriefingCache(tmp_path, size_limit_bytes=10_000_000) as cache:
        assert cache.get("k1") is None
        cache.set("k1", {"text": "briefing", "chars": 8})
        assert cache.get("k1") == {"text": "briefing", "chars": 8}
        assert cache.lookup(["missing", "k1"]) == ("k1", {"text": "briefing", "chars": 8})
        assert cache.lookup(["missing", "also-missing"]) is None
        assert (cache.hits, cache.misses) == (2, 2)
    with BriefingCache(tmp_path) as again:
        s = again.stats()
        assert (s.entries, s.hits, s.misses) == (1, 2, 2)
        assert s.size_bytes > 0 and s.hit_ratio == 0.5
        assert again.clear() == 1
        assert (again.stats().entries, again.stats().hits) == (0, 0)


def test_cache_command_stats_and_clear(tmp_path, capsys):
    with BriefingCache(tmp_path) as cache:
        cache.set("k", {"text": "x"})
    assert main(["cache", "stats", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out and "entries    1" in out
    assert main(["cache", "clear", "--dir", str(tmp_path)]) == 0
    assert "removed 1 cached briefing from" in capsys.readouterr().out
    with BriefingCache(tmp_path) as cache:
        assert len(cache) == 0
