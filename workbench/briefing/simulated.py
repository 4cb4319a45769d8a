"""The simulated briefer: a deterministic size model, so sweeps run without any LLM.

How long is the next briefing? A summarizer asked to restate the previous briefing and add the new
span behaves like stagewise's prompt (§7) tells it to:

    carried = previous_chars × CARRY[bucket]       none 0, <60% 1.0 (keep it all),
                                                    60–85% 0.92 (light condensation), ≥85% 0.75
    fresh   = new_material_chars × sim_new_chars_ratio   (how much new transcript compresses)
    chars   = clamp(carried + fresh, sim_min_chars, target × sim_overshoot_ratio)

The cap models a model that overshoots the soft target a little but not without limit; the carry
factors make the chain grow fast while there is room and flatten near the target, which is how
chained stagewise briefings behave. Tokens = ceil(chars / chars_per_token). No text is produced.

Briefing families (seed 003; Factory Research, "Evaluating Context Compression for AI Agents", Dec 2025:
anchored sectioned summaries keep 1.4% of the tokens, regenerative ones 1.3%, opaque ones 0.7%):

    regenerative: carried = 0, fresh = whole compact history × ratio (the briefer re-reads it all)
    sectioned:    chars + SECTION_HEADINGS_CHARS, at least SECTION_SKELETON_CHARS (headings always written)
    opaque:       chars × OPAQUE_SIZE_RATIO (0.7% / 1.4%), and never readable text
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from workbench.briefing.base import BRIEFER_PROMPT_CHARS, BriefRecord, BriefRequest

CARRY = {"none": 0.0, "lt60": 1.0, "60to85": 0.92, "gte85": 0.75}
SECTION_HEADINGS_CHARS = 200  # six headings (goal, files, done, pending, errors, next step) with markup
SECTION_SKELETON_CHARS = 600  # every section written, if only "none yet"
OPAQUE_SIZE_RATIO = 0.5  # Factory: opaque keeps 0.7% of tokens where anchored keeps 1.4%


def model_chars(
    *,
    previous_chars: int,
    bucket: str,
    new_chars: int,
    target_chars: int,
    new_chars_ratio: float,
    overshoot_ratio: float,
    min_chars: int,
    carry: Mapping[str, float] = CARRY,
) -> int:
    """The size model on plain numbers (shared with calibration, which fits its parameters)."""
    carried = previous_chars * carry.get(bucket, 1.0)
    fresh = new_chars * new_chars_ratio
    cap = target_chars * overshoot_ratio
    return int(round(max(min_chars, min(carried + fresh, cap))))


def simulated_chars(request: BriefRequest, carry: Mapping[str, float] = CARRY) -> int:
    """The size model above, as a pure function of the request."""
    k = request.knobs
    chars = model_chars(
        previous_chars=0 if request.regenerate else request.previous_chars,
        bucket=request.bucket,
        new_chars=request.compact_history_chars if request.regenerate else request.new_material_chars,
        target_chars=request.target_chars,
        new_chars_ratio=k.sim_new_chars_ratio,
        overshoot_ratio=k.sim_overshoot_ratio,
        min_chars=k.sim_min_chars,
        carry=carry,
    )
    if request.sections:
        chars = max(chars + SECTION_HEADINGS_CHARS, SECTION_SKELETON_CHARS)
    if request.opaque:
        chars = int(round(chars * OPAQUE_SIZE_RATIO))
    return chars


@dataclass(frozen=True)
class SimulatedBriefer:
    """Size-only briefings from the model above: free, instant, reproducible.

    ``carry`` overrides the per-bucket carry factors (e.g. fitted by ``workbench.explore.briefer_calibration``);
    as a tuple of (bucket, factor) pairs so the briefer stays hashable.
    """

    name: str = "simulated"
    carry: tuple[tuple[str, float], ...] | None = None

    def __call__(self, request: BriefRequest) -> BriefRecord:
        chars = simulated_chars(request, dict(self.carry) if self.carry else CARRY)
        tokens = math.ceil(chars / request.knobs.chars_per_token)
        input_tokens = math.ceil((request.compact_history_chars + BRIEFER_PROMPT_CHARS) / request.knobs.chars_per_token)
        return BriefRecord(
            text=None, chars=chars, tokens=tokens, model="simulated", input_tokens=input_tokens, output_tokens=tokens
        )
