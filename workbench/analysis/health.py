"""Warnings a run earns: thrash, ineffective compactions, and a briefing that eats the window.

A run can look cheap on its cards while it compacts at nearly every check (a 30k trigger under a 40k
kept budget), frees almost nothing per compaction, or aims for a briefing that is half the window.
These checks read the Run (its metrics and compressions) and say so in words, with what to change.
Pure; thresholds are named constants so the faces and the tests agree on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.history.words import counted
from workbench.replay.results import Run

THRASH_SHARE = 0.1  # warn when at least this share of landed compactions are thrash
COMPACTING_SHARE = 0.2  # ... or when compactions land at this share of the checks
BRIEFING_SHARE = 0.25  # warn when the briefing target (or the largest briefing) is this share of the window


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One warning: a short name for a card or a filter, and the sentence a person reads."""

    kind: str  # thrash | compacting | ineffective | briefing-target | briefing-size
    text: str


def run_findings(run: Run) -> tuple[Finding, ...]:
    """Everything worth warning about in ``run``, most serious first."""
    m, k = run.metrics, run.knobs
    out: list[Finding] = []
    landed = [c for c in run.compressions if c.status == "landed"]
    n = len(landed)
    window = k.context_window_tokens
    after = sorted(c.tokens_after for c in landed if c.tokens_after is not None)
    left = f"; a compaction leaves about {after[len(after) // 2]:,} tokens" if after else ""
    trig = run.limits.trigger.tokens if run.limits is not None else None
    near = f" against a {trig:,.0f}-token trigger" if trig is not None and after else ""
    if n and m.thrash_events >= max(1, THRASH_SHARE * n):
        out.append(Finding(kind="thrash", text=(
            f"Thrash: {m.thrash_events:,} of {counted(n, 'compaction')} landed within {counted(k.thrash_window_checks, 'check')} of the "
            f"previous one ({counted(n, 'compaction')} in {counted(m.checks, 'check')}){left}{near}. The context refills at once: "
            "lower the kept budget or the briefing target, or raise the trigger. Cheaper tokens here are not a win.")))
    elif m.checks and n >= COMPACTING_SHARE * m.checks:
        out.append(Finding(kind="compacting", text=(
            f"Compacting at {n / m.checks:.0%} of checks ({counted(n, 'compaction')} in {counted(m.checks, 'check')}){left}{near}: "
            "each one costs a briefer call and invalidates the prompt cache.")))
    if m.ineffective_compressions:
        out.append(Finding(kind="ineffective", text=(
            f"{m.ineffective_compressions:,} of {counted(n, 'compaction')} freed less than {k.min_savings_ratio:.0%} of the "
            "context (ineffective): the kept tail and the briefing hold almost everything that was there.")))
    target_tokens = k.target_briefing_chars / k.chars_per_token
    if target_tokens >= BRIEFING_SHARE * window:
        out.append(Finding(kind="briefing-target", text=(
            f"The briefing target ({k.target_briefing_chars:,} chars ≈ {target_tokens:,.0f} tokens) is "
            f"{target_tokens / window:.0%} of the {window:,}-token window: after a compaction the briefing alone "
            "takes that much. Lower target_briefing_chars.")))
    elif m.max_briefing_chars / k.chars_per_token >= BRIEFING_SHARE * window:
        size = m.max_briefing_chars / k.chars_per_token
        out.append(Finding(kind="briefing-size", text=(
            f"The largest briefing ({m.max_briefing_chars:,} chars ≈ {size:,.0f} tokens) is {size / window:.0%} "
            f"of the {window:,}-token window.")))
    return tuple(out)
