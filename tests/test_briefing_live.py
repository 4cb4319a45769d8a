"""The live briefer over real HTTP against the local fake provider: cascade, cache, cost, no leaked keys."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted import uniform_history

from workbench.analysis.bundles import run_bundles
from workbench.briefing.base import BriefRequest
from workbench.briefing.cache import BriefingCache
from workbench.briefing.guard import LiveLimits
from workbench.briefing.live import LiveBriefer
from workbench.history.model import History, Message, text_part
from workbench.knobs import Knobs, dump_knobs
from workbench.replay import simulate

KEY = "sk-workbench-DISTINCTIVE-test-key-8f3a91c2e7"
KNOBS = Knobs(context_window_tokens=16_000, min_kept_messages=5)


def linked_history(count: int = 60, chars: int = 2_000) -> History:
    """Alternating user/assistant messages, each naming a file as a stagewise link."""
    msgs = []
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        body = f"Turn {i}: please look at [](path:w1/src/file{i}.py) and keep the API stable. " + "z" * chars
        msgs.append(Message(id=f"m{i:03d}", role=role, parts=(text_part(body),)))
    return History(id="linked", messages=tuple(msgs))


def request(compact: str = "<user>Fix [](path:w1/app.py) please</user>\n<assistant>[read: w1/app.py]</assistant>",
            previous_chars: int = 0) -> BriefRequest:
    return BriefRequest(
        chain_index=1, folded=(), folded_from=0, boundary=2, previous_briefing=None, previous_chars=previous_chars,
        new_material_chars=len(compact), compact_history_chars=len(compact), target_chars=30_000, bucket="none",
        ratio=0.0, percent=0, knobs=KNOBS, compact_history_fn=lambda: compact,
    )


def live(fake, *names: str, fallback: str | None = None, cache: BriefingCache | None = None, **kw) -> LiveBriefer:
    return LiveBriefer(
        [f"openai/{n}" for n in names], fallback_model=f"openai/{fallback}" if fallback else None,
        api_base=fake.api_base, api_key=kw.pop("api_key", KEY), timeout_s=kw.pop("timeout_s", 0.5), cache=cache, **kw,
    )


def outcomes(record) -> list[tuple[str, str]]:
    return [(a.outcome, a.model.split("/")[-1]) for a in record.attempts]


def test_cascade_falls_through_timeout_500_and_short_output(fake_provider):
    """Each failure moves on to the next model, in order; the first good answer wins."""
    briefer = live(fake_provider, "fake-slow", "fake-fail", "fake-short", "fake-good")
    record = briefer(request())
    assert outcomes(record) == [("timeout", "fake-slow"), ("error", "fake-fail"), ("too-short", "fake-short"),
                                ("ok", "fake-good")]
    assert record.model == "openai/fake-good" and not record.failed and not record.cache_hit
    assert "[](path:w1/app.py)" in record.text
    assert record.chars == len(record.text) and record.tokens == -(-record.chars // 4)
    slow = record.attempts[0]
    # Stopped at its 0.5 s timeout, before the slow answer came (1.5 s): 1.2 s was the bound, and an attempt took
    # 1.41 s at load 5 (the client's own work); one request each (no retries) is the counts' check below.
    assert 0.4 <= slow.latency_s < fake_provider.slow_s, "the per-attempt timeout is honoured"
    assert "500" in record.attempts[1].detail or "internal error" in record.attempts[1].detail
    assert dict(fake_provider.counts) == {"fake-slow": 1, "fake-fail": 1, "fake-short": 1, "fake-good": 1}
    assert record.input_tokens > 0 and record.output_tokens > 0  # the too-short answer was billed too


def test_fallback_model_is_tried_last_and_only_once(fake_provider):
    record = live(fake_provider, "fake-fail", fallback="fake-good")(request())
    assert outcomes(record) == [("error", "fake-fail"), ("ok", "fake-good")]
    record = live(fake_provider, "fake-good", "fake-fail", fallback="fake-good")(request())
    assert outcomes(record) == [("ok", "fake-good")]


def test_behaviour_can_be_switched_through_the_control_endpoint(fake_provider):
    import json
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{fake_provider.port}/control", method="POST",
                                 data=json.dumps({"model": "fake-good", "behaviour": "fail"}).encode())
    urllib.request.urlopen(req, timeout=5).read()
    record = live(fake_provider, "fake-good")(request())
    assert record.failed and outcomes(record) == [("error", "fake-good")]


@pytest.mark.slow
def test_all_models_failing_leaves_the_replay_uncompressed(fake_provider):
    """With the failure stop off, every compression fails, is recorded, and the context is never reduced
    (as stagewise carries on); by default the run stops after three (tests/test_live_guards.py)."""
    history = uniform_history(40, 4_000)
    briefer = live(fake_provider, "fake-fail", "fake-short", limits=LiveLimits(max_consecutive_failures=0))
    run = simulate(history, KNOBS, briefer)
    m = run.metrics
    assert m.failed_compressions > 0 and m.compressions == 0
    assert m.peak_tokens == m.baseline_peak_tokens
    failed = [c for c in run.compressions if c.status == "failed"]
    assert all(c.record.failed and outcomes(c.record) == [("error", "fake-fail"), ("too-short", "fake-short")]
               for c in failed)
    assert fake_provider.counts["fake-fail"] == len(failed)


def test_unsettled_call_stops_the_whole_cascade():
    """A call still pending after timeout + grace stops the cascade: no second billed request (§8.5)."""
    briefer = LiveBriefer(["openai/gpt-4o-mini", "openai/gpt-4.1-mini"], timeout_s=0.2, grace_s=0.1,
                          extra_params={"mock_response": "## A\n\n" + "x" * 80, "mock_delay": 1.0})
    record = briefer(request())
    assert record.failed
    assert [a.outcome for a in record.attempts] == ["unsettled"]


def test_mock_response_is_priced_from_the_registry():
    """litellm's mock_response needs no server; the attempt's cost comes from the registry's prices."""
    briefer = LiveBriefer(["openai/gpt-4o-mini"], extra_params={"mock_response": "## Topic\n\n" + "words " * 40})
    record = briefer(request())
    assert outcomes(record) == [("ok", "gpt-4o-mini")]
    assert record.cost_usd > 0 and record.attempts[0].cost_usd == record.cost_usd


