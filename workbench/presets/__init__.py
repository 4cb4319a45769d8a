"""Presets: shipped knob files for well-known agents, each citing where its numbers come from.

A preset is a YAML file in ``workbench/presets/`` holding only the knobs that differ from the
defaults, plus ``name`` and ``source`` comments. ``get_preset(name)`` returns validated Knobs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import yaml

from workbench.knobs import Knobs, knobs_from_dict


@dataclass(frozen=True)
class Preset:
    """A named set of knobs with a one-line description and its source."""

    name: str
    title: str
    source: str
    knobs: Knobs


@functools.cache
def _presets() -> dict[str, Preset]:
    out: dict[str, Preset] = {}
    folder = resources.files("workbench") / "presets"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        name = entry.name[: -len(".yaml")]
        data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
        title = str(data.pop("title", name))
        source = str(data.pop("source", ""))
        data.pop("version", None)
        out[name] = Preset(name=name, title=title, source=source, knobs=knobs_from_dict(data, source=entry.name))
    return out


def list_preset_names() -> list[str]:
    return list(_presets())


def list_presets() -> list[Preset]:
    return list(_presets().values())


def get_preset(name: str) -> Knobs:
    """Knobs of a preset; unknown names list the known ones."""
    presets = _presets()
    if name not in presets:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(presets)}")
    return presets[name].knobs
