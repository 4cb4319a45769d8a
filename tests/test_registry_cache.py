"""The disk cache of litellm's price registry gives exactly what a parse of the whole file gives, or is not used."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.counting import registry
from workbench.counting.prices import get_prices
from workbench.knobs import Knobs
from workbench.presets import get_preset, list_preset_names

REAL = registry.registry_path()
pytestmark = pytest.mark.skipif(REAL is None or not REAL.is_file(), reason="litellm's registry file is not installed")


def _fresh_process() -> None:
    """Forget what this process parsed or read, as a new process would (the disk cache stays)."""
    if hasattr(registry._parsed, "cache_clear"):  # not while a test forbids parsing
        registry._parsed.cache_clear()
    registry._disks.clear()


@pytest.fixture()
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the installed registry file that a test may change, and a cache dir of its own."""
    assert REAL is not None
    copy = tmp_path / "model_prices_and_context_window_backup.json"
    shutil.copyfile(REAL, copy)
    monkeypatch.setattr(registry, "registry_path", lambda: copy)
    monkeypatch.setenv(registry.ENV_DIR, str(tmp_path / "cache"))
    _fresh_process()
    yield copy
    monkeypatch.undo()
    _fresh_process()


def _as_json_reads_it(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data.pop("sample_spec", None)
    return data


def _same(a: Any, b: Any) -> bool:
    """Equal values, types and key order (json.dumps writes floats by repr: exact; NaN as NaN)."""
    return json.dumps(a) == json.dumps(b)


def _names(data: dict[str, Any]) -> list[str]:
    """Every model a preset (or the default knobs) names, the entries json and orjson read apart, and a sample."""
    shipped = {Knobs().model, Knobs().briefer_model}
    for name in list_preset_names():
        knobs = get_preset(name)
        shipped |= {knobs.model, knobs.briefer_model}
    odd = [k for k, v in data.items() if isinstance(v, dict) and any(
        isinstance(x, float) and (not math.isfinite(x) or abs(x) >= 2.0**63) or isinstance(x, int) and abs(x) >= 2**63
        for x in v.values())]
    sample = random.Random(11).sample(sorted(data), 250)
    return sorted(shipped) + odd + sample + ["no-such-model", "anthropic/claude-sonnet-4-5", "sample_spec"]


def _parse_forbidden(*_: Any) -> Any:
    raise AssertionError("the whole registry was parsed although the cache holds the entry")


def test_cached_entries_are_the_full_parse_for_every_shipped_model_and_a_sample(
        source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    truth = _as_json_reads_it(source)
    names = _names(truth)
    assert len(names) > 250
    for name in names:  # a cold cache: parsed, and written back
        assert _same(registry.registry_entry(name), truth.get(name)), name
    cache_file = Path(os.environ[registry.ENV_DIR]) / "registry" / f"litellm-{registry.CACHE_FORMAT}.json"
    assert cache_file.is_file()
    _fresh_process()
    monkeypatch.setattr(registry, "_parsed", _parse_forbidden)
    for name in names:  # a warm cache, in a new process: every value from the cache alone
        assert _same(registry.registry_entry(name), truth.get(name)), name
    prices = get_prices("anthropic/claude-sonnet-4-5")  # the prefix is tried off too, from the cache
    assert prices.known and prices.input_per_token == float(truth["claude-sonnet-4-5"]["input_cost_per_token"])


def test_a_changed_registry_file_is_parsed_again(source: Path) -> None:
    name = "claude-sonnet-4-5"
    before = registry.registry_entry(name)["input_cost_per_token"]
    data = json.loads(source.read_text(encoding="utf-8"))
    data[name]["input_cost_per_token"] = 123.0  # same file, one price changed: a new size, mtime and ctime
    source.write_text(json.dumps(data, indent=4), encoding="utf-8")
    _fresh_process()
    assert registry.registry_entry(name)["input_cost_per_token"] == 123.0 != before


def test_a_corrupt_or_foreign_cache_falls_back_to_the_parse_and_is_rewritten(source: Path) -> None:
    truth = _as_json_reads_it(source)
    name = "gpt-4o"
    registry.registry_entry(name)
    cache_file = Path(os.environ[registry.ENV_DIR]) / "registry" / f"litellm-{registry.CACHE_FORMAT}.json"
    good = json.loads(cache_file.read_text())
    wrong = dict(good, entries={name: [{"input_cost_per_token": 9.0}]})
    for bad in ["{not json", "\xff", json.dumps(dict(wrong, workbench="0.0.0")),
                json.dumps(dict(wrong, registry=[*good["registry"][:2], 1, 1, 1])), json.dumps(dict(good, entries=[])),
                json.dumps(dict(good, entries={name: [1, 2]})), "[]"]:
        cache_file.write_bytes(bad.encode("utf-8", "surrogateescape") if bad != "\xff" else b"\xff")
        _fresh_process()
        assert _same(registry.registry_entry(name), truth[name]), bad
        assert json.loads(cache_file.read_text())["entries"][name] == [truth[name]]


def test_an_unwritable_cache_dir_changes_nothing_but_the_speed(
        source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(registry.ENV_DIR, str(blocker / "cache"))  # mkdir fails: a path under a regular file
    truth = _as_json_reads_it(source)
    for name in ("claude-opus-4-5", "gpt-4o", "no-such-model"):
        assert _same(registry.registry_entry(name), truth.get(name))
    assert get_prices("claude-opus-4-5").max_output_tokens == truth["claude-opus-4-5"]["max_output_tokens"]
    assert not get_prices("no-such-model").known
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "model_prices_and_context_window_backup.json"]


def test_a_file_changed_while_this_process_holds_its_parse_is_not_cached_under_the_new_stamp(source: Path) -> None:
    registry.registry_entry("gpt-4o")  # parsed (the old file) and cached
    data = json.loads(source.read_text(encoding="utf-8"))
    data["claude-opus-4-5"]["max_output_tokens"] = 7
    source.write_text(json.dumps(data), encoding="utf-8")
    registry.registry_entry("claude-opus-4-5")  # served from this process's old parse: must not be cached as new
    _fresh_process()
    assert registry.registry_entry("claude-opus-4-5")["max_output_tokens"] == 7


def test_values_json_and_orjson_read_apart_survive_the_cache(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    odd = ('{"big": {"max_input_tokens": 123456789012345678901234567890, "input_cost_per_token": 1e-7},'
           ' "nan": {"input_cost_per_token": NaN, "x": -0.0, "y": Infinity},'
           ' "text": {"note": "\\ud800 lone", "nested": {"a": [1, 2.5, null, true]}, "mode": "chat"},'
           ' "dup": {"input_cost_per_token": 1, "input_cost_per_token": 2}, "null": null}')
    source.write_text(odd, encoding="utf-8")
    _fresh_process()
    truth = _as_json_reads_it(source)
    for name in [*truth, "absent"]:
        assert _same(registry.registry_entry(name), truth.get(name)), name
    _fresh_process()
    monkeypatch.setattr(registry, "_parsed", _parse_forbidden)
    for name in [*truth, "absent"]:
        got = registry.registry_entry(name)
        assert _same(got, truth.get(name)), name
    assert type(registry.registry_entry("big")["max_input_tokens"]) is int
