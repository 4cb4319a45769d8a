"""A Knobs value with (nearly) every knob moved off its default, for widget and YAML round trips.

Built by trial from KNOB_SPECS so that knobs added later are covered without editing this file.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.knobs import KNOB_SPECS, Knobs
from workbench.policies import list_policy_names

STRING_CANDIDATES = {"model": ["gpt-4o", "gpt-4.1-mini"], "briefer_model": ["gpt-4o-mini", "gpt-4.1-nano"]}


def _candidates(name: str, kind: str, default: Any) -> list[Any]:
    spec = KNOB_SPECS.get(name)
    if kind == "bool":
        return [not default]
    if spec is not None and spec.choices:
        return [c for c in spec.choices if c != default]
    if name == "strategy":
        return [p for p in list_policy_names() if p != default]
    if kind == "str":
        return STRING_CANDIDATES.get(name, ["3", "x"])
    low = spec.low if spec and spec.low is not None else 0
    high = spec.high if spec and spec.high is not None else (default or 1) * 10
    if kind == "float":
        return [round(low + (high - low) * f, 3) for f in (0.37, 0.61, 0.13)]
    return [int(low + (high - low) * f) for f in (0.0003, 0.37, 0.0)] + [int(default) + 1, int(low) + 1]


def moved_knobs(base: Knobs | None = None) -> Knobs:
    """Each knob in turn set to a valid value different from ``base`` (strategy last, it may constrain others)."""
    knobs = base or Knobs()
    fields = [f for f in dataclasses.fields(Knobs) if f.name != "strategy"]
    fields += [f for f in dataclasses.fields(Knobs) if f.name == "strategy"]
    for f in fields:
        kind = f.type if isinstance(f.type, str) else f.type.__name__
        default = getattr(knobs, f.name)
        for value in _candidates(f.name, kind, default):
            if value == default:
                continue
            try:
                knobs = knobs.replace(**{f.name: value})
            except ValueError:
                continue
            break
    return knobs


# One step off a default, per knob, for tests that move every knob in turn (tests/test_cache_coherence.py). A knob
# at 0 ("off") steps to a value that switches it on, chosen by its unit so that it changes what a replay does.
STEP_STRINGS = {"model": ["gpt-4o"], "briefer_model": ["gpt-4o-mini"], "manual_compact_checks": ["5, 20"],
                "pin_pattern": ["error|Error|test"]}
ON_VALUES = {"tokens": 2_000, "messages": 20, "turns": 3, "checks": 3, "files": 3, "observations": 3, "chars": 1_000}


def _step_candidates(name: str, kind: str, default: Any) -> list[Any]:
    spec = KNOB_SPECS[name]
    if kind == "bool":
        return [not default]
    if spec.choices:
        at = spec.choices.index(default) if default in spec.choices else -1
        return [*spec.choices[at + 1:], *spec.choices[:max(at, 0)]]
    if name == "strategy":
        names = list_policy_names()
        at = names.index(default) if default in names else -1
        return [*names[at + 1:], *names[:max(at, 0)]]
    if kind == "str":
        return STEP_STRINGS.get(name, ["3", "x"])
    low = spec.low if spec.low is not None else 0.0
    high = spec.high if spec.high is not None else max(1.0, abs(default) * 10)
    out: list[Any] = [default * 2, default / 2, ON_VALUES.get(spec.unit), low + (high - low) * 0.1, high, low]
    if kind == "int":
        return [int(round(v)) for v in out if v is not None]
    return [round(float(v), 4) for v in out if v is not None]


def one_step(base: Knobs, name: str) -> Knobs | None:
    """``base`` with knob ``name`` moved one step off its value (the first valid candidate), or None if none is."""
    kind = next(f.type if isinstance(f.type, str) else f.type.__name__ for f in dataclasses.fields(Knobs)
                if f.name == name)
    value = getattr(base, name)
    for candidate in _step_candidates(name, kind, value):
        if candidate == value:
            continue
        try:
            return base.replace(**{name: candidate})
        except ValueError:
            continue
    return None