def test_leaked_wrapper_tags_are_flagged(fake_provider):
    record = live(fake_provider, "fake-leak")(request())
    assert not record.failed
    assert record.leak_previous_tag and record.leak_xml


def test_full_replay_then_a_second_identical_replay_makes_no_request(fake_provider, tmp_path):
    """Live briefings through the whole replay; the re-run is served from disk: 0 requests, 100% hits."""
    history = linked_history()
    first = simulate(history, KNOBS, live(fake_provider, "fake-good", cache=BriefingCache(tmp_path)))
    landed = [c for c in first.compressions if c.status == "landed"]
    assert len(landed) >= 3 and first.metrics.failed_compressions == 0
    assert all(c.record.text and not c.record.cache_hit for c in landed)
    assert "continuing the previous briefing" in landed[-1].record.text  # chained through <previous-chat-history>
    sent = fake_provider.total_requests
    assert sent == len(first.compressions)
    assert (first.metrics.briefer_requests, first.metrics.briefer_cache_hits) == (sent, 0)

    again = live(fake_provider, "fake-good", cache=BriefingCache(tmp_path))
    second = simulate(history, KNOBS, again)
    assert fake_provider.total_requests == sent and again.requests == 0
    assert all(c.record.cache_hit for c in second.compressions)
    m = second.metrics
    assert (m.briefer_requests, m.briefer_cache_hits, m.briefer_calls) == (0, len(second.compressions), m.briefer_calls)
    assert [c.record.text for c in second.compressions] == [c.record.text for c in first.compressions]
    assert second.metrics.peak_tokens == first.metrics.peak_tokens
    assert again.cache.stats().hits >= len(second.compressions)


def test_cache_hit_keeps_the_original_cascade_story(fake_provider, tmp_path):
    """A cached answer reports the attempts that produced it, so failures upstream stay visible."""
    first = live(fake_provider, "fake-fail", "fake-good", cache=BriefingCache(tmp_path))(request())
    second = live(fake_provider, "fake-fail", "fake-good", cache=BriefingCache(tmp_path))(request())
    assert second.cache_hit and outcomes(second) == outcomes(first) == [("error", "fake-fail"), ("ok", "fake-good")]
    assert fake_provider.total_requests == 2


