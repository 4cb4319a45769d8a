"""Argument helpers shared by the commands: history paths, knob files, ``--set`` and presets."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.knobs import Knobs, knobs_from_dict, load_knobs, parse_knob_assignment


def add_knob_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", help="start from a shipped preset (see `workbench presets`)")
    parser.add_argument("--config", type=Path, help="a knobs YAML file (applied after the preset)")
    parser.add_argument(
        "--set", dest="assignments", action="append", default=[], metavar="KNOB=VALUE",
        help="override one knob (repeatable), e.g. --set trigger_ratio=0.5",
    )


def knobs_from_args(args: argparse.Namespace) -> Knobs:
    """Preset, then config file, then --set overrides, each validated with its knob's name."""
    knobs = Knobs()
    if getattr(args, "preset", None):
        from workbench.presets import get_preset

        knobs = get_preset(args.preset)
    if getattr(args, "config", None):
        path: Path = args.config
        text = path.read_text(encoding="utf-8")
        loaded = load_knobs(text, source=str(path))
        knobs = loaded if not getattr(args, "preset", None) else knobs_from_dict(
            _changed(loaded), base=knobs, source=str(path)
        )
    overrides = dict(parse_knob_assignment(a) for a in getattr(args, "assignments", []) or [])
    if overrides:
        knobs = knobs_from_dict(overrides, base=knobs, source="--set")
    return knobs


def _changed(knobs: Knobs) -> dict[str, object]:
    default = Knobs()
    return {k: v for k, v in knobs.__dict__.items() if getattr(default, k) != v}
