"""Compaction policies, one module per system or family; importing this package registers them all.

stagewise (the default), msagent, staged (seed 002), summarize (the threshold family most peers share),
sliding_window, importance and task_boundary (seed 003). ``prune`` is a pre-pass any of them can enable.
"""

from workbench.policies import (  # noqa: F401
    importance,
    msagent,
    sliding_window,
    staged,
    stagewise,
    summarize,
    task_boundary,
)
from workbench.policies.base import (
    POLICIES,
    Action,
    Compact,
    Elide,
    Policy,
    ReplayState,
    Skip,
    Watch,
    get_policy,
    list_policy_names,
    policy,
)

__all__ = [
    "POLICIES",
    "Action",
    "Compact",
    "Elide",
    "Policy",
    "ReplayState",
    "Skip",
    "Watch",
    "get_policy",
    "list_policy_names",
    "policy",
]
