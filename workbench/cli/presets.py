"""``workbench presets``: list the shipped presets with their sources."""

from __future__ import annotations

import argparse

NAME = "presets"
HELP = "List the shipped presets (knobs of well-known agents) and where their numbers come from."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="print this preset's YAML")


def run(args: argparse.Namespace) -> int:
    from workbench.knobs import dump_knobs
    from workbench.presets import get_preset, list_presets

    if args.name:
        print(dump_knobs(get_preset(args.name)), end="")
        return 0
    presets = list_presets()
    width = max(len(p.name) for p in presets)
    for p in presets:
        print(f"{p.name:<{width}}  {p.title}  [{p.source}]")
    return 0
