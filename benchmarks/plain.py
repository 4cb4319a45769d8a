"""A result value as plain JSON data, for the equality checks that compare two commits' outputs
(``probe_equality.py``, ``reality_equivalence.py``): both sides go through this one function, so a
difference in the JSON is a difference in the results."""

from __future__ import annotations

import dataclasses
from typing import Any


def plain(value: Any) -> Any:
    """JSON-ready: dataclasses as dicts, tuples as lists, numpy scalars as numbers, anything else as its str."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "item") and not isinstance(value, bytes):  # a numpy scalar
        return value.item()
    return str(value)
