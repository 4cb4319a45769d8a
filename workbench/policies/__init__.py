"""Compaction policies, one module per system; importing this package registers them all."""

from workbench.policies import stagewise  # noqa: F401
from workbench.policies.base import (
    POLICIES,
    Action,
    Compact,
    Elide,
    Policy,
    ReplayState,
    Skip,
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
    "get_policy",
    "list_policy_names",
    "policy",
]
