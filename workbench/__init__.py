"""Compaction Workbench: replay recorded agent conversations against compaction knobs.

    from workbench import load_history, simulate, Knobs
    run = simulate(load_history("sample_histories/long.jsonl"), Knobs(context_window_tokens=200_000))
    run.metrics.compressions, run.timeline

Names load lazily, so ``import workbench`` stays cheap and never pulls in litellm or streamlit.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "History": "workbench.history.model",
    "Message": "workbench.history.model",
    "Part": "workbench.history.model",
    "load_history": "workbench.history.readers",
    "parse_history": "workbench.history.readers",
    "HistoryError": "workbench.history.errors",
    "Knobs": "workbench.knobs",
    "load_knobs": "workbench.knobs",
    "dump_knobs": "workbench.knobs",
    "simulate": "workbench.replay",
    "Run": "workbench.replay.results",
    "SimulatedBriefer": "workbench.briefing.simulated",
    "list_policy_names": "workbench.policies",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
