"""The policy interface the replay drives: when to look, what to fold, what to elide, what stays pinned.

A policy never loops over the history itself on every step. It names a *watch threshold* on context
tokens; the replay finds the first check above it with a vectorized search (context only grows
between events), then asks the policy to ``decide``. A decision is a tuple of actions: fold a prefix
into a briefing (``Compact``), replace old tool outputs with stubs (``Elide``), or drop a prefix with
no briefing (``Compact(summarize=False)``, a sliding window). Policies are pure and frozen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from workbench.history.model import History
    from workbench.knobs import Knobs


@dataclass(frozen=True, kw_only=True)
class ReplayState:
    """What a policy may look at when the replay asks it to decide, at one check point."""

    history: History
    knobs: Knobs
    check: int  # index of this check point
    index: int  # message index of this check (messages 0..index exist)
    context_tokens: int  # trigger counter: system + briefing + pinned + verbatim - elided
    boundary: int  # first verbatim message of the current context
    briefing_chars: int  # current briefing length (0 if none)
    briefing_tokens: int
    compressions: int  # landed compressions so far (the next one is chain index compressions + 1)
    last_compaction_check: int | None
    counter_tokens: np.ndarray  # per-message trigger-counter tokens
    estimate_tokens: np.ndarray  # per-message boundary-walk tokens (no briefing overlays)
    content_chars: np.ndarray  # stagewise chars per message without overhead
    briefing_at: Mapping[int, int]  # message index -> chars of a briefing stored on it (for estimates)
    elided: frozenset[int]  # messages whose tool outputs are stubs now
    pinned: frozenset[int]  # messages kept in context even before the boundary
    elided_savings: np.ndarray  # tokens saved per message by elision
    overflowed: bool = False  # this check is above the window
    stub_tokens_of: Callable[[int], int] | None = field(default=None, compare=False)

    def estimate_of(self, i: int) -> int:
        """The boundary-walk estimate of message i, counting a briefing stored on it (stagewise §5)."""
        extra = self.briefing_at.get(i)
        base = int(self.estimate_tokens[i])
        if not extra or base == 0:  # stagewise counts 0 for a message without a parts array
            return base
        k = self.knobs
        if k.boundary_counter == "estimate":
            total = int(self.content_chars[i]) + k.overhead_chars_per_message + extra
            return math.ceil(total / k.chars_per_token)
        return base + math.ceil(extra / k.chars_per_token)


@dataclass(frozen=True, kw_only=True)
class Compact:
    """Fold messages [.., boundary) into the briefing (or drop them when summarize is False)."""

    boundary: int
    summarize: bool = True
    outcome: str = ""
    kept_count: int | None = None
    kept_tokens: int | None = None
    reason: str = "threshold"
    pinned: tuple[int, ...] = ()  # messages before the boundary that stay in context
    regenerate: bool = False  # the briefer re-reads the raw history from the start (regenerative family)
    sections: bool = False  # ask for an anchored sectioned briefing


@dataclass(frozen=True, kw_only=True)
class Elide:
    """Replace the tool outputs of these messages with short stubs (no LLM call)."""

    indices: tuple[int, ...]
    reason: str = "elide"


@dataclass(frozen=True, kw_only=True)
class Skip:
    """The policy looked and chose to do nothing (recorded once per reason, not every step)."""

    reason: str


Action = Compact | Elide | Skip


class Policy(Protocol):
    """When to look, and what to do when the context is above the watch threshold."""

    name: str

    def watch_threshold(self, state: ReplayState) -> tuple[float, bool] | None:
        """(tokens, strict): the replay calls ``decide`` at checks above it; None = never."""
        ...

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        ...


PolicyFactory = Callable[["Knobs"], Policy]
POLICIES: dict[str, PolicyFactory] = {}
POLICY_DOCS: dict[str, str] = {}


def policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory under a snake_case name (written into YAML: never rename)."""

    def register(factory: PolicyFactory) -> PolicyFactory:
        POLICIES[name] = factory
        POLICY_DOCS[name] = (factory.__doc__ or "").strip().splitlines()[0] if factory.__doc__ else ""
        return factory

    return register


def get_policy(knobs: Knobs) -> Policy:
    """The policy named by ``knobs.strategy``; unknown names list the known ones."""
    import workbench.policies  # noqa: F401  (registers the built-in policies)

    factory = POLICIES.get(knobs.strategy)
    if factory is None:
        raise ValueError(f"strategy must be one of {', '.join(sorted(POLICIES))}, got {knobs.strategy!r}")
    return factory(knobs)


def list_policy_names() -> list[str]:
    import workbench.policies  # noqa: F401

    return sorted(POLICIES)
