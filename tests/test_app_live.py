"""The Live runs tab after a run that stopped (issue 21 item 4), driven by AppTest against tests/fake_provider.py.

A stopped run is compared with the size model's replay of the same messages, not the whole conversation; the
provider's error is one line with no traceback; only requests that reached a provider are counted; the table's
headers are ``labels.COLUMNS``' words.
"""

from __future__ import annotations

import json
import socket

import pytest
from test_app import REPO, SHORT, app, widget

from workbench.analysis.compare import format_delta
from workbench.briefing.provider_errors import error_line, reached_provider
from workbench.display import labels
from workbench.history.readers import load_history
from workbench.knobs import Knobs
from workbench.replay import METRIC_SPECS, simulate
from workbench.ui.live_tab import LIVE_COLUMNS

WINDOW = {"knob_context_window_tokens": 20_000}


def _run(provider_base: str, model: str, *, key: str | None = "sk-test-0123456789abcdef", cap: int | None = None,
         skip: bool = False):
    at = app(tab="Live runs", **WINDOW)
    widget(at, "live_models").set_value([model]).run()
    widget(at, "live_api_base").input(provider_base).run()
    if key:
        widget(at, "live_api_key").input(key).run()
    if cap is not None:
        widget(at, "live_max_requests").set_value(cap).run()
    if skip:
        widget(at, "live_skip_preflight").check().run()
    at.button(key="live_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _live_cards(at) -> dict[str, tuple[str, str]]:
    """The Live runs tab's cards (the last ten on the page): label → (value, delta)."""
    return {m.label: (m.value, m.delta) for m in list(at.metric)[-10:]}


def _prefix_baseline(messages: int):
    history = load_history(REPO / SHORT)
    import dataclasses

    return simulate(dataclasses.replace(history, messages=history.messages[:messages]),
                    Knobs(context_window_tokens=20_000))


@pytest.mark.slow
def test_a_run_stopped_by_the_request_cap_is_compared_with_the_same_messages():
    """Two requests, then the cap: the cards' deltas are against the size model's replay of the messages the live
    run covers; against the whole replay the tokens per task would show a large gain that is only the cut. Its
    table's headers are words from the label table (checked on this run: each live run is a served page and litellm)."""
    from fake_provider import FakeProvider

    with FakeProvider() as provider:
        at = _run(provider.api_base, "openai/fake-good", cap=2)
    live = at.session_state["live_run"][1]
    covered = live.metrics.messages
    whole = simulate(load_history(REPO / SHORT), Knobs(context_window_tokens=20_000))
    assert 0 < covered < whole.metrics.messages
    same = _prefix_baseline(covered)
    cards = _live_cards(at)
    label = METRIC_SPECS["tokens_per_task"].short
    diff = live.metrics.tokens_per_task - same.metrics.tokens_per_task
    shown = cards[label][1]
    assert shown == (format_delta("tokens_per_task", diff, live.metrics.tokens_per_task) if diff else None)
    cut = live.metrics.tokens_per_task - whole.metrics.tokens_per_task
    assert shown != format_delta("tokens_per_task", cut, live.metrics.tokens_per_task)  # not the whole replay's
    assert abs(diff) < abs(cut)
    assert any(f"covers {covered:,} messages of {whole.metrics.messages:,}" in c.value for c in at.caption)

    config = next(c for c in (json.loads(d.proto.columns) for d in at.dataframe) if "briefer_cache_hit" in c)
    headers = {col: c.get("label") for col, c in config.items()}
    assert headers["briefer_cache_hit"] == labels.COLUMNS["briefer_cache_hit"] == "from cache"
    assert all(headers[c] == labels.COLUMNS[c] for c in LIVE_COLUMNS if c in headers)
    assert not any("_" in (h or "") for h in headers.values())


@pytest.mark.slow
def test_a_failing_model_shows_one_line_of_error_and_counts_its_requests():
    """HTTP 500 three times: the provider saw three requests; the error is its words, with no traceback."""
    from fake_provider import FakeProvider

    with FakeProvider() as provider:
        at = _run(provider.api_base, "openai/fake-fail")
        assert provider.total_requests == 3
    errors = " ".join(e.value for e in at.error)
    assert "3 provider requests" in errors and "fake provider: internal error" in errors and "HTTP 500" in errors
    assert "Traceback" not in errors and "litellm.InternalServerError: InternalServerError" not in errors
    live = at.session_state["live_run"][1]
    same = _prefix_baseline(live.metrics.messages)  # the cards compare the part replayed
    assert at.session_state["live_baseline"][1].metrics == same.metrics


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_calls_that_never_reach_a_provider_are_not_counted_as_requests():
    """A refused connection: three compressions fail, no request was sent, and the page says so (not "3 provider
    requests"), without a made-up HTTP status."""
    at = _run(f"http://127.0.0.1:{_closed_port()}/v1", "openai/fake-good")
    errors = " ".join(e.value for e in at.error)
    assert "3 compressions failed in a row" in errors
    assert "0 provider requests" in errors and "3 calls never reached a provider" in errors
    assert "not sent" in errors and "HTTP 500" not in errors and "Traceback" not in errors


class _Wrapped(Exception):
    """Stands for litellm's wrapper: a class from the litellm package with a cause."""


_Wrapped.__module__ = "litellm.exceptions"


def test_reached_provider_reads_the_cause_chain():
    import httpx

    local = _Wrapped("litellm.APIConnectionError: Missing Gemini API key. Set the GEMINI_API_KEY environment "
                     "variable.\nTraceback (most recent call last):\n  File \"x.py\", line 1")
    local.__cause__ = ValueError("Missing Gemini API key")
    assert not reached_provider(local)
    assert error_line(local) == "_Wrapped: Missing Gemini API key. Set the GEMINI_API_KEY environment variable."
    refused = _Wrapped("Connection error.")
    refused.__cause__ = httpx.ConnectError("refused")
    assert not reached_provider(refused)
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    answered = _Wrapped("litellm.InternalServerError: InternalServerError: OpenAIException - boom")
    answered.status_code = 500  # type: ignore[attr-defined]
    answered.__cause__ = httpx.HTTPStatusError("500", request=request, response=httpx.Response(500, request=request))
    assert reached_provider(answered) and error_line(answered) == "_Wrapped (HTTP 500): boom"
    timed_out = _Wrapped("timeout")
    timed_out.__cause__ = httpx.ReadTimeout("slow")
    assert reached_provider(timed_out)  # it may have been billed
    never_connected = _Wrapped("timeout")
    never_connected.__cause__ = httpx.ConnectTimeout("no route")
    assert not reached_provider(never_connected)
    assert reached_provider(RuntimeError("an error this cannot place"))  # a cap never undercounts


@pytest.mark.parametrize("column", LIVE_COLUMNS)
def test_every_live_column_has_words(column):
    assert column in labels.COLUMNS
