"""Knobs: validated ranges with the knob's name, YAML round trip, unknown keys refused by name."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.knobs import Knobs, dump_knobs, knobs_from_dict, load_knobs, read_knobs_yaml


def test_defaults_are_stagewise():
    k = Knobs()
    assert (k.trigger_ratio, k.trigger_hard_cap_tokens, k.kept_budget_ratio, k.kept_budget_cap_tokens) == (
        0.65, 100_000, 0.2, 40_000)
    assert (k.min_kept_messages, k.target_briefing_chars, k.overhead_chars_per_message, k.chars_per_token) == (
        10, 30_000, 400, 4.0)


@pytest.mark.parametrize(
    ("window", "ratio", "trigger", "kept"),
    [
        (32_000, 0.65, 20_800, 6_400),
        (131_072, 0.65, 85_196.8, 26_214),
        (200_000, 0.65, 100_000, 40_000),
        (1_000_000, 0.5, 100_000, 40_000),
    ],
    ids=["32k", "128k-fractional", "200k-capped", "1M"],
)
def test_effective_trigger_and_kept_budget(window, ratio, trigger, kept):
    k = Knobs(context_window_tokens=window, trigger_ratio=ratio)
    assert k.effective_trigger_tokens == pytest.approx(trigger)
    assert k.kept_budget_tokens == kept


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"trigger_ratio": 1.4}, "trigger_ratio must be in [0, 1] or -1, got 1.4"),
        ({"context_window_tokens": 10}, "context_window_tokens must be in [1000, 1e+07], got 10"),
        ({"min_kept_messages": 2.5}, "min_kept_messages must be a whole number, got 2.5"),
        ({"check_point": "turn"}, "check_point must be one of message, step, call, got 'turn'"),
        ({"chars_per_token": "four"}, "chars_per_token must be a number, got 'four'"),
    ],
)
def test_out_of_range_refused_with_name_range_and_value(changes, message):
    with pytest.raises(ValueError) as err:
        Knobs(**changes)
    assert str(err.value) == message


def test_minus_one_disables_trigger():
    assert Knobs(trigger_ratio=-1).warnings()[-1] == "trigger_ratio is -1: compression is disabled"


def test_kept_budget_reaching_trigger_warns():
    k = Knobs(context_window_tokens=32_000, trigger_ratio=0.15)
    assert any("reaches the trigger" in w for w in k.warnings())


def test_unknown_keys_refused_by_name_with_their_line_and_a_guess():
    with pytest.raises(ValueError, match=r"^cfg.yaml:2: unknown knob 'trigger_ratoi' \(did you mean trigger_ratio\?\)"):
        load_knobs("version: 1\ntrigger_ratoi: 0.5\n", source="cfg.yaml")
    with pytest.raises(ValueError, match=r"^cfg.yaml:1: unknown knob 'zzz'$"):
        load_knobs("zzz: 1\n", source="cfg.yaml")


def test_a_knob_given_twice_is_refused_with_both_lines():
    """PyYAML would keep the second value silently; a config that sets a knob twice is a mistake to report."""
    with pytest.raises(ValueError, match=r"^cfg.yaml:3: duplicate knob 'trigger_ratio' \(also on line 1\)"):
        load_knobs("trigger_ratio: 0.5\nmin_kept_messages: 4\ntrigger_ratio: 0.7\n", source="cfg.yaml")


def test_a_partial_yaml_changes_only_the_knobs_it_names():
    base = Knobs(trigger_ratio=0.4, min_kept_messages=3, strategy="summarize")
    knobs = load_knobs("kept_budget_ratio: 0.1\n", base=base)
    assert knobs == base.replace(kept_budget_ratio=0.1)
    assert load_knobs("kept_budget_ratio: 0.1\n") == Knobs(kept_budget_ratio=0.1)  # no base: the defaults
    assert read_knobs_yaml("version: 1\nkept_budget_ratio: 0.1\n") == {"kept_budget_ratio": 0.1}


def test_invalid_yaml_names_file_and_line():
    with pytest.raises(ValueError, match=r"^cfg.yaml:2: invalid YAML"):
        load_knobs("version: 1\ntrigger_ratio: 0.5: x\n", source="cfg.yaml")


def test_out_of_range_in_yaml_names_the_file():
    with pytest.raises(ValueError, match="^cfg.yaml:3: trigger_ratio must be in"):
        load_knobs("version: 1\nstrategy: stagewise\ntrigger_ratio: 3\n", source="cfg.yaml")


def test_yaml_has_version_and_dataclass_order():
    text = dump_knobs(Knobs())
    keys = [line.split(":")[0] for line in text.splitlines()]
    assert keys[0] == "version"
    assert keys[1:] == [f.name for f in dataclasses.fields(Knobs)]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    window=st.integers(1_000, 2_000_000),
    ratio=st.one_of(st.just(-1.0), st.floats(0, 1)),
    kept=st.floats(0, 1),
    floor=st.integers(0, 200),
    target=st.integers(100, 100_000),
    cpt=st.floats(0.5, 20),
    counter=st.sampled_from(["estimate", "cl100k_base", "o200k_base"]),
)
def test_yaml_round_trip_is_exact(window, ratio, kept, floor, target, cpt, counter):
    k = Knobs(context_window_tokens=window, trigger_ratio=ratio, kept_budget_ratio=kept, min_kept_messages=floor,
              target_briefing_chars=target, chars_per_token=cpt, trigger_counter=counter)
    assert load_knobs(dump_knobs(k)) == k


def test_ints_given_as_floats_are_accepted():
    assert knobs_from_dict({"context_window_tokens": 32000.0}).context_window_tokens == 32000


def test_an_integer_too_long_for_python_is_refused_with_its_line():
    """Python reads at most 4,300 digits (a ValueError naming no line); the knobs file says where it is."""
    text = "version: 1\nmanual_compact_checks: " + "7" * 5000 + "\n"
    with pytest.raises(ValueError, match=r"^k.yaml:2: a 5,000-digit number"):
        load_knobs(text, source="k.yaml")


@pytest.mark.slow
def test_a_plain_pin_pattern_matches_where_the_regex_does() -> None:
    """A pin_pattern of plain characters is searched as text, with the regex engine's answers."""
    import regex  # type: ignore[import-untyped]
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from workbench.knobs import PinPattern

    alphabet = st.sampled_from(list("ab #é\n-_:MdC") + ["claudeMd"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(alphabet, min_size=1, max_size=4).map("".join), st.lists(alphabet, max_size=12).map("".join))
    def check(pattern: str, text: str) -> None:
        rx = PinPattern(pattern)
        assert rx._alternatives == (False, (pattern,))  # these are plain text
        assert rx.search(text) == (regex.search(pattern, text) is not None)

    check()
    assert PinPattern("AGENTS.md")._alternatives is None  # an unescaped dot is any character: the regex engine
    assert PinPattern("^(a|b)")._alternatives == (True, ("a", "b"))


def test_the_counting_view_holds_exactly_the_knobs_whose_spec_names_counting():
    """Its fields come from the specs (group, or ``also_in``), so a counting knob added later joins every count
    cache's key by itself; it is hashable, picklable, and refuses to be read for any other knob."""
    import pickle

    from workbench.knobs import KNOB_SPECS, CountingKnobs, KnobView, view_type

    knobs = Knobs(token_ratio=1.2, overhead_chars_per_message=16, check_point="call")
    view = knobs.counting
    names = [f.name for f in dataclasses.fields(view)]
    assert names == [f.name for f in dataclasses.fields(Knobs) if "counting" in KNOB_SPECS[f.name].concerns]
    assert {"trigger_counter", "count_added_since_call", "agent_estimate", "reasoning_carry_ratio",
            "overhead_chars_per_message", "chars_per_token", "check_point"} <= set(names)
    assert type(view) is CountingKnobs and isinstance(view, KnobView) and view_type("counting") is CountingKnobs
    assert (view.token_ratio, view.overhead_chars_per_message, view.check_point) == (1.2, 16, "call")
    assert view == Knobs(token_ratio=1.2, overhead_chars_per_message=16, check_point="call", strategy="staged",
                         trigger_ratio=0.3).counting  # knobs outside the view do not enter it
    assert view != knobs.replace(count_added_since_call=False).counting
    assert {view: 1}[pickle.loads(pickle.dumps(view))] == 1
    with pytest.raises(AttributeError):
        view.trigger_ratio  # noqa: B018
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.token_ratio = 2.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="no knob is part of 'nothing'"):
        view_type("nothing")
    assert [f.name for f in dataclasses.fields(knobs.view("prune"))] == [
        f.name for f in dataclasses.fields(Knobs) if KNOB_SPECS[f.name].group == "prune"]


