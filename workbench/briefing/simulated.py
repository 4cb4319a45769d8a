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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.briefing.base import BRIEFER_PROMPT_CHARS, BriefRecord, BriefRequest

CARRY = {"none": 0.0, "lt60": 1.0, "60to85": 0.92, "gte85": 0.75}


def simulated_chars(request: BriefRequest) -> int:
    """The size model above, as a pure function of the request."""
    k = request.knobs
    carried = 0.0 if request.regenerate else request.previous_chars * CARRY.get(request.bucket, 1.0)
    new_chars = request.compact_history_chars if request.regenerate else request.new_material_chars
    fresh = new_chars * k.sim_new_chars_ratio
    cap = request.target_chars * k.sim_overshoot_ratio
    return int(round(max(k.sim_min_chars, min(carried + fresh, cap))))


@dataclass(frozen=True)
class SimulatedBriefer:
    """Size-only briefings from the model above: free, instant, reproducible."""

    name: str = "simulated"

    def __call__(self, request: BriefRequest) -> BriefRecord:
        chars = simulated_chars(request)
        tokens = math.ceil(chars / request.knobs.chars_per_token)
        input_tokens = math.ceil((request.compact_history_chars + BRIEFER_PROMPT_CHARS) / request.knobs.chars_per_token)
        return BriefRecord(
            text=None, chars=chars, tokens=tokens, model="simulated", input_tokens=input_tokens, output_tokens=tokens
        )
