"""The Knobs value: every tunable of one replay, frozen and validated against ``KNOB_SPECS`` when built.

Out-of-range values, wrong types and unknown keys are refused by name; ``knobs_from_dict`` builds one
from a mapping (YAML, ``--set``, a sweep row) and ``knobs_markdown`` writes docs/knobs.md's table from it.
``Knobs.view(concern)`` (``knobs.counting``, ``.trigger``, ``.keep``, ``.pins``, ``.guards``, ``.prune``) is the
frozen, hashable subset of the knobs one concern depends on, its fields derived from the specs
(``KnobSpec.concerns``): the key of every cache of that concern. The fields run group by group (``KnobGroup``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.history.warnings import shown
from workbench.knobs.pin_pattern import compile_pin_pattern
from workbench.knobs.specs import KNOB_ALIASES, KNOB_SPECS, KnobGroup, KnobSpec

MAX_INT_DIGITS = 18  # a whole-number knob above 10^18 is refused before any float conversion can overflow


@dataclass(frozen=True, kw_only=True)
class Knobs:
    """All tunables of one replay, group by group (``KnobGroup``). Defaults are stagewise's at commit 18ac8a27b18c;
    the knobs stagewise lacks default to leaving its replay unchanged."""

    # -- policy --
    strategy: str = "stagewise"
    # -- model --
    context_window_tokens: int = 200_000
    model: str = "claude-sonnet-4-5"
    briefer_model: str = "gemini/gemini-2.5-flash-lite"
    # -- replay --
    check_point: str = "step"
    latency_steps: int = 0
    keep_existing_briefings: bool = False
    # -- counting --
    trigger_counter: str = "estimate"
    boundary_counter: str = "estimate"
    log_counter: str = "billed"
    overhead_chars_per_message: int = 400
    chars_per_token: float = 4.0
    hidden_prefix_tokens: int = 0
    token_ratio: float = 1.0
    tool_call_tokens: int = 0
    user_turn_tokens: int = 0
    reasoning_block_tokens: int = 0
    reasoning_encrypted_ratio: float = 0.0
    reasoning_dropped_at_turn: bool = False
    microcompact_tokens: int = 0
    image_token_rule: str = "serialized"
    image_default_tokens: int = 1_600
    tool_output_max_tokens: int = 0
    count_added_since_call: bool = True
    agent_estimate: str = "counter"
    reasoning_carry_ratio: float = 0.0
    compaction_restore_tokens: int = 0
    restore_files: int = 0
    restore_file_tokens: int = 5_000
    # -- trigger --
    trigger_ratio: float = 0.65
    trigger_hard_cap_tokens: int = 100_000
    trigger_at_equal: bool = False
    trigger_reserve_tokens: int = 0
    trigger_max_messages: int = 0
    trigger_max_turns: int = 0
    soft_trigger_ratio: float = 0.6
    proactive_compaction: bool = True
    reactive_compaction: bool = False
    manual_compact_checks: str = ""
    # -- keep --
    keep_rule: str = "budget"
    kept_budget_ratio: float = 0.2
    kept_budget_cap_tokens: int = 40_000
    kept_budget_floor_tokens: int = 0
    min_kept_messages: int = 10
    keep_recent_messages: int = 6
    keep_recent_turns: int = 2
    keep_recent_share: float = 0.3
    keep_user_messages_tokens: int = 20_000
    keep_starts_at_user: bool = False
    keep_min_messages: int = 1
    # -- pins --
    pin_system_messages: bool = False
    pin_first_user_message: bool = False
    pin_first_messages: int = 0
    pin_pattern: str = ""
    # -- briefing --
    target_briefing_chars: int = 30_000
    briefing_mode: str = "incremental"
    briefer_input_cap_tokens: int = 0
    # -- briefer --
    sim_new_chars_ratio: float = 0.12
    sim_overshoot_ratio: float = 1.15
    sim_min_chars: int = 600
    # -- guards --
    cooldown_checks: int = 0
    thrash_window_checks: int = 2
    min_savings_ratio: float = 0.1
    # -- prune --
    prune_tool_outputs: bool = False
    prune_protect_tokens: int = 40_000
    prune_minimum_tokens: int = 20_000
    prune_protect_user_turns: int = 2
    mask_last_n_observations: int = 5

    def __post_init__(self) -> None:
        # Every replay builds a few (``replace``): the fields' names, types and specs are looked up once.
        for name, type_name, spec in _field_checks():
            _check_value(name, getattr(self, name), type_name, spec)
        parse_check_list(self.manual_compact_checks)
        if self.pin_pattern:
            compile_pin_pattern(self.pin_pattern)

    def replace(self, **changes: Any) -> Knobs:
        """A copy with some knobs changed, those validated as ``__post_init__`` does (the first bad one in field order
        named): it checks each knob alone, so the others stand as checked when this was made. A replay makes a few
        per window; checking all sixty-odd each time was ~1% of ``workbench reality``."""
        checks = _field_checks()
        if type(self) is not Knobs or not changes.keys() <= _knob_name_set():
            return dataclasses.replace(self, **changes)  # a subclass, or an unknown name: dataclasses' own error
        for name, type_name, spec in checks:
            if name in changes:
                _check_value(name, changes[name], type_name, spec)
        if "manual_compact_checks" in changes:
            parse_check_list(changes["manual_compact_checks"])
        if changes.get("pin_pattern"):
            compile_pin_pattern(changes["pin_pattern"])
        values = {name: getattr(self, name) for name, _, _ in checks}
        values.update(changes)
        new = object.__new__(Knobs)
        new.__dict__.update(values)
        return new

    def view(self, concern: str) -> KnobView:
        """The knobs of one concern (those whose spec names it), as a frozen, hashable value."""
        cls = view_type(concern)
        return cls(**{f.name: getattr(self, f.name) for f in dataclasses.fields(cls)})  # type: ignore[arg-type]

    @property
    def counting(self) -> KnobView:
        """What the per-message token counts depend on (``CountingKnobs``): the key of every count cache."""
        return self.view(KnobGroup.COUNTING)

    @property
    def trigger(self) -> KnobView:
        """When a compaction starts: the thresholds, caps, reserve, counts and switches (``TriggerKnobs``)."""
        return self.view(KnobGroup.TRIGGER)

    @property
    def keep(self) -> KnobView:
        """What stays verbatim after a compaction: the rule and its budgets and counts (``KeepKnobs``)."""
        return self.view(KnobGroup.KEEP)

    @property
    def pins(self) -> KnobView:
        """Which messages are never folded (``PinsKnobs``): the key of every pin mask."""
        return self.view(KnobGroup.PINS)

    @property
    def guards(self) -> KnobView:
        """Cooldown, thrash and ineffective-compaction guards (``GuardsKnobs``)."""
        return self.view(KnobGroup.GUARDS)

    @property
    def prune(self) -> KnobView:
        """Tool-output pruning and masking (``PruneKnobs``)."""
        return self.view(KnobGroup.PRUNE)

    @property
    def effective_trigger_tokens(self) -> float:
        """stagewise's trigger: min(threshold × window, hard cap); may be fractional."""
        return min(self.trigger_ratio * self.context_window_tokens, self.trigger_hard_cap_tokens)

    @property
    def kept_budget_tokens(self) -> int:
        """stagewise's kept budget: min(floor(window × fraction), cap)."""
        return min(math.floor(self.context_window_tokens * self.kept_budget_ratio), self.kept_budget_cap_tokens)

    @property
    def manual_checks(self) -> tuple[int, ...]:
        """``manual_compact_checks`` as sorted check numbers."""
        return parse_check_list(self.manual_compact_checks)

    def warnings(self) -> tuple[str, ...]:
        """Settings that are legal but defeat compression (shown in the app and CLI)."""
        out = []
        budget_tail = self.strategy == "stagewise" or self.keep_rule == "budget"
        if budget_tail and self.trigger_ratio >= 0 and self.kept_budget_tokens >= self.effective_trigger_tokens:
            out.append(
                f"kept budget ({self.kept_budget_tokens:,} tokens) reaches the trigger "
                f"({self.effective_trigger_tokens:,.0f} tokens): compression would re-trigger at once "
                "or never free room"
            )
        if self.strategy != "stagewise" and self.trigger_reserve_tokens >= self.context_window_tokens:
            out.append(
                f"trigger_reserve_tokens ({self.trigger_reserve_tokens:,}) is not below the window "
                f"({self.context_window_tokens:,}): compaction fires at every check"
            )
        other_clauses = self.strategy != "stagewise" and (
            self.trigger_reserve_tokens or self.trigger_max_messages or self.trigger_max_turns
        )
        masking = self.strategy == "observation_masking"  # masks at every check, compaction or not
        if self.trigger_ratio < 0 and not other_clauses and not masking:
            out.append("trigger_ratio is -1: compression is disabled")
        if not self.proactive_compaction and not self.reactive_compaction and not self.manual_compact_checks:
            out.append("proactive and reactive compaction are both off and no manual checks are set: nothing compacts")
        return tuple(out)


