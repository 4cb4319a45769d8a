"""Knobs: every tunable of a replay in one validated, frozen value, with YAML load/dump.

Each field carries its range, unit and help text in ``KNOB_SPECS`` so that the app, the CLI and
the docs describe a knob the same way. Out-of-range values and unknown keys are refused by name.
No I/O: YAML goes in and out as text.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import yaml

YAML_VERSION = 1


@dataclass(frozen=True)
class KnobSpec:
    """What a knob means and which values it takes."""

    unit: str
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    group: str = "core"
    allow: tuple[float, ...] = ()  # single values allowed outside [low, high], e.g. -1 = disabled


COUNTERS = ("estimate", "cl100k_base", "o200k_base")
CHECK_POINTS = ("message", "step")

KNOB_SPECS: dict[str, KnobSpec] = {
    "strategy": KnobSpec("", "Compaction policy (a registered strategy name).", group="core"),
    "context_window_tokens": KnobSpec("tokens", "The model's context window.", 1_000, 10_000_000),
    "trigger_ratio": KnobSpec(
        "× window",
        "Compress when used tokens exceed this fraction of the window (strict >). -1 disables.",
        0.0,
        1.0,
        allow=(-1.0,),
    ),
    "trigger_hard_cap_tokens": KnobSpec(
        "tokens", "Absolute cap on the trigger: min(ratio × window, cap). stagewise: 100,000.", 1, 10_000_000
    ),
    "kept_budget_ratio": KnobSpec("× window", "Recent history kept verbatim, as a fraction of the window.", 0.0, 1.0),
    "kept_budget_cap_tokens": KnobSpec("tokens", "Hard cap on the verbatim budget. stagewise: 40,000.", 0, 10_000_000),
    "min_kept_messages": KnobSpec(
        "messages", "Preferred minimum of verbatim messages (stagewise raises it to 5).", 0, 100_000
    ),
    "target_briefing_chars": KnobSpec("chars", "Soft target length of a briefing. stagewise: 30,000.", 100, 1_000_000),
    "overhead_chars_per_message": KnobSpec(
        "chars", "Estimator overhead added to every message (stagewise: 400 for metadata).", 0, 100_000
    ),
    "chars_per_token": KnobSpec("chars/token", "Estimator divisor: tokens = ceil(chars / this).", 0.5, 20.0),
    "trigger_counter": KnobSpec(
        "", "What measures context for the trigger (the provider's count).", choices=COUNTERS, group="counting"
    ),
    "boundary_counter": KnobSpec(
        "", "What the boundary walk uses (stagewise: its chars/4 estimate).", choices=COUNTERS, group="counting"
    ),
    "check_point": KnobSpec(
        "", "Check after every message, or after every agent step (assistant + its tool results).",
        choices=CHECK_POINTS, group="replay",
    ),
    "latency_steps": KnobSpec(
        "checks", "A compression lands this many checks after it starts (async agents).", 0, 10_000, group="replay"
    ),
    "system_prompt_tokens": KnobSpec("tokens", "Size of the system prompt, always in context.", 0, 1_000_000,
                                     group="replay"),
    "keep_existing_briefings": KnobSpec(
        "", "Replay a history's stored briefings as they are instead of stripping them.", group="replay"
    ),
    "model": KnobSpec("", "The agent's model: prices (and window, in the app) from litellm's registry.",
                      group="cost"),
    "briefer_model": KnobSpec("", "The model that writes briefings (for cost).", group="cost"),
    "sim_new_chars_ratio": KnobSpec(
        "× chars", "Simulated briefer: briefing chars per char of newly folded transcript.", 0.0, 2.0,
        group="briefer",
    ),
    "sim_overshoot_ratio": KnobSpec(
        "× target", "Simulated briefer: longest briefing as a multiple of the target.", 0.1, 5.0, group="briefer"
    ),
    "sim_min_chars": KnobSpec("chars", "Simulated briefer: shortest briefing it writes.", 0, 100_000,
                              group="briefer"),
}


@dataclass(frozen=True, kw_only=True)
class Knobs:
    """All tunables of one replay. Defaults are stagewise's at commit 18ac8a27b18c."""

    strategy: str = "stagewise"
    context_window_tokens: int = 200_000
    trigger_ratio: float = 0.65
    trigger_hard_cap_tokens: int = 100_000
    kept_budget_ratio: float = 0.2
    kept_budget_cap_tokens: int = 40_000
    min_kept_messages: int = 10
    target_briefing_chars: int = 30_000
    overhead_chars_per_message: int = 400
    chars_per_token: float = 4.0
    trigger_counter: str = "estimate"
    boundary_counter: str = "estimate"
    check_point: str = "step"
    latency_steps: int = 0
    system_prompt_tokens: int = 0
    keep_existing_briefings: bool = False
    model: str = "claude-sonnet-4-5"
    briefer_model: str = "gemini/gemini-2.5-flash-lite"
    sim_new_chars_ratio: float = 0.12
    sim_overshoot_ratio: float = 1.15
    sim_min_chars: int = 600

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_knob(f.name, getattr(self, f.name), f.type)

    def replace(self, **changes: Any) -> Knobs:
        """A copy with some knobs changed (validated)."""
        return dataclasses.replace(self, **changes)

    @property
    def effective_trigger_tokens(self) -> float:
        """stagewise's trigger: min(threshold × window, hard cap); may be fractional."""
        return min(self.trigger_ratio * self.context_window_tokens, self.trigger_hard_cap_tokens)

    @property
    def kept_budget_tokens(self) -> int:
        """stagewise's kept budget: min(floor(window × fraction), cap)."""
        return min(math.floor(self.context_window_tokens * self.kept_budget_ratio), self.kept_budget_cap_tokens)

    def warnings(self) -> tuple[str, ...]:
        """Settings that are legal but defeat compression (shown in the app and CLI)."""
        out = []
        if self.trigger_ratio >= 0 and self.kept_budget_tokens >= self.effective_trigger_tokens:
            out.append(
                f"kept budget ({self.kept_budget_tokens:,} tokens) reaches the trigger "
                f"({self.effective_trigger_tokens:,.0f} tokens): compression would re-trigger at once "
                "or never free room"
            )
        if self.trigger_ratio < 0:
            out.append("trigger_ratio is -1: compression is disabled")
        return tuple(out)


