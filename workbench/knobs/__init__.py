"""Knobs: every tunable of a replay in one validated, frozen value, with YAML load/dump.

Each field carries its range, unit and help text in ``KNOB_SPECS`` so that the app, the CLI and
the docs describe a knob the same way. Out-of-range values and unknown keys are refused by name.
No I/O: YAML goes in and out as text.

The pieces: ``specs`` (the ``KNOB_SPECS`` table and the choices it names), ``values`` (the ``Knobs``
dataclass and its validation), ``pin_pattern`` (the time-bounded user regex), ``yaml_io`` (the bounded
YAML loader, load and dump, did-you-mean). Import from here: ``from workbench.knobs import Knobs``.
"""

from workbench.knobs.pin_pattern import PIN_PATTERN_BUDGET_S, PinPattern, compile_pin_pattern
from workbench.knobs.specs import (
    AGENT_ESTIMATES,
    BRIEFING_MODES,
    CHECK_POINTS,
    COUNTERS,
    GROUP_TITLES,
    IMAGE_TOKEN_RULES,
    KEEP_RULES,
    KNOB_ALIASES,
    KNOB_SPECS,
    MISSION_KNOBS,
    KnobGroup,
    KnobSpec,
    clamp_knob,
)
from workbench.knobs.values import (
    MAX_INT_DIGITS,
    CountingKnobs,
    Knobs,
    KnobView,
    counting_view,
    did_you_mean,
    knob_names,
    knobs_from_dict,
    knobs_markdown,
    parse_check_list,
    view_type,
)
from workbench.knobs.yaml_io import (
    MAX_YAML_CHARS,
    MAX_YAML_DEPTH,
    MAX_YAML_INT_DIGITS,
    MAX_YAML_NODES,
    YAML_VERSION,
    decode_knobs_file,
    dump_knobs,
    key_line,
    load_knobs,
    parse_knob_assignment,
    read_knobs_yaml,
    safe_yaml,
)

__all__ = [
    "AGENT_ESTIMATES",
    "BRIEFING_MODES",
    "CHECK_POINTS",
    "COUNTERS",
    "IMAGE_TOKEN_RULES",
    "KEEP_RULES",
    "GROUP_TITLES",
    "KNOB_ALIASES",
    "KNOB_SPECS",
    "MAX_INT_DIGITS",
    "MAX_YAML_CHARS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_INT_DIGITS",
    "MAX_YAML_NODES",
    "MISSION_KNOBS",
    "PIN_PATTERN_BUDGET_S",
    "YAML_VERSION",
    "CountingKnobs",
    "KnobGroup",
    "KnobSpec",
    "KnobView",
    "Knobs",
    "PinPattern",
    "clamp_knob",
    "compile_pin_pattern",
    "counting_view",
    "did_you_mean",
    "decode_knobs_file",
    "dump_knobs",
    "key_line",
    "knob_names",
    "knobs_from_dict",
    "knobs_markdown",
    "load_knobs",
    "parse_check_list",
    "parse_knob_assignment",
    "read_knobs_yaml",
    "safe_yaml",
    "view_type",
]
