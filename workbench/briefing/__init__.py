"""Briefers: the simulated size model, the extractive offline writer, the live LLM cascade."""

from workbench.briefing.base import Attempt, Briefer, BriefRecord, BriefRequest
from workbench.briefing.simulated import SimulatedBriefer, simulated_chars

__all__ = ["Attempt", "BriefRecord", "BriefRequest", "Briefer", "SimulatedBriefer", "simulated_chars"]
