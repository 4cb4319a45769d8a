"""Live runs as a person starts them: an estimate first, then the run, and if a guard stops it, the run so far.

``estimate_live`` reads a dry replay with the size model: one request per compression it asked for,
prompt and answer sizes from the request features, dollars at the first cascade model's registry
prices. ``run_live`` replays with a ``LiveBriefer``; when the briefer raises ``LiveRunStopped`` (failures
in a row, a request or dollar cap) it replays the conversation up to the check where the run stopped
with the answers it had already paid for, so the faces can show every briefing written and what it cost
instead of an error alone. No request is sent twice: the second replay reads the recorded answers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.briefing.base import BRIEFER_PROMPT_CHARS, BriefRecord, BriefRequest
from workbench.briefing.guard import LiveLimits, LiveRunStopped
from workbench.counting.prices import Prices, get_prices
from workbench.history.words import counted
from workbench.policies import get_policy
from workbench.policies.base import Forwarding
from workbench.replay import Compression, Run, simulate

if TYPE_CHECKING:
    from workbench.briefing.live import LiveBriefer
    from workbench.history.model import History
    from workbench.knobs import Knobs
    from workbench.policies.base import Action, Policy, ReplayState


@dataclass(frozen=True, kw_only=True)
class LiveEstimate:
    """What a live run of these knobs should cost, read from a dry replay with the size model."""

    requests: int  # one per compression that writes a briefing (more only if a cascade falls through)
    input_tokens: int
    output_tokens: int
    dollars: float | None  # None: the model is not in the price registry
    model: str
    largest_request_tokens: int
    cascade: int = 1

    def summary(self) -> str:
        money = f"~${self.dollars:,.4f} at {self.model} prices" if self.dollars is not None else (
            f"dollars unknown ({self.model} is not in the price registry)")
        worst = f" (up to {self.requests * self.cascade:,} if every model of the cascade fails)" if self.cascade > 1 else ""
        return (f"estimate from a dry replay with the size model: {counted(self.requests, 'request')}{worst}, {money}; "
                f"largest request about {self.largest_request_tokens:,} tokens")


def estimate_live(run: Run, model: str, *, prices: Prices | None = None, cascade: int = 1) -> LiveEstimate:
    """Requests, tokens and dollars a live run of ``run.knobs`` should take, from its size-model replay."""
    asked = [c for c in run.compressions if c.summarize]
    cpt = run.knobs.chars_per_token
    ins = [math.ceil((c.compact_history_chars + BRIEFER_PROMPT_CHARS) / cpt) for c in asked]
    outs = [math.ceil(c.briefing_chars / cpt) for c in asked]
    prices = prices or get_prices(model)
    dollars = (sum(ins) * prices.input_per_token + sum(outs) * prices.output_per_token) if prices.known else None
    return LiveEstimate(requests=len(asked), input_tokens=sum(ins), output_tokens=sum(outs), dollars=dollars,
                        model=model, largest_request_tokens=max(ins, default=0), cascade=max(1, cascade))


def suggested_limits(estimate: LiveEstimate, *, failures: int = 3) -> LiveLimits:
    """Caps with room above the estimate: half as many requests again plus a few, twice the dollars (min 5¢)."""
    requests = math.ceil(estimate.requests * 1.5) + 3
    dollars = None if estimate.dollars is None else max(0.05, math.ceil(estimate.dollars * 200) / 100)
    return LiveLimits(max_consecutive_failures=failures, max_requests=requests, max_dollars=dollars)


@dataclass(frozen=True, kw_only=True)
class LiveOutcome:
    """A live run: the Run (whole, or up to where a guard stopped it), and what the provider was paid."""

    run: Run | None  # None when it stopped before the first check
    stopped: LiveRunStopped | None
    messages: int  # messages the run covers
    total_messages: int
    requests: int  # requests that reached a provider (a call that failed before sending is not one)
    dollars: float
    unsent: int = 0  # calls that failed before reaching a provider: no key, no connection
    # The size model's replay of the same messages as ``run`` when the run stopped early (None when it is whole):
    # what a stopped run is compared against, not the whole conversation's replay.
    baseline: Run | None = None

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def summary(self) -> str:
        spent = f"{counted(self.requests, 'provider request')}, ${self.dollars:,.4f}"
        if self.unsent:
            spent += f" ({counted(self.unsent, 'call')} never reached a provider)"
        if self.stopped is None:
            return f"live run complete: {spent}"
        where = (f"the replay covers messages 0-{self.messages - 1:,} of {self.total_messages:,}"
                 if self.messages else "nothing was replayed")
        text = f"live run stopped: {self.stopped.reason}"
        if self.stopped.error:
            text += f"\nlast attempt: {self.stopped.error}"
        return f"{text}\n{spent}; {where}"


def run_live(history: History, knobs: Knobs, briefer: LiveBriefer, *,
             on_compression: Callable[[int, Compression], None] | None = None) -> LiveOutcome:
    """Replay with live briefings; a guard's stop ends it early with the replay up to that point, and the size
    model's replay of those same messages to compare it with."""
    policy = _Tracking(get_policy(knobs))
    recorder = _Recording(briefer)
    total = len(history)
    try:
        run = simulate(history, knobs, recorder, policy=policy, on_compression=on_compression)
    except LiveRunStopped as stop:
        records = [*recorder.records, *([stop.record] if stop.record is not None else [])]
        end = _stop_end(policy, with_record=stop.record is not None)
        partial = baseline = None
        if end > 0:
            prefix = dataclasses.replace(history, messages=history.messages[:end])
            partial = simulate(prefix, knobs, _Replaying(records))
            baseline = simulate(prefix, knobs)
        return LiveOutcome(run=partial, stopped=stop, messages=end, total_messages=total, requests=briefer.requests,
                           dollars=briefer.spent_usd, unsent=getattr(briefer, "unsent", 0), baseline=baseline)
    return LiveOutcome(run=run, stopped=None, messages=total, total_messages=total, requests=briefer.requests,
                       dollars=briefer.spent_usd, unsent=getattr(briefer, "unsent", 0))


def _stop_end(policy: _Tracking, *, with_record: bool) -> int:
    """How many messages the partial replay keeps: through the stop check when its compression was paid for,
    else through the check before it (that compression never happened)."""
    state = policy.last
    if state is None:
        return 0
    if with_record:
        return state.index + 1
    if state.check == 0 or state.checks is None:
        return 0
    return int(state.checks[state.check - 1]) + 1


class _Tracking(Forwarding):
    """The knobs' policy, remembering where it last decided: the check whose compression a stop interrupted.
    Everything else (watches, limits) is the policy's own (``Forwarding``)."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.last: ReplayState | None = None

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        self.last = state
        return self.inner.decide(state)


class _Recording:
    """The live briefer, keeping every record it returned in order."""

    name = "live"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.records: list[BriefRecord] = []

    def __call__(self, request: BriefRequest) -> BriefRecord:
        record = self.inner(request)
        self.records.append(record)
        return record


class _Replaying:
    """Hands back recorded live answers in order; nothing is sent. Past the last one: a compression not asked."""

    name = "live"

    def __init__(self, records: list[BriefRecord]) -> None:
        self.records = iter(records)

    def __call__(self, request: BriefRequest) -> BriefRecord:
        found = next(self.records, None)
        if found is not None:
            return found
        return BriefRecord(text=None, chars=0, tokens=0, model="", failed=True,
                           error="not sent: the live run had stopped")