class KnobView:
    """The base of the knob views (``Knobs.view``): frozen dataclasses holding one concern's knobs and nothing else.

    A computation handed a view cannot read a knob outside it (AttributeError), so a cache keyed by the view it
    was computed from can never serve a result that depended on another knob.
    """

    __slots__ = ()

    if TYPE_CHECKING:  # the fields are made from the specs at import time; to mypy any knob name is an attribute
        def __getattr__(self, name: str) -> Any: ...


def counting_view(knobs: Knobs | KnobView) -> KnobView:
    """``knobs.counting`` (a view is returned as it is): what every count cache is computed from and keyed by."""
    return knobs if isinstance(knobs, KnobView) else knobs.counting


def view_type(concern: str) -> type[KnobView]:
    """The view class of a concern (``counting`` -> ``CountingKnobs``): its fields are the knobs whose spec names
    the concern, in field order, with their types and defaults. One class per concern, however it is named
    (``KnobGroup.COUNTING`` or ``"counting"``), so equal views are equal values."""
    return _view_type(str(concern))


@functools.cache
def _view_type(concern: str) -> type[KnobView]:
    fields = [(f.name, f.type, dataclasses.field(default=f.default)) for f in dataclasses.fields(Knobs)
              if concern in KNOB_SPECS[f.name].concerns]
    if not fields:
        known = sorted({c for spec in KNOB_SPECS.values() for c in spec.concerns})
        raise ValueError(f"no knob is part of {concern!r}; concerns: {', '.join(known)}")
    name = "".join(word.title() for word in concern.split("_")) + "Knobs"
    cls = dataclasses.make_dataclass(name, fields, bases=(KnobView,), frozen=True, kw_only=True, slots=True)
    cls.__module__ = __name__  # pickled by name (a sweep worker may receive one)
    globals().setdefault(name, cls)
    return cls