def test_api_key_never_lands_in_cache_bundles_or_yaml(fake_provider, tmp_path):
    """The key was used (the server saw it) but no file the workbench writes contains it."""
    history = linked_history(30)
    briefer = live(fake_provider, "fake-fail", "fake-good", cache=BriefingCache(tmp_path / "cache"))
    run = simulate(history, KNOBS, briefer)
    assert any(r["headers"].get("authorization", "").endswith(KEY) for r in fake_provider.requests)
    bundles = run_bundles(history, run)
    assert bundles
    out = tmp_path / "bundles"
    for rel, text in bundles.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    (tmp_path / "knobs.yaml").write_text(dump_knobs(run.knobs))
    briefer.cache.close()
    needle = KEY.encode()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 5
    assert not [p for p in files if needle in p.read_bytes()]
    assert KEY not in repr(briefer) and KEY not in repr(run.compressions)


@pytest.mark.slow
def test_briefing_modules_import_no_llm_client():
    """Importing the briefers (and simulate) pulls in neither litellm nor diskcache until a call is made."""
    code = (
        "import sys, workbench.replay, workbench.briefing.live, workbench.briefing.cache, "
        "workbench.briefing.extractive, workbench.explore.briefer_calibration, workbench.analysis.bundles, workbench.analysis.real_logs.stagewise_real; "
        "print(sorted(m for m in ('litellm', 'diskcache') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


LIVE_KEYS = {"OPENAI_API_KEY": "openai/gpt-4.1-mini", "GEMINI_API_KEY": "gemini/gemini-2.5-flash-lite",
             "ANTHROPIC_API_KEY": "anthropic/claude-haiku-4-5"}


@pytest.mark.live
def test_a_real_provider_writes_a_briefing(tmp_path: Path):
    """Runs only with -m live and a provider key in the environment; costs a fraction of a cent."""
    models = [m for env, m in LIVE_KEYS.items() if os.environ.get(env)]
    if not models:
        pytest.skip(f"no provider key set ({', '.join(LIVE_KEYS)})")
    record = LiveBriefer(models[:1], timeout_s=60, max_output_tokens=800, cache=BriefingCache(tmp_path))(request())
    assert not record.failed, record.error
    assert record.chars >= 30 and record.cost_usd > 0


def test_a_run_and_its_cached_rerun_report_the_same_briefer_dollars(fake_provider, tmp_path):
    """A provider's own price (here an unpriced fake model: $0) is kept, never re-priced at briefer_model."""
    history = linked_history()
    first = simulate(history, KNOBS, live(fake_provider, "fake-good", cache=BriefingCache(tmp_path)))
    second = simulate(history, KNOBS, live(fake_provider, "fake-good", cache=BriefingCache(tmp_path)))
    assert second.metrics.briefer_cache_hits == second.metrics.briefer_calls > 0
    assert first.metrics.briefer_dollars == second.metrics.briefer_dollars == 0.0


def test_answers_from_another_endpoint_are_not_served(fake_provider, tmp_path):
    """The cache key holds the endpoint (without credentials): a local server's answer is not the provider's."""
    from workbench.briefing.cache import cache_key

    msgs = [{"role": "user", "content": "x"}]
    params = {"temperature": 0.1}
    a = cache_key("openai/m", msgs, params, "v1", api_base="http://127.0.0.1:9/v1")
    b = cache_key("openai/m", msgs, params, "v1", api_base="http://user:pw@127.0.0.1:9/v1/")
    c = cache_key("openai/m", msgs, params, "v1")
    assert a == b != c


def test_a_call_still_pending_over_http_stops_the_cascade(fake_provider):
    """A provider that keeps the connection busy past timeout + grace: unsettled, and no second request."""
    briefer = live(fake_provider, "fake-trickle", "fake-good", timeout_s=0.3, grace_s=0.2)
    record = briefer(request())
    assert record.failed
    assert [a.outcome for a in record.attempts] == ["unsettled"]
    assert fake_provider.counts.get("fake-good", 0) == 0


def test_a_provider_echoing_the_key_leaves_no_trace(fake_provider, tmp_path):
    """A 401 that quotes the Authorization header: the attempt's detail, cache and record hold no key."""
    key = "shapelessvalue0123456789"
    briefer = live(fake_provider, "fake-echo", "fake-good", cache=BriefingCache(tmp_path), api_key=key)
    record = briefer(request())
    assert [a.outcome for a in record.attempts] == ["error", "ok"]
    assert "invalid credentials: Bearer ***" in record.attempts[0].detail  # the provider did quote it
    assert key not in repr(record)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes()
