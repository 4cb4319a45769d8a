"""Model prices and windows, read from litellm's bundled registry file without importing litellm.

Importing litellm costs seconds; its price map is a plain JSON file inside the package, so we read
that file directly (``counting.registry``: the entries a run looks up come from a small disk cache, exactly as
a parse of the whole file gives them). Unknown models get zero prices and are flagged, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.counting.registry import full_registry, registry_entry


@dataclass(frozen=True, kw_only=True)
class Prices:
    """Dollars per token for one model, plus its window, as the registry states them."""

    model: str
    input_per_token: float = 0.0
    output_per_token: float = 0.0
    cache_read_per_token: float | None = None
    cache_write_per_token: float | None = None
    cache_write_1h_per_token: float | None = None  # Anthropic's 1-hour cache entries (``ttl: "1h"``)
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    known: bool = False


def list_models(*, mode: str = "chat") -> list[str]:
    """Model names in the registry whose mode matches (chat models by default), sorted."""
    return sorted(k for k, v in full_registry().items() if isinstance(v, dict) and v.get("mode") == mode)


def get_prices(model: str) -> Prices:
    """Prices for ``model``; tries the name as given, then without a provider prefix."""
    entry = registry_entry(model)
    if entry is None and "/" in model:
        entry = registry_entry(model.split("/", 1)[1])
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
        cache_write_1h_per_token=num("cache_creation_input_token_cost_above_1hr"),
        max_input_tokens=whole("max_input_tokens"),
        max_output_tokens=whole("max_output_tokens"),
        known=True,
    )


def price_note(prices: Prices) -> str:
    """How dollars are priced for ``prices.model``, in one line: per million tokens, list and cached.

    "List" bills every input token at the input price; "with prompt caching" bills cache reads and writes at
    their own prices (the input price where the registry has none)."""
    if not prices.known:
        return f"{prices.model} is not in the price registry: its dollars are 0"

    def per_m(value: float | None) -> str:
        return "–" if value is None else f"${value * 1_000_000:,.2f}"

    writes = per_m(prices.cache_write_per_token)
    if prices.cache_write_1h_per_token is not None:
        writes += f" (1-hour entries {per_m(prices.cache_write_1h_per_token)})"
    return (f"{prices.model} at list price: input {per_m(prices.input_per_token)}, output "
            f"{per_m(prices.output_per_token)} per million tokens; with prompt caching: cache reads "
            f"{per_m(prices.cache_read_per_token)}, cache writes {writes} per million")
