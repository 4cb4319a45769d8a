"""Argument helpers shared by the commands: history paths, knob files, ``--set`` and presets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from workbench.knobs import (
    MAX_YAML_CHARS,
    Knobs,
    decode_knobs_file,
    key_line,
    knobs_from_dict,
    load_knobs,
    parse_knob_assignment,
)


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
    text = ""
    if getattr(args, "config", None):
        path: Path = args.config
        from workbench.history.readers import check_history_file

        check_history_file(path, max_bytes=MAX_YAML_CHARS * 4, what="a knobs file")  # not /dev/zero
        text = decode_knobs_file(path.read_bytes(), source=str(path))
        loaded = load_knobs(text, source=str(path))
        knobs = loaded if not getattr(args, "preset", None) else knobs_from_dict(
            _changed(loaded), base=knobs, source=str(path)
        )
    overrides = dict(parse_knob_assignment(a) for a in getattr(args, "assignments", []) or [])
    if overrides:
        knobs = knobs_from_dict(overrides, base=knobs, source="--set")
    _check_strategy(knobs, args, text)
    return knobs


def _check_strategy(knobs: Knobs, args: argparse.Namespace, config_text: str) -> None:
    """An unknown strategy fails here, naming where it was set (a config line or --set), not mid-replay."""
    from workbench.policies import list_policy_names

    names = list_policy_names()
    if knobs.strategy in names:
        return
    from workbench.history.warnings import shown

    problem = f"strategy must be one of {', '.join(names)}, got {shown(knobs.strategy)}"
    assigned = any(a.split("=", 1)[0].strip() == "strategy" for a in getattr(args, "assignments", []) or [])
    if assigned:
        raise ValueError(f"--set: {problem}")
    if config_text:
        line = key_line(config_text, "strategy")
        raise ValueError(f"{args.config}{f':{line}' if line else ''}: {problem}")
    raise ValueError(problem)


def _changed(knobs: Knobs) -> dict[str, object]:
    default = Knobs()
    return {k: v for k, v in knobs.__dict__.items() if getattr(default, k) != v}


def whole_number(text: str, *, least: int, also: str = "") -> int:
    """An argparse value: a whole number of at least ``least`` (``also`` names another word the option takes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number{f' or {also}' if also else ''}, not {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"at least {least}, not {value}")
    return value


MAX_LINE_CHARS = 500  # an error or warning line on stderr is cut past this, saying how long it was


def one_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` on one line of at most ``limit`` characters (multi-line sqlite errors, 5 MB values)."""
    flat = " ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return flat if len(flat) <= limit else f"{flat[:limit]}… ({len(flat):,} chars)"


def show_warnings(command: str, history: Any) -> None:
    """Print a history's load warnings on stderr, one line each (``History.warnings``)."""
    for w in getattr(history, "warnings", ()):
        print(f"workbench {command}: warning: {one_line(str(w))}", file=sys.stderr)