@functools.cache
def _field_checks() -> tuple[tuple[str, str, KnobSpec | None], ...]:
    """(name, declared type's name, spec) of every knob, in field order."""
    return tuple((f.name, _type_name(f.type), KNOB_SPECS.get(f.name)) for f in dataclasses.fields(Knobs))


@functools.cache
def _knob_name_set() -> frozenset[str]:
    return frozenset(name for name, _, _ in _field_checks())


def _type_name(declared: Any) -> str:
    return declared if isinstance(declared, str) else getattr(declared, "__name__", str(declared))


def _check_knob(name: str, value: Any, declared: Any) -> None:
    _check_value(name, value, _type_name(declared), KNOB_SPECS.get(name))


def _check_value(name: str, value: Any, type_name: str, spec: KnobSpec | None) -> None:
    if type_name == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {shown(value)}")
        return
    if type_name == "str":
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {shown(value)}")
        if spec and spec.choices and value not in spec.choices:
            raise ValueError(f"{name} must be one of {', '.join(spec.choices)}, got {shown(value)}")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {shown(value)}")
    if isinstance(value, int) and abs(value) >= 10**MAX_INT_DIGITS:
        raise ValueError(f"{name} must be {_range_text(spec)}, got {shown(value)}")
    if type_name == "int" and isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be a whole number, got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {shown(value)}")
    if spec is None or spec.low is None or spec.high is None:
        return
    if value in spec.allow:
        return
    if not spec.low <= value <= spec.high:
        raise ValueError(f"{name} must be {_range_text(spec)}, got {shown(value)}")


