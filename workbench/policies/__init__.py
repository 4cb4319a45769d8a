"""Compaction policies, one module per system or family; importing this package registers them all.

stagewise (the default), msagent, staged (Fan et al., Sep 2026), summarize (the threshold family most
peers share), sliding_window, importance and task_boundary (seed 003), observation_masking (SWE-agent; with a trigger,
The Complexity Trap's hybrid). ``prune`` is a pre-pass any of them can enable.
The interface and the registry live in ``base``, which imports no policy; this package picks one by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.policies import (  # noqa: F401  (each module registers its policy)
    importance,
    masking,
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
    policy,
)
from workbench.policies.prune import Pruned

if TYPE_CHECKING:
    from workbench.knobs import Knobs


def get_policy(knobs: Knobs) -> Policy:
    """The policy named by ``knobs.strategy``; unknown names list the known ones."""
    factory = POLICIES.get(knobs.strategy)
    if factory is None:
        raise ValueError(f"strategy must be one of {', '.join(sorted(POLICIES))}, got {knobs.strategy!r}")
    inner = factory(knobs)
    if knobs.prune_tool_outputs:
        return Pruned(inner=inner, knobs=knobs)
    return inner


def list_policy_names() -> list[str]:
    """Registered policy names, sorted (the app's strategy choices)."""
    return sorted(POLICIES)


__all__ = [
    "POLICIES",
    "Action",
    "Compact",
    "Elide",
    "Policy",
    "Pruned",
    "ReplayState",
    "Skip",
    "Watch",
    "get_policy",
    "list_policy_names",
    "policy",
]
