"""Model prices and windows, read from litellm's bundled registry file without importing litellm.

Importing litellm costs seconds; its price map is a plain JSON file inside the package, so we read
that file directly (once per process). Unknown models get zero prices and are flagged, never guessed.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Prices:
    """Dollars per token for one model, plus its window, as the registry states them."""

    model: str
    input_per_token: float = 0.0
    output_per_token: float = 0.0
    cache_read_per_token: float | None = None
    cache_write_per_token: float | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    known: bool = False


_HUGE = 2.0**63


@functools.cache
def _registry(exact: bool = False) -> dict[str, Any]:
    """The registry as ``json.loads`` of the file reads it. orjson reads the 3.5 MB in two thirds of the time
    (~8 ms of a first ``workbench reality`` run) and gives json's values, except that an integer past 64 bits
    becomes a float of 2**63 or more: ``_exact_entry`` takes such an entry from ``_registry(exact=True)``."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    data = None
    if not exact:
        try:
            import orjson

            data = orjson.loads(raw)  # refuses what json reads differently (NaN, lone surrogates, a BOM)
        except (ImportError, ValueError):
            data = None
    if data is None:
        data = json.loads(raw.decode("utf-8"))
    data.pop("sample_spec", None)
    return data


def _exact_entry(name: str) -> Any:
    """The registry's entry for ``name``, as json reads it (see ``_registry``)."""
    entry = _registry().get(name)
    if isinstance(entry, dict) and any(type(v) is float and not -_HUGE < v < _HUGE for v in entry.values()):
        return _registry(exact=True).get(name)
    return entry


def list_models(*, mode: str = "chat") -> list[str]:
    """Model names in the registry whose mode matches (chat models by default), sorted."""
    return sorted(k for k, v in _registry().items() if isinstance(v, dict) and v.get("mode") == mode)


def get_prices(model: str) -> Prices:
    """Prices for ``model``; tries the name as given, then without a provider prefix."""
    entry = _exact_entry(model)
    if entry is None and "/" in model:
        entry = _exact_entry(model.split("/", 1)[1])
    if not isinstance(entry, dict):
        return Prices(model=model)

    def num(key: str) -> float | None:
        value = entry.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    def whole(key: str) -> int | None:
        value = entry.get(key)
        return int(value) if isinstance(value, (int, float)) else None

    return Prices(
        model=model,
        input_per_token=num("input_cost_per_token") or 0.0,
        output_per_token=num("output_cost_per_token") or 0.0,
        cache_read_per_token=num("cache_read_input_token_cost"),
        cache_write_per_token=num("cache_creation_input_token_cost"),
        max_input_tokens=whole("max_input_tokens"),
        max_output_tokens=whole("max_output_tokens"),
        known=True,
    )
