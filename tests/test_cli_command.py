"""'Copy as CLI command': only changed knobs, and the command reads back the same knobs."""

from __future__ import annotations

import shlex

import pytest

from workbench.knobs import Knobs, knobs_from_dict, parse_knob_assignment
from workbench.knobs.command import changed_knobs, cli_command


def _parse(command: str) -> tuple[str, Knobs]:
    args = shlex.split(command)
    assert args[:2] == ["workbench", "simulate"]
    sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    return args[2], knobs_from_dict(dict(parse_knob_assignment(s) for s in sets))


def test_defaults_give_a_bare_command():
    """Nothing changed, nothing to set."""
    assert cli_command("sample_histories/long.jsonl", Knobs()) == "workbench simulate sample_histories/long.jsonl"


@pytest.mark.parametrize(
    "changes",
    [
        {"trigger_ratio": 0.5, "min_kept_messages": 3},
        {"trigger_ratio": -1.0},
        {"model": "gpt-4o", "keep_existing_briefings": True, "chars_per_token": 3.25},
        {"briefer_model": "openrouter/meta-llama/llama-3.1-8b-instruct", "check_point": "message"},
        {"model": "null", "briefer_model": "1e5"},
    ],
    ids=["ratios", "disabled", "strings-and-bools", "slashes", "yaml-lookalikes"],
)
def test_command_round_trips_through_the_cli_parser(changes):
    """Every --set value parses back (as the CLI parses it) to the same knob value."""
    knobs = Knobs().replace(**changes)
    path, parsed = _parse(cli_command("my history.jsonl", knobs))
    assert path == "my history.jsonl"
    assert parsed == knobs
    assert changed_knobs(knobs) == changes


def test_preset_base_writes_only_the_difference_from_the_preset():
    """With --preset, knobs equal to the preset's are left out."""
    base = Knobs(trigger_ratio=0.5, min_kept_messages=12)
    command = cli_command("h.jsonl", base.replace(target_briefing_chars=20_000), preset="stagewise_chat", base=base)
    assert command == "workbench simulate h.jsonl --preset stagewise_chat --set target_briefing_chars=20000"
