"""The replay: walk a recorded conversation and keep the context an agent would have had.

``simulate(history, knobs, briefer)`` returns a :class:`~workbench.replay.results.Run`.
"""

from workbench.replay.loop import check_indices, simulate
from workbench.replay.results import METRIC_SPECS, Compression, Event, Metrics, MetricSpec, Run, metric_label

__all__ = ["METRIC_SPECS", "Compression", "Event", "MetricSpec", "Metrics", "Run", "check_indices", "metric_label",
           "simulate"]
