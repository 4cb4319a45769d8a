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
    policy_limits,
)
from workbench.policies.prune import Pruned

if TYPE_CHECKING:
    from workbench.knobs import Knobs
    from workbench.policies.limits import Limits


def get_policy(knobs: Knobs) -> Policy:
    """The policy named by ``knobs.strategy``; unknown names list the known ones."""
    factory = POLICIES.get(knobs.strategy)
    if factory is None:
        raise ValueError(f"strategy must be one of {', '.join(sorted(POLICIES))}, got {knobs.strategy!r}")
    inner = factory(knobs)
    if knobs.prune_tool_outputs:
        return Pruned(inner=inner, knobs=knobs)
    return inner


def knob_limits(knobs: Knobs) -> Limits | None:
    """The limits the policy of ``knobs`` runs under (which trigger binds, the kept budget), without a replay: the
    same ``Limits`` a Run of these knobs carries (``Run.limits``). None for a policy that describes none."""
    return policy_limits(get_policy(knobs))


NO_LIMITS_WORDS = "trigger: not described by this policy"


def trigger_words(knobs: Knobs | None = None, *, limits: Limits | None = None) -> str:
    """What fires a replay, in one line ("trigger 167,000 tokens = window − 33,000 reserve; reactive: ..."), from
    ``limits`` (a Run's) or else the policy of ``knobs``: the trigger actually used, for every strategy, never the raw
    trigger_ratio (−1 for Claude Code) or a hard cap that does not bind."""
    if limits is None and knobs is not None:
        limits = knob_limits(knobs)
    return NO_LIMITS_WORDS if limits is None else limits.words()


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
    "knob_limits",
    "list_policy_names",
    "policy",
    "trigger_words",
]