# Convenient names for the six knobs of the mission, in the order the app shows them.
MISSION_KNOBS = (
    "trigger_ratio",
    "trigger_hard_cap_tokens",
    "kept_budget_ratio",
    "min_kept_messages",
    "target_briefing_chars",
    "overhead_chars_per_message",
)


def _check_knob(name: str, value: Any, declared: Any) -> None:
    spec = KNOB_SPECS.get(name)
    type_name = declared if isinstance(declared, str) else getattr(declared, "__name__", str(declared))
    if type_name == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {value!r}")
        return
    if type_name == "str":
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {value!r}")
        if spec and spec.choices and value not in spec.choices:
            raise ValueError(f"{name} must be one of {', '.join(spec.choices)}, got {value!r}")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if type_name == "int" and not float(value).is_integer():
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if spec is None or spec.low is None or spec.high is None:
        return
    if value in spec.allow:
        return
    if not spec.low <= value <= spec.high:
        extra = "".join(f" or {a:g}" for a in spec.allow)
        raise ValueError(f"{name} must be in [{spec.low:g}, {spec.high:g}]{extra}, got {value!r}")


def knob_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(Knobs))


def knobs_from_dict(data: dict[str, Any], *, base: Knobs | None = None, source: str = "knobs") -> Knobs:
    """Build Knobs from a mapping, refusing unknown keys by name and coercing ints given as floats."""
    names = {f.name: f for f in dataclasses.fields(Knobs)}
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ValueError(f"{source}: unknown knob(s) {', '.join(unknown)}; known: {', '.join(names)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        ftype = names[key].type
        tname = ftype if isinstance(ftype, str) else getattr(ftype, "__name__", "")
        if tname == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        if tname == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        values[key] = value
    try:
        return dataclasses.replace(base or Knobs(), **values)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None


def parse_knob_assignment(text: str) -> tuple[str, Any]:
    """Parse ``name=value`` from the command line; the value is read as YAML (numbers, booleans, text)."""
    if "=" not in text:
        raise ValueError(f"--set {text!r}: expected knob=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key, value


def dump_knobs(knobs: Knobs) -> str:
    """YAML text with a version field and keys in dataclass order."""
    body = {"version": YAML_VERSION, **dataclasses.asdict(knobs)}
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


def load_knobs(text: str, *, source: str = "<yaml>") -> Knobs:
    """Parse YAML from ``dump_knobs``; errors name the source, the line and the key."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{where}: invalid YAML: {problem}") from None
    if data is None:
        raise ValueError(f"{source}: empty YAML, expected a mapping of knobs")
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of knobs, got {type(data).__name__}")
    data = dict(data)
    version = data.pop("version", YAML_VERSION)
    if version != YAML_VERSION:
        raise ValueError(f"{source}: unsupported version {version!r} (this workbench reads version {YAML_VERSION})")
    try:
        return knobs_from_dict(data, source=source)
    except ValueError as exc:
        message = str(exc)
        detail = message[len(source) + 2 :] if message.startswith(source + ": ") else message
        key = detail.split(" ", 1)[0]
        for number, line in enumerate(text.splitlines(), start=1):
            if line.split(":", 1)[0].strip() == key:
                raise ValueError(f"{source}:{number}: {detail}") from None
        raise
