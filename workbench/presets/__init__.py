"""Presets: shipped knob files for well-known agents, each citing where its numbers come from.

A preset is a YAML file in ``workbench/presets/`` holding only the knobs that differ from the defaults,
plus ``title`` and ``source``, and for an agent whose behaviour changed between versions ``agent`` and
``versions`` (e.g. ``">=2.1.21"``, ``"2.1.2 - 2.1.20"``): ``preset_for(agent, version)`` picks the preset of
the version a log was written by. ``get_preset(name)`` returns validated Knobs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any

import yaml

from workbench.history.session_log import parse_version
from workbench.knobs import Knobs, knobs_from_dict


@dataclass(frozen=True)
class Preset:
    """A named set of knobs with a one-line description and its source.

    The knobs are validated when first asked for: picking a log's preset reads every preset's agent and version
    range, and validating all twenty (compiling their pin patterns) was ~9 ms of a process's first replay, for
    the one or two it uses. ``tests/test_presets.py`` validates every shipped preset."""

    name: str
    title: str
    source: str
    settings: Mapping[str, Any] = field(repr=False, hash=False)  # the file's knobs, as YAML read them
    agent: str | None = None
    versions: str | None = None

    @functools.cached_property
    def knobs(self) -> Knobs:
        """The validated knobs (a bad value raises here, naming the file)."""
        return knobs_from_dict(dict(self.settings), source=f"{self.name}.yaml")

    def covers(self, version: str | None) -> bool:
        """Whether this preset's version range holds ``version`` (no range: every version)."""
        return version_in_range(version, self.versions)


# libyaml's safe loader when PyYAML was built with it: the same values (tests/test_presets.py compares every
# preset) in a tenth of the pure-Python loader's time, which every first replay of a log pays.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _presets() -> dict[str, Preset]:
    out: dict[str, Preset] = {}
    folder = resources.files("workbench") / "presets"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        name = entry.name[: -len(".yaml")]
        data = yaml.load(entry.read_text(encoding="utf-8"), Loader=_LOADER) or {}
        title = str(data.pop("title", name))
        source = str(data.pop("source", ""))
        agent = data.pop("agent", None)
        versions = data.pop("versions", None)
        data.pop("version", None)
        out[name] = Preset(name=name, title=title, source=source, settings=MappingProxyType(data),
                           agent=str(agent) if agent else None, versions=str(versions) if versions else None)
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


def get_preset_info(name: str) -> Preset:
    """The whole preset (title, source, agent and version range), not only its knobs."""
    presets = _presets()
    if name not in presets:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(presets)}")
    return presets[name]


def preset_for(agent: str, version: str | None = None) -> str | None:
    """The preset of ``agent`` whose version range holds ``version`` (the newest one when the version is unknown
    or newer than every range); None when no preset names this agent."""
    candidates = [p for p in _presets().values() if p.agent == agent]
    if not candidates:
        return None
    for p in candidates:
        if version and p.covers(version):
            return p.name
    return max(candidates, key=lambda p: _range_top(p.versions)).name


def version_in_range(version: str | None, spec: str | None) -> bool:
    """``"2.1.25"`` in ``">=2.1.21"``, ``"<=2.1.1"``, ``"2.1.2 - 2.1.20"`` (inclusive), ``"0.142"``; no spec: True."""
    if not spec:
        return True
    if not version:
        return False
    v = parse_version(version)
    spec = spec.strip()
    if " - " in spec:
        low, high = (s.strip() for s in spec.split(" - ", 1))
        return parse_version(low) <= v <= parse_version(high)
    for op in (">=", "<=", ">", "<", "=="):
        if spec.startswith(op):
            bound = parse_version(spec[len(op):])
            return {">=": v >= bound, "<=": v <= bound, ">": v > bound, "<": v < bound, "==": v == bound}[op]
    return v[: len(parse_version(spec))] == parse_version(spec)


def _range_top(spec: str | None) -> tuple[int, ...]:
    """Sort key: how new the versions a range covers reach (open-ended ranges first)."""
    if not spec or spec.strip().startswith((">", ">=")):
        return (10**9,)
    if " - " in spec:
        return parse_version(spec.split(" - ", 1)[1])
    return parse_version(spec.lstrip("<=>"))
