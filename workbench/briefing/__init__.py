"""Briefers: the simulated size model, the extractive offline writer, the live LLM cascade.

Importing this package never imports litellm or diskcache; the live briefer and the cache load them
on first use.
"""

from workbench.briefing.base import Attempt, Briefer, BriefRecord, BriefRequest
from workbench.briefing.extractive import ExtractiveBriefer
from workbench.briefing.live import LiveBriefer
from workbench.briefing.simulated import SimulatedBriefer, simulated_chars

__all__ = [
    "Attempt",
    "BriefRecord",
    "BriefRequest",
    "Briefer",
    "ExtractiveBriefer",
    "LiveBriefer",
    "SimulatedBriefer",
    "simulated_chars",
]