def _range_text(spec: KnobSpec | None) -> str:
    if spec is None or spec.low is None or spec.high is None:
        return f"under 10^{MAX_INT_DIGITS}"
    extra = "".join(f" or {a:g}" for a in spec.allow)
    return f"in [{spec.low:g}, {spec.high:g}]{extra}"


def parse_check_list(text: str) -> tuple[int, ...]:
    """Parse ``"40, 120"`` (commas or spaces) into sorted, distinct check numbers; refuse anything else by name."""
    out: set[int] = set()
    for token in re.split(r"[,\s]+", text.strip()):
        if not token:
            continue
        if not (token.isascii() and token.isdigit()):
            raise ValueError(f"manual_compact_checks must list whole check numbers like '40, 120', got {shown(text)}")
        if len(token) > 9:
            raise ValueError(f"manual_compact_checks: a check number must be under 10^9, got {shown(token, 20)}")
        out.add(int(token))
    return tuple(sorted(out))


def knob_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(Knobs))


def did_you_mean(name: str) -> str:
    """`` (did you mean trigger_ratio?)`` for a misspelt knob name, or "" when no knob is close."""
    import difflib

    close = difflib.get_close_matches(name, knob_names(), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def knobs_from_dict(data: dict[str, Any], *, base: Knobs | None = None, source: str = "knobs") -> Knobs:
    """Build Knobs from a mapping, refusing unknown keys by name and coercing ints given as floats."""
    names = {f.name: f for f in dataclasses.fields(Knobs)}
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise ValueError(f"{source}: knob names must be text, got {shown(bad_keys[0])}")
    data = {KNOB_ALIASES.get(k, k): v for k, v in data.items()}
    unknown = sorted(set(data) - set(names))
    if unknown:  # each with its nearest knob name, as a YAML file's line says; never the ~60 names at once
        listed = ", ".join(f"{shown(k, 40)}{did_you_mean(k[:100])}" for k in unknown[:5]) + (
            f" (and {len(unknown) - 5:,} more)" if len(unknown) > 5 else "")
        raise ValueError(f"{source}: unknown knob{'s' if len(unknown) > 1 else ''} {listed}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        ftype = names[key].type
        tname = ftype if isinstance(ftype, str) else getattr(ftype, "__name__", "")
        if tname == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        if (tname == "float" and isinstance(value, int) and not isinstance(value, bool)
                and abs(value) < 10**MAX_INT_DIGITS):
            value = float(value)
        values[key] = value
    try:
        return dataclasses.replace(base or Knobs(), **values)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None


def knobs_markdown() -> str:
    """The knobs table of docs/knobs.md (name, group, unit, default, meaning), generated so it cannot drift."""
    default = Knobs()
    rows = ["| knob | group | unit | default | meaning |", "|---|---|---|---|---|"]
    for f in dataclasses.fields(Knobs):
        spec = KNOB_SPECS[f.name]
        value = getattr(default, f.name)
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        meaning = spec.help.replace("|", "\\|")
        if spec.choices:
            meaning += f" One of: {', '.join(spec.choices)}."
        rows.append(f"| `{f.name}` | {spec.group} | {spec.unit} | {shown} | {meaning} |")
    return "\n".join(rows) + "\n"


CountingKnobs = view_type(KnobGroup.COUNTING)