def test_every_knob_has_its_own_title_in_its_spec():
    """The words a person reads for a knob live in its spec (one home): present, distinct, and what the faces show."""
    from workbench.display.labels import knob_title
    from workbench.knobs import KNOB_SPECS

    titles = [spec.title for spec in KNOB_SPECS.values()]
    assert all(t and t == t.strip() and t[0].isupper() for t in titles)
    assert len(set(titles)) == len(titles)
    assert knob_title("trigger_ratio") == KNOB_SPECS["trigger_ratio"].title == "Trigger at share of window"
    assert knob_title("history") == "history"  # a sweep column that is no knob keeps its name


# -- knobs grouped by concern ------------------------------------------------------------------------------------------


def test_fields_run_group_by_group_in_the_specs_order():
    """One order for the knobs: the fields of Knobs follow KNOB_SPECS, and both run group by group in KnobGroup's
    order (the flow), so a knob added to a group sits with the others of its concern."""
    from workbench.knobs import KNOB_SPECS, KnobGroup

    names = [f.name for f in dataclasses.fields(Knobs)]
    assert names == list(KNOB_SPECS)
    groups = [KNOB_SPECS[n].group for n in names]
    rank = {g: i for i, g in enumerate(KnobGroup)}
    assert [rank[g] for g in groups] == sorted(rank[g] for g in groups)
    assert set(groups) == set(KnobGroup)  # no empty group
    assert all(isinstance(g, KnobGroup) for g in groups) and all(g.heading for g in KnobGroup)
    # stagewise's ten are no group of their own: each sits with its concern
    assert {n: KNOB_SPECS[n].group for n in ("trigger_ratio", "min_kept_messages", "target_briefing_chars",
                                             "chars_per_token")} == {
        "trigger_ratio": "trigger", "min_kept_messages": "keep", "target_briefing_chars": "briefing",
        "chars_per_token": "counting"}


