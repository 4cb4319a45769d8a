"""The replay: walk a recorded conversation and keep the context an agent would have had.

``simulate(history, knobs, briefer)`` returns a :class:`~workbench.replay.results.Run`.
"""

from workbench.replay.loop import check_indices, simulate
from workbench.replay.results import Compression, Event, Metrics, Run

__all__ = ["Compression", "Event", "Metrics", "Run", "check_indices", "simulate"]
