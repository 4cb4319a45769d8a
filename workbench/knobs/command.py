"""The command line that reproduces a set of knobs: ``workbench simulate HISTORY --set k=v ...``.

Only knobs that differ from the base (the defaults, or a preset named with ``--preset``) are written.
Each value is written so that ``parse_knob_assignment`` reads back the same value. Pure text.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from typing import Any

import yaml

from workbench.knobs import Knobs


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        # Quote strings that YAML would read as something else (numbers, booleans, null, empty).
        try:
            plain = bool(value) and yaml.safe_load(value) == value
        except yaml.YAMLError:
            plain = False
        return value if plain else json.dumps(value)
    return str(value)


def changed_knobs(knobs: Knobs, base: Knobs | None = None) -> dict[str, Any]:
    """Knobs whose value differs from ``base`` (the defaults when None), in dataclass order."""
    base = base or Knobs()
    return {
        f.name: getattr(knobs, f.name)
        for f in dataclasses.fields(Knobs)
        if getattr(knobs, f.name) != getattr(base, f.name)
    }


def cli_command(history: str, knobs: Knobs, *, preset: str | None = None, base: Knobs | None = None) -> str:
    """A shell command that replays ``history`` with ``knobs`` (``base``: the preset's knobs, if any)."""
    parts = ["workbench", "simulate", shlex.quote(history)]
    if preset:
        parts += ["--preset", shlex.quote(preset)]
    for name, value in changed_knobs(knobs, base).items():
        parts += ["--set", shlex.quote(f"{name}={_value_text(value)}")]
    return " ".join(parts)
