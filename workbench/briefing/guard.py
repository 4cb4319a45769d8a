"""Guards for live briefings: a pre-flight check before the first request, caps, and the stop they raise.

A live run with no key used to retry at every check (a thousand failed requests where twenty were
announced). Three guards stop that: ``preflight`` reads what litellm can tell offline (the model's
provider, whether its key is in the environment, its window and prices in the bundled cost map) before
anything is sent; ``LiveLimits`` caps consecutive failed compressions, requests and dollars; and a
cap that is reached raises ``LiveRunStopped``, which carries the provider's last error (scrubbed), what
was spent and the record of the compression it stopped in. ``workbench.analysis.live_runs`` turns that
into the replay up to the stop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.history.words import counted

if TYPE_CHECKING:
    from workbench.briefing.base import BriefRecord
    from workbench.counting.prices import Prices

MAX_CONSECUTIVE_FAILURES = 3


@dataclass(frozen=True, kw_only=True)
class LiveLimits:
    """When a live run stops: after this many failed compressions in a row, requests, or dollars (None = no cap).

    The dollar cap is checked before each request against its estimated cost (prompt tokens at chars/4 plus
    the briefing target as output); the provider's bill for that request may differ from the estimate.
    """

    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES  # 0 = never stop on failures
    max_requests: int | None = None
    max_dollars: float | None = None

    def __post_init__(self) -> None:
        if self.max_consecutive_failures < 0:
            raise ValueError(f"max_consecutive_failures must be >= 0, got {self.max_consecutive_failures!r}")
        if self.max_requests is not None and self.max_requests < 0:
            raise ValueError(f"max_requests must be >= 0, got {self.max_requests!r}")
        if self.max_dollars is not None and not (self.max_dollars >= 0 and math.isfinite(self.max_dollars)):
            raise ValueError(f"max_dollars must be a finite amount >= 0, got {self.max_dollars!r}")

    def describe(self) -> str:
        """The caps in words, for the line a face prints before starting."""
        parts = [f"stop after {counted(self.max_consecutive_failures, 'failed compression')} in a row"
                 if self.max_consecutive_failures else "no stop on failures"]
        parts.append(f"at most {counted(self.max_requests, 'request')}" if self.max_requests is not None else "no request cap")
        parts.append(f"at most ${self.max_dollars:,.2f}" if self.max_dollars is not None else "no dollar cap")
        return ", ".join(parts)


class LiveRunStopped(RuntimeError):
    """A guard stopped a live run: why, the provider's last error, and what had been spent."""

    def __init__(self, reason: str, *, error: str = "", requests: int = 0, dollars: float = 0.0,
                 record: BriefRecord | None = None) -> None:
        self.reason = reason
        self.error = error  # already scrubbed of keys
        self.requests = requests
        self.dollars = dollars
        self.record = record  # the failed compression it stopped in, None when it stopped before sending
        text = f"live run stopped: {reason}"
        if error:
            text += f"; last provider error: {error}"
        super().__init__(f"{text} ({counted(requests, 'provider request')}, ${dollars:,.4f})")


def request_cost_estimate(prices: Prices, prompt_chars: int, target_chars: int, max_output_tokens: int) -> float:
    """Dollars one briefing request is expected to cost: prompt at chars/4, the target length as output."""
    if not prices.known:
        return 0.0
    out = min(max_output_tokens, math.ceil(target_chars / 4))
    return math.ceil(prompt_chars / 4) * prices.input_per_token + out * prices.output_per_token


@dataclass(frozen=True, kw_only=True)
class Check:
    """One finding of the pre-flight check: ``error`` stops the run before any request, ``warning`` does not."""

    model: str
    level: str  # ok | warning | error
    message: str


def preflight(models: Sequence[str], *, api_key: str | None = None, api_base: str | None = None,
              largest_request_tokens: int | None = None) -> tuple[Check, ...]:
    """What litellm can tell offline about each model of a cascade, before a single request is sent.

    Errors: a name litellm cannot route to a provider; a provider key (or setting) missing from the
    environment when no key is given. Warnings: a model not in the bundled cost map (no price, so no
    dollar estimate and no dollar cap), or a briefing request larger than the model's input window.
    """
    from workbench.briefing.provider import import_litellm
    from workbench.counting.prices import get_prices

    litellm = import_litellm()
    out: list[Check] = []
    for model in dict.fromkeys(models):
        try:
            _, provider, _, _ = litellm.get_llm_provider(model, api_base=api_base)
        except Exception:  # noqa: BLE001 - litellm raises its own BadRequestError here
            out.append(Check(model=model, level="error", message=f"{model}: litellm does not know its provider; "
                             "name it as provider/model, e.g. openai/gpt-4.1-mini or gemini/gemini-2.5-flash-lite"))
            continue
        env = litellm.validate_environment(model=model, api_key=api_key, api_base=api_base)
        missing = list(env.get("missing_keys") or [])
        if not env.get("keys_in_environment", True) and missing:
            out.append(Check(model=model, level="error", message=f"{model}: no credentials for {provider} (litellm "
                             f"looks for {', '.join(missing)}): put the key in the environment or pass it in (a local "
                             "server that needs no key: any placeholder)"))
            continue
        prices = get_prices(model)
        if not prices.known:
            out.append(Check(model=model, level="warning", message=f"{model}: not in litellm's bundled cost map, so "
                             "its dollars are not estimated and the dollar cap counts only what the provider reports"))
        elif (largest_request_tokens and prices.max_input_tokens
              and largest_request_tokens > prices.max_input_tokens):
            out.append(Check(model=model, level="warning", message=f"{model}: the largest briefing request (about "
                             f"{largest_request_tokens:,} tokens) is above its {prices.max_input_tokens:,}-token "
                             "input window; those compressions will fail"))
        else:
            window = f", {prices.max_input_tokens:,}-token input window" if prices.max_input_tokens else ""
            out.append(Check(model=model, level="ok", message=f"{model}: {provider}, credentials found{window}"))
    return tuple(out)


def blocking(checks: Sequence[Check]) -> tuple[Check, ...]:
    """The checks that stop a run before it starts."""
    return tuple(c for c in checks if c.level == "error")
