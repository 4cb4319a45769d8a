"""Live runs must not burn money silently: pre-flight, failures in a row, request and dollar caps (issue 13, item 5).

Everything goes over real HTTP to the local fake provider (tests/fake_provider.py), which counts every
request it receives: the counts asserted here are the server's, not the client's.
"""

from __future__ import annotations

import pytest
from scripted import uniform_history
from test_briefing_live import KEY, KNOBS, linked_history, live, request

from workbench.analysis.live_runs import estimate_live, run_live, suggested_limits
from workbench.briefing.cache import BriefingCache
from workbench.briefing.guard import LiveLimits, LiveRunStopped, blocking, preflight
from workbench.counting.prices import Prices
from workbench.replay import simulate

CHEAP = {"openai/fake-good": Prices(model="openai/fake-good", input_per_token=1e-5, output_per_token=4e-5, known=True)}


@pytest.fixture
def no_key(monkeypatch):
    for var in ("OPENAI_API_KEY", "AZURE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_preflight_without_a_key_blocks_before_any_request(fake_provider, no_key):
    """No key anywhere: the check names the variable litellm looks for, and the server saw nothing."""
    checks = preflight(["openai/fake-good"], api_base=fake_provider.api_base)
    (err,) = blocking(checks)
    assert "OPENAI_API_KEY" in err.message and err.model == "openai/fake-good"
    assert fake_provider.total_requests == 0
    assert not blocking(preflight(["openai/fake-good"], api_key=KEY, api_base=fake_provider.api_base))


def test_preflight_names_an_unroutable_model_and_warns_on_unpriced_or_small_windows(no_key):
    checks = {c.model: c for c in preflight(["nonsense-model", "openai/fake-good", "gpt-4o-mini"], api_key=KEY,
                                            largest_request_tokens=500_000)}
    assert checks["nonsense-model"].level == "error" and "provider" in checks["nonsense-model"].message
    assert checks["openai/fake-good"].level == "warning" and "cost map" in checks["openai/fake-good"].message
    assert checks["gpt-4o-mini"].level == "warning" and "input window" in checks["gpt-4o-mini"].message


def test_a_provider_that_always_fails_stops_the_run_after_three_compressions(fake_provider):
    """Each check would retry; the guard stops at the third failure in a row and shows the provider's error."""
    history = uniform_history(40, 4_000)
    assert len(simulate(history, KNOBS).compressions) > 3  # the size model would compress more often
    outcome = run_live(history, KNOBS, live(fake_provider, "fake-fail"))
    assert not outcome.complete
    assert outcome.stopped.reason == "3 compressions failed in a row"
    assert "internal error" in outcome.stopped.error and "500" in outcome.stopped.error
    assert fake_provider.total_requests == outcome.requests == 3
    assert [c.status for c in outcome.run.compressions] == ["failed"] * 3  # the run up to the stop
    assert outcome.messages < outcome.total_messages
    assert "last attempt: error: InternalServerError (HTTP 500): fake provider: internal error" in outcome.summary() and "3 provider requests" in outcome.summary()


def test_failures_in_a_row_reset_after_a_good_answer(fake_provider):
    briefer = live(fake_provider, "fake-x")
    for behaviour in ("fail", "fail", "good", "fail", "fail"):
        fake_provider.set_behaviour("fake-x", behaviour)
        briefer(request())
    fake_provider.set_behaviour("fake-x", "fail")
    with pytest.raises(LiveRunStopped, match="3 compressions failed in a row"):
        briefer(request())
    assert fake_provider.total_requests == 6


def test_the_request_cap_stops_where_it_says_and_the_run_so_far_matches_a_full_run(fake_provider):
    history = linked_history()
    full = simulate(history, KNOBS, live(fake_provider, "fake-good"))
    assert len(full.compressions) > 2
    fake_provider.reset()
    outcome = run_live(history, KNOBS, live(fake_provider, "fake-good", limits=LiveLimits(max_requests=2)))
    assert outcome.stopped.reason == "request cap reached (2 requests)" and outcome.stopped.record is None
    assert fake_provider.total_requests == outcome.requests == 2
    part = outcome.run
    assert [c.status for c in part.compressions] == ["landed", "landed"]
    assert [(c.boundary, c.briefing_chars, c.record.text) for c in part.compressions] == [
        (c.boundary, c.briefing_chars, c.record.text) for c in full.compressions[:2]]
    third = full.compressions[2]  # never asked: the replay ends at the check before it
    assert outcome.messages == full.timeline.row(third.check_started - 1, named=True)["index"] + 1
    assert part.timeline["total"].to_list() == full.timeline["total"].to_list()[: part.timeline.height]


def test_the_dollar_cap_never_lets_spending_pass_it(fake_provider):
    knobs = KNOBS.replace(target_briefing_chars=2_000)
    history = linked_history()
    free = run_live(history, knobs, live(fake_provider, "fake-good", prices=CHEAP))
    assert free.complete and free.requests > 3
    per_request = free.dollars / free.requests
    cap = round(per_request * 2.5, 6)
    fake_provider.reset()
    briefer = live(fake_provider, "fake-good", prices=CHEAP, limits=LiveLimits(max_dollars=cap))
    outcome = run_live(history, knobs, briefer)
    assert outcome.stopped.reason.startswith(f"dollar cap ${cap:,.2f} would be passed")
    assert outcome.dollars <= cap and 1 <= outcome.requests < free.requests
    assert fake_provider.total_requests == outcome.requests


def test_the_estimate_comes_from_the_dry_replay_and_suggests_caps_above_it():
    history = linked_history()
    dry = simulate(history, KNOBS)
    est = estimate_live(dry, "gpt-4o-mini")
    asked = [c for c in dry.compressions if c.summarize]
    assert est.requests == len(asked) > 0 and est.dollars > 0
    assert est.largest_request_tokens == max(-(-(c.compact_history_chars + 5_286) // 4) for c in asked)
    limits = suggested_limits(est)
    assert limits.max_requests > est.requests and limits.max_dollars >= 2 * est.dollars
    assert limits.max_consecutive_failures == 3
    assert "requests" in est.summary() and "gpt-4o-mini" in est.summary()
    assert estimate_live(dry, "openai/fake-unknown").dollars is None


def test_one_cheap_request_per_model_only_when_asked(fake_provider):
    briefer = live(fake_provider, "fake-good", "fake-fail")
    assert fake_provider.total_requests == 0
    ok, bad = briefer.check_models()
    assert (ok.level, bad.level) == ("ok", "error") and "500" in bad.message
    assert dict(fake_provider.counts) == {"fake-good": 1, "fake-fail": 1}
    body = fake_provider.requests[0]["body"]
    assert body["max_tokens"] == 5 and len(body["messages"]) == 1


def test_a_stop_shows_no_key_even_when_the_provider_quotes_it(fake_provider):
    key = "shapelessvalue0123456789"
    outcome = run_live(uniform_history(40, 4_000), KNOBS, live(fake_provider, "fake-echo", api_key=key))
    assert outcome.stopped is not None and "invalid credentials" in outcome.stopped.error
    assert key not in outcome.summary() and key not in str(outcome.stopped)
    assert key not in str(outcome.run.to_json_dict())


# -- the same guards in `workbench simulate --briefer live` ---------------------------------------


@pytest.fixture
def chat_file(tmp_path):
    from workbench.history.writers import write_canonical_jsonl

    path = tmp_path / "chat.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(40, 4_000)), encoding="utf-8")
    return path


def _cli(path, fake, *models, extra=()):
    from workbench.cli import main

    args = ["simulate", str(path), "--set", "context_window_tokens=16000", "--set", "min_kept_messages=5",
            "--briefer", "live", "--api-base", fake.api_base, "--no-cache", "--timeout", "5"]
    for m in models:
        args += ["--model", f"openai/{m}"]
    return main([*args, *extra])


def test_cli_without_a_key_fails_the_preflight_and_sends_nothing(chat_file, fake_provider, no_key, capsys):
    assert _cli(chat_file, fake_provider, "fake-good") == 2
    err = capsys.readouterr().err
    assert "pre-flight check failed, nothing was sent" in err and "OPENAI_API_KEY" in err
    assert "live: estimate from a dry replay with the size model" in err
    assert fake_provider.total_requests == 0


def test_cli_stops_a_failing_provider_after_three_and_shows_its_error(chat_file, fake_provider, monkeypatch, capsys):
    import json

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert _cli(chat_file, fake_provider, "fake-fail", extra=["--json", "--no-timeline"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["live"]["stopped"]["reason"] == "3 compressions failed in a row"
    assert "HTTP 500" in data["live"]["stopped"]["error"] and data["live"]["requests"] == 3
    assert "live: last attempt: error: " in captured.err and "Traceback" not in captured.err and KEY not in captured.err + captured.out
    assert fake_provider.total_requests == 3 and data["metrics"]["failed_compressions"] == 3


def test_cli_caps_default_from_the_estimate_and_a_given_cap_wins(chat_file, fake_provider, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert _cli(chat_file, fake_provider, "fake-good", extra=["--max-requests", "2"]) == 1
    captured = capsys.readouterr()
    assert "caps: stop after 3 failed compressions in a row, at most 2 requests" in captured.err
    assert "live run stopped early (request cap reached (2 requests))" in captured.out
    assert fake_provider.total_requests == 2
    fake_provider.reset()
    assert _cli(chat_file, fake_provider, "fake-good") == 0  # default caps sit above the estimate
    err = capsys.readouterr().err
    assert "live: live run complete" in err and "at most" in err
    assert fake_provider.total_requests > 2


def test_cli_test_models_sends_one_tiny_request_first(chat_file, fake_provider, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert _cli(chat_file, fake_provider, "fake-fail", extra=["--test-models"]) == 2
    assert "--test-models: openai/fake-fail: error" in capsys.readouterr().err
    assert fake_provider.total_requests == 1


@pytest.mark.parametrize("strategy", ["stagewise", "staged"])
def test_a_live_run_keeps_the_limits_and_trigger_fields_of_the_simulated_run(fake_provider, strategy, tmp_path):
    """The live wrapper forwards everything the replay asks of a policy: the Run's limits and each compression's
    binding trigger term are those of the same replay without the wrapper (issue 19, item 6)."""
    history = linked_history()
    knobs = KNOBS.replace(strategy=strategy, prune_tool_outputs=strategy == "staged")
    briefer = live(fake_provider, "fake-good", cache=BriefingCache(tmp_path))
    outcome = run_live(history, knobs, briefer)
    assert fake_provider.total_requests == outcome.requests == len(outcome.run.compressions) > 1
    plain = simulate(history, knobs, briefer)  # the same answers, from the cache: no new request
    assert fake_provider.total_requests == outcome.requests
    assert outcome.run.limits is not None and outcome.run.limits == plain.limits == simulate(history, knobs).limits
    fields = [(c.check_started, c.trigger, c.trigger_binds, c.trigger_tokens) for c in outcome.run.compressions]
    assert fields == [(c.check_started, c.trigger, c.trigger_binds, c.trigger_tokens) for c in plain.compressions]
    assert all(binds and tokens for _, _, binds, tokens in fields)
