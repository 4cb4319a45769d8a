"""The live briefer: a cascade of LLMs called through litellm, answers cached on disk, cost per attempt.

Follows stagewise's cascade (spec §8): models are tried in order, each with a timeout, temperature 0.1
and a cap on output tokens; a trimmed answer under 30 UTF-16 units is rejected and the next model is
tried; a final fallback model is tried if it was not in the list; if a call neither answers nor fails
within timeout + grace it is *unsettled* and the whole cascade stops (no overlapping billed requests).
When every attempt fails the record says ``failed=True`` and the replay carries on uncompressed.
Guards (``workbench.briefing.guard``): after three failed compressions in a row, or before a request
that would pass a request or dollar cap, the briefer raises ``LiveRunStopped`` instead of going on.

litellm is imported inside the call path only (with its offline price map), and retries are off so a
timeout is exactly one timeout. The API key, and any user:password inside ``api_base``, live only on this
object (``api_base`` itself is the URL without them): they never reach a cache key, a cached value, a record or
an error detail, in any form (a server that echoes ``Authorization: Basic …`` hands back their base64). The records it returns and caches are built in
``workbench.briefing.live_records``; keys are scrubbed by ``workbench.briefing.scrub``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.briefing.base import Attempt, BriefRecord, BriefRequest
from workbench.briefing.guard import Check, LiveLimits, LiveRunStopped, request_cost_estimate
from workbench.briefing.live_records import answer_record, cache_value, cached_record, failed_record
from workbench.briefing.prompt import PROMPT_VERSION, build_messages
from workbench.briefing.provider import import_litellm
from workbench.briefing.provider_errors import error_line, reached_provider
from workbench.briefing.scrub import scrub_known, scrub_secrets, without_credentials
from workbench.history.jsjson import utf16_len
from workbench.history.words import counted

if TYPE_CHECKING:
    from workbench.briefing.cache import BriefingCache
    from workbench.counting.prices import Prices

MIN_CHARS = 30
TIMEOUT_S = 30.0
GRACE_S = 2.0
TEMPERATURE = 0.1
MAX_OUTPUT_TOKENS = 20_000
TEST_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
TEST_MAX_TOKENS = 5


@dataclass(frozen=True, kw_only=True)
class _Answer:
    attempt: Attempt
    text: str | None = None
    stop: bool = False  # unsettled: the cascade must not go on


class LiveBriefer:
    """Briefings from real LLMs: ``LiveBriefer(["gemini/gemini-2.5-flash-lite", "openai/gpt-4.1-mini"])``.

    ``cache=None`` disables caching; pass a :class:`~workbench.briefing.cache.BriefingCache` to reuse
    answers. ``prices`` overrides registry prices per model (e.g. for local or fake models).
    ``extra_params`` go to ``litellm.completion`` unchanged and never into the cache key
    (``mock_response`` for unit tests, provider options). With a cache, the first model in cascade
    order that has a cached answer for this exact prompt is used, so a re-run makes no request at all.
    Failures are not cached: a failed briefing is tried again on the next run.
    """

    name = "live"

    def __init__(
        self,
        models: Sequence[str],
        *,
        fallback_model: str | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = TIMEOUT_S,
        grace_s: float = GRACE_S,
        temperature: float = TEMPERATURE,
        max_output_tokens: int = MAX_OUTPUT_TOKENS,
        min_chars: int = MIN_CHARS,
        cache: BriefingCache | None = None,
        prices: Mapping[str, Prices] | None = None,
        extra_params: Mapping[str, Any] | None = None,
        limits: LiveLimits | None = None,
    ) -> None:
        if not models and not fallback_model:
            raise ValueError("models must name at least one model (or give fallback_model)")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        self.models = tuple(dict.fromkeys(models))
        self.fallback_model = fallback_model
        self.api_base = without_credentials(api_base)  # what may be shown or keyed on
        self._endpoint = api_base  # what is called: with its user:password, if it has one
        self._api_key = api_key
        self.timeout_s = float(timeout_s)
        self.grace_s = float(grace_s)
        self.temperature = float(temperature)
        self.max_output_tokens = int(max_output_tokens)
        self.min_chars = int(min_chars)
        self.cache = cache
        self.prices = dict(prices or {})
        self.extra_params = dict(extra_params or {})
        self.limits = limits or LiveLimits()
        self.requests = 0  # provider requests this object made (cache hits make none, nor calls that never left)
        self.unsent = 0  # calls that failed before reaching the provider (no key, no connection): never billed
        self.spent_usd = 0.0  # what those requests cost
        self.failures_in_row = 0  # failed compressions since the last good one

    def __repr__(self) -> str:  # never show the key
        from workbench.briefing.cache import endpoint_id

        base = endpoint_id(self.api_base) or None  # never the user:password part of the URL
        return f"LiveBriefer(models={list(self.cascade)!r}, api_base={base!r}, timeout_s={self.timeout_s})"

    @property
    def cascade(self) -> tuple[str, ...]:
        """Models in the order they are tried: the list, then the fallback if it was not in it."""
        if self.fallback_model and self.fallback_model not in self.models:
            return (*self.models, self.fallback_model)
        return self.models

    @property
    def sampling(self) -> dict[str, Any]:
        """The parameters that shape an answer (and hence the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_output_tokens}

    def messages_for(self, request: BriefRequest) -> list[dict[str, str]]:
        """The chat messages sent for this request (system prompt + user message)."""
        return build_messages(request.compact_history, request.previous_chars, request.target_chars)

    def cache_key_for(self, model: str, messages: list[dict[str, str]]) -> str:
        from workbench.briefing.cache import cache_key

        return cache_key(model, messages, self.sampling, PROMPT_VERSION, api_base=self.api_base)

    # -- the cascade -------------------------------------------------------------------------
    def __call__(self, request: BriefRequest) -> BriefRecord:
        messages = self.messages_for(request)
        keys = {m: self.cache_key_for(m, messages) for m in self.cascade} if self.cache is not None else {}
        if self.cache is None:
            return self._cascade(request, messages, keys)
        ordered = [keys[m] for m in self.cascade]
        found = self.cache.lookup(ordered)
        if found is not None:
            return self._from_cache(found[1], request)
        # One payer per prompt across runs sharing the cache: claim it, or wait for whoever holds it.
        claim, bound = ordered[0], len(self.cascade) * (self.timeout_s + self.grace_s) + 5.0
        if not self.cache.claim(claim, bound):
            found = self.cache.wait_for(ordered, claim, bound)
            if found is not None:
                self.failures_in_row = 0
                return self._from_cache(found[1], request)
        try:
            return self._cascade(request, messages, keys)
        finally:
            self.cache.release(claim)

    def _cascade(self, request: BriefRequest, messages: list[dict[str, str]], keys: dict[str, str]) -> BriefRecord:
        attempts: list[Attempt] = []
        for model in self.cascade:
            held = self._held(model, messages, request)
            if held:
                if not attempts:  # nothing sent for this compression: it never happened
                    raise self._stopped(held)
                attempts.append(Attempt(model=model, outcome="skipped", detail=held))
                raise self._stopped(held, failed_record(attempts))
            answer = self._attempt(model, messages)
            attempts.append(answer.attempt)
            self.spent_usd += answer.attempt.cost_usd
            if answer.stop:
                break
            if answer.text is not None:
                record = answer_record(request, model, answer.text, attempts)
                if self.cache is not None:
                    self.cache.set(keys[model], cache_value(request, record))
                self.failures_in_row = 0
                return record
        record = failed_record(attempts)
        self.failures_in_row += 1
        limit = self.limits.max_consecutive_failures
        if limit and self.failures_in_row >= limit:
            raise self._stopped(f"{counted(self.failures_in_row, 'compression')} failed in a row", record)
        return record

    # -- guards --------------------------------------------------------------------------------
    def _held(self, model: str, messages: list[dict[str, str]], request: BriefRequest) -> str:
        """Why the next request must not be sent (a cap it would pass), or "" to send it."""
        lim = self.limits
        if lim.max_requests is not None and self.requests >= lim.max_requests:
            return f"request cap reached ({counted(lim.max_requests, 'request')})"
        if lim.max_dollars is not None:
            cost = self.request_cost(model, messages, request)
            if self.spent_usd + cost > lim.max_dollars:
                return (f"dollar cap ${lim.max_dollars:,.2f} would be passed (${self.spent_usd:,.4f} spent, the next "
                        f"request about ${cost:,.4f})")
        return ""

    def request_cost(self, model: str, messages: list[dict[str, str]], request: BriefRequest) -> float:
        """The estimated dollars of sending ``messages`` to ``model`` (what the dollar cap checks)."""
        from workbench.counting.prices import get_prices

        prices = self.prices.get(model) or get_prices(model)
        chars = sum(utf16_len(m["content"]) for m in messages)
        return request_cost_estimate(prices, chars, request.target_chars, self.max_output_tokens)

    def check_models(self) -> tuple[Check, ...]:
        """One tiny real request to each model of the cascade (a few tokens each), made only when asked.

        Counts toward ``requests`` and ``spent_usd`` like any other request, and is never cached.
        """
        out: list[Check] = []
        for model in self.cascade:
            lim = self.limits
            if lim.max_requests is not None and self.requests >= lim.max_requests:
                out.append(Check(model=model, level="error", message=f"{model}: not sent, request cap reached"))
                continue
            answer = self._attempt(model, TEST_MESSAGES, max_tokens=TEST_MAX_TOKENS)
            a = answer.attempt
            self.spent_usd += a.cost_usd
            if a.outcome in ("ok", "too-short"):  # any answer at all: the key, model and endpoint work
                out.append(Check(model=model, level="ok", message=f"{model}: answered in {a.latency_s:.1f}s "
                                 f"(${a.cost_usd:,.6f})"))
            else:
                out.append(Check(model=model, level="error", message=f"{model}: {a.outcome}: {a.detail}"))
        return tuple(out)

    def _stopped(self, reason: str, record: BriefRecord | None = None) -> LiveRunStopped:
        error = record.error if record is not None else ""
        return LiveRunStopped(reason, error=error, requests=self.requests, dollars=self.spent_usd, record=record)

    def _attempt(self, model: str, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> _Answer:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            **self.sampling,
            **({"max_tokens": max_tokens} if max_tokens else {}),
            "timeout": self.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
            **self.extra_params,
        }
        if self._endpoint:
            kwargs["api_base"] = self._endpoint
        if self._api_key:
            kwargs["api_key"] = self._api_key
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["response"] = litellm.completion(**kwargs)
            except BaseException as exc:  # noqa: BLE001 - reported as the attempt's outcome
                box["error"] = exc

        self.requests += 1
        start = time.perf_counter()
        worker = threading.Thread(target=call, name=f"briefer-{model}", daemon=True)
        worker.start()
        worker.join(self.timeout_s + self.grace_s)
        latency = time.perf_counter() - start
        if worker.is_alive():
            detail = f"no answer within {self.timeout_s:g}s + {self.grace_s:g}s grace; cascade stopped"
            return _Answer(attempt=Attempt(model=model, outcome="unsettled", latency_s=latency, detail=detail), stop=True)
        if "error" in box:
            exc = box["error"]
            timeout_types = tuple(t for t in (getattr(litellm, "Timeout", None), TimeoutError) if isinstance(t, type))
            outcome = "timeout" if isinstance(exc, timeout_types) else "error"
            if outcome == "error" and not reached_provider(exc):  # a key checked locally, a refused connection
                self.requests -= 1
                self.unsent += 1
                outcome = "not sent"
            detail = self._scrub(error_line(exc))[:300]
            return _Answer(attempt=Attempt(model=model, outcome=outcome, latency_s=latency, detail=detail))
        response = box["response"]
        text = self._scrub_known(_content(response).strip())  # a provider that echoes the key: never stored
        usage = getattr(response, "usage", None)
        in_tok = int(getattr(usage, "prompt_tokens", 0) or 0)
        out_tok = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = self._cost(model, response, in_tok, out_tok)
        if utf16_len(text) < self.min_chars:
            outcome, detail = "too-short", f"{utf16_len(text)} chars after trimming, under the {self.min_chars}-char minimum"
        else:
            outcome, detail = "ok", ""
        attempt = Attempt(model=model, outcome=outcome, latency_s=latency, detail=detail, input_tokens=in_tok,
                          output_tokens=out_tok, cost_usd=cost)
        return _Answer(attempt=attempt, text=text if outcome == "ok" else None)

    # -- cost, cache -------------------------------------------------------------------------
    def _cost(self, model: str, response: Any, in_tok: int, out_tok: int) -> float:
        """Registry prices (or an override) × usage; litellm's own response cost when the registry has none."""
        prices = self.prices.get(model)
        if prices is None:
            from workbench.counting.prices import get_prices

            prices = get_prices(model)
        if prices.known:
            return in_tok * prices.input_per_token + out_tok * prices.output_per_token
        hidden = getattr(response, "_hidden_params", None) or {}
        value = hidden.get("response_cost") if isinstance(hidden, dict) else None
        return float(value) if isinstance(value, (int, float)) else 0.0

    def _scrub(self, text: str) -> str:
        return scrub_secrets(text, self._api_key, self._endpoint)

    def _scrub_known(self, text: str) -> str:
        return scrub_known(text, self._api_key, self._endpoint)

    def _from_cache(self, value: Mapping[str, Any], request: BriefRequest) -> BriefRecord:
        """The stored answer as a record, its text scrubbed of this run's key."""
        return cached_record(value, request, self._scrub_known(str(value.get("text") or "")))


def _content(response: Any) -> str:
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        return ""
    return content if isinstance(content, str) else ""