@pytest.mark.parametrize(("concern", "own"), [
    ("counting", {"token_ratio": 1.2}), ("trigger", {"trigger_ratio": 0.3}), ("keep", {"keep_recent_turns": 3}),
    ("pins", {"pin_first_messages": 2}), ("guards", {"cooldown_checks": 2}), ("prune", {"prune_protect_tokens": 1_000}),
])
def test_each_concern_has_a_frozen_hashable_view(concern, own):
    """``knobs.<concern>`` holds exactly the knobs whose spec names the concern; equal for knobs that differ only
    outside it, different when one of its own knobs moves; one class however the concern is named."""
    from workbench.knobs import KNOB_SPECS, KnobGroup

    knobs = Knobs()
    view = getattr(knobs, concern)
    fields = [f.name for f in dataclasses.fields(view)]
    assert fields == [n for n in KNOB_SPECS if concern in KNOB_SPECS[n].concerns] and set(own) <= set(fields)
    assert view == knobs.view(KnobGroup(concern)) and hash(view) == hash(knobs.view(concern))
    assert getattr(knobs.replace(sim_min_chars=601, briefer_model="x"), concern) == view  # outside every view here
    assert getattr(knobs.replace(**own), concern) != view
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(view, fields[0], getattr(view, fields[0]))


def test_the_pin_mask_is_cached_under_the_pins_view():
    """A knob outside the pins group never makes a new pin mask; a pin knob does."""
    from workbench.history.samples.generate import generate_session
    from workbench.policies.base import pin_mask

    history = generate_session(3, turns=4)
    memo: dict = {}
    first = pin_mask(history, Knobs(pin_first_messages=2), memo)
    assert pin_mask(history, Knobs(pin_first_messages=2, trigger_ratio=0.3, keep_rule="turns"), memo) is first
    other = pin_mask(history, Knobs(pin_first_messages=3), memo)
    assert other is not first and (int(first.sum()), int(other.sum())) == (2, 3)
    assert {k[1] for k in memo if isinstance(k, tuple) and k[0] == "pin_mask"} == {
        Knobs(pin_first_messages=2).pins, Knobs(pin_first_messages=3).pins}


def test_a_yaml_written_in_the_old_field_order_still_loads():
    """dump_knobs writes keys in field order, which changed when the knobs were ordered by concern; a file written
    before (tests/fixtures/knobs_old_order.yaml) loads to the same knobs, and dumping them loads back exactly."""
    from pathlib import Path

    text = (Path(__file__).parent / "fixtures" / "knobs_old_order.yaml").read_text(encoding="utf-8")
    knobs = load_knobs(text, source="knobs_old_order.yaml")
    assert knobs == Knobs(strategy="msagent", context_window_tokens=128_000, trigger_ratio=0.8,
                          hidden_prefix_tokens=12_000, keep_rule="messages", keep_recent_messages=6,
                          pin_first_user_message=True, pin_pattern="AGENTS\\.md", manual_compact_checks="40, 120",
                          cooldown_checks=3, prune_tool_outputs=True, min_kept_messages=5, keep_min_messages=2)
    assert load_knobs(dump_knobs(knobs)) == knobs
    assert dump_knobs(knobs).splitlines()[1:3] == ["strategy: msagent", "context_window_tokens: 128000"]


@pytest.mark.parametrize("changes", [
    {"trigger_ratio": 0.5, "pin_pattern": "x|y"}, {"trigger_ratio": 1.4}, {"context_window_tokens": True},
    {"keep_recent_turns": 2.5, "trigger_ratio": 1.4}, {"manual_compact_checks": "a"}, {"pin_pattern": "("},
    {"no_such_knob": 1}, {},
], ids=repr)
def test_replace_gives_what_building_the_copy_gives(changes):
    """``replace`` checks only the changed knobs, yet gives the copy, or the error, that building it anew gives."""
    def outcome(make):
        try:
            return make()
        except (ValueError, TypeError) as exc:
            return type(exc), str(exc)
    base = Knobs(strategy="drop_oldest", keep_recent_turns=3)
    got = outcome(lambda: base.replace(**changes))
    assert got == outcome(lambda: dataclasses.replace(base, **changes))
    if isinstance(got, Knobs):
        assert got.__dict__ == dataclasses.replace(base, **changes).__dict__ and hash(got) == hash(base.replace(**changes))
