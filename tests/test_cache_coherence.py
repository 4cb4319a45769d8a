"""A replay's result never depends on what ran before it in the same process (issue 19, item 5).

The app's sessions and the sweep workers share one ``CountCache``: every array derived from the knobs (the
trigger's and the boundary walk's tokens, what eliding would free, the agent's text estimate) is kept with the
history's counts and must be keyed by every knob it depends on. Here every knob of ``KNOB_SPECS`` is moved one
step off a base in turn; each run on one cache shared by all the runs before it (other knobs, other histories,
other strategies) must equal the same run on a fresh cache, metrics, compressions and timeline alike.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from agent_log_builders import CodexLog
from conftest import REPO
from knob_values import one_step

from workbench import load_history
from workbench.briefing.simulated import SimulatedBriefer
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.knobs import KNOB_SPECS, Knobs
from workbench.policies.base import clear_caches
from workbench.presets import get_preset
from workbench.replay import Run, simulate


def codex_log(folder: Path) -> History:
    """A Codex rollout of 30 turns with billed usage and reasoning tokens: the usage counter's knobs matter."""
    log, total = CodexLog(), 8_000
    for t in range(30):
        log.turn().user(f"Step {t}: fix the failing test in module_{t}.py")
        log.reasoning().call(f"c{t}", f"pytest tests/test_{t}.py")
        log.output(f"c{t}", f"line {t} of the output: assertion failed in module_{t}\n" * 60)
        total += 1_500
        log.tokens(total, 300, cached=total - 2_000, reasoning=400)
        log.reasoning().say(f"Fixed module_{t}: the off-by-one in the loop.")
        total += 200
        log.tokens(total, 100, cached=total - 500, reasoning=150).end_turn()
    path = folder / "rollout.jsonl"
    path.write_text(log.text(), encoding="utf-8")
    return load_history(path)


def cases(folder: Path) -> list[tuple[str, History, Knobs]]:
    """Staged at 32k on tool_heavy is the issue's case (it elides tool outputs); stagewise's defaults; Claude Code's
    preset (tokenizer, text estimate, restored files, pins, reactive); Codex's on its own billed usage."""
    def sample(name: str) -> History:
        return load_history(REPO / "sample_histories" / f"{name}.jsonl")

    return [
        ("tool_heavy staged", sample("tool_heavy"), get_preset("staged").replace(context_window_tokens=32_000)),
        ("short stagewise", sample("short"), Knobs(context_window_tokens=32_000)),
        ("short claude_code", sample("short"), get_preset("claude_code").replace(context_window_tokens=32_000)),
        ("codex log on usage", codex_log(folder),
         get_preset("codex_cli").replace(trigger_counter="usage", context_window_tokens=32_000)),
    ]


def _fresh(history, knobs: Knobs) -> Run:  # noqa: ANN001
    clear_caches()
    return simulate(history, knobs, SimulatedBriefer(), cache=CountCache())


def _differs(a: Run, b: Run) -> list[str]:
    """What differs between two runs: metrics (by name), compressions, timeline."""
    theirs = dataclasses.asdict(b.metrics)  # once, not once per metric: asdict deep-copies every field
    out = [k for k, v in dataclasses.asdict(a.metrics).items() if theirs[k] != v]
    if not a.compressions_frame().equals(b.compressions_frame()):
        out.append("compressions")
    if not a.timeline.equals(b.timeline):
        out.append("timeline")
    return out


@pytest.mark.slow
def test_every_knob_moved_gives_the_same_run_on_a_shared_cache_as_on_a_fresh_one(tmp_path):
    shared = CountCache()
    moved = 0
    bad: list[str] = []
    every = cases(tmp_path)
    for name, history, base in every:
        first = simulate(history, base, SimulatedBriefer(), cache=shared)
        for knob in KNOB_SPECS:
            knobs = one_step(base, knob)
            if knobs is None:
                continue
            try:
                on_shared = simulate(history, knobs, SimulatedBriefer(), cache=shared)
            except ValueError:  # a combination the policy refuses (e.g. a strategy without its knobs)
                with pytest.raises(ValueError):
                    _fresh(history, knobs)
                continue
            diff = _differs(on_shared, _fresh(history, knobs))
            if diff:
                bad.append(f"{name}: {knob}={getattr(knobs, knob)!r}: {', '.join(diff[:4])}")
            moved += 1
        again = _differs(simulate(history, base, SimulatedBriefer(), cache=shared), first)
        if again or _differs(first, _fresh(history, base)):
            bad.append(f"{name}: the base run again: {', '.join(again[:4])}")
    assert not bad, "\n".join(bad)
    assert moved >= len(KNOB_SPECS) * len(every) * 0.9  # nearly every knob moves (a few have no valid step)


def test_the_issue_case_staged_at_32k_on_tool_heavy():
    """After a run with ``count_added_since_call`` off, the default run on the same cache is the fresh one."""
    history = load_history(REPO / "sample_histories" / "tool_heavy.jsonl")
    knobs = get_preset("staged").replace(context_window_tokens=32_000)
    shared = CountCache()
    simulate(history, knobs.replace(count_added_since_call=False), SimulatedBriefer(), cache=shared)
    after = simulate(history, knobs, SimulatedBriefer(), cache=shared)
    fresh = _fresh(history, knobs)
    assert after.metrics.tokens_per_task == fresh.metrics.tokens_per_task
    assert not _differs(after, fresh)
