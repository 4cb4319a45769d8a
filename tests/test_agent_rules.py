"""Each agent's rules by version, as read from its published bundles (docs/agents.md): the preset a version gets,
its window by model, 1M variants, and when Claude Code compacts only when the API refuses a call."""

from __future__ import annotations

import pytest
from agent_log_builders import ClaudeLog, CodexLog, text_block, tool_use

from workbench.analysis.real_logs.agent_settings import (
    agent_settings,
    claude_code_compacts_reactively,
    claude_code_window,
)
from workbench.history.readers import parse_history
from workbench.history.session_log import parse_version
from workbench.presets import get_preset, preset_for
from workbench.replay.first import first_compaction


def test_a_pre_release_version_is_its_release_line():
    """codex 0.119.0-alpha.28 is 0.119.0's code, not a fourth version part (it used to read (0, 119, 0, 28))."""
    assert parse_version("0.119.0-alpha.28") == (0, 119, 0)
    assert parse_version("2.1.45") == (2, 1, 45) and parse_version("v0.142.3+build.7") == (0, 142, 3)
    assert parse_version("0.119.0-alpha.11") < parse_version("0.119.1")


@pytest.mark.parametrize(("version", "preset"), [
    ("2.0.76", "claude_code_2_1_1"), ("2.1.20", "claude_code_2_1_20"), ("2.1.21", "claude_code"),
    ("2.1.45", "claude_code"), ("2.1.152", "claude_code"), ("2.1.153", "claude_code_2_1_153"),
    ("2.1.232", "claude_code_2_1_153"), ("2.1.332", "claude_code_2_1_153")])
def test_claude_code_version_families(version, preset):
    assert preset_for("claude_code", version) == preset


def test_the_2_1_153_family_compacts_at_the_apis_limit():
    """From 2.1.153 the auto-compact check returns early for an "auto" window: no proactive threshold, reactive on."""
    k = get_preset("claude_code_2_1_153")
    assert not k.proactive_compaction and k.reactive_compaction
    assert get_preset("claude_code").proactive_compaction


@pytest.mark.parametrize(("version", "models", "window"), [
    ("2.1.45", ("claude-opus-4-6",), 200_000),
    ("2.1.45", ("claude-opus-4-6[1m]",), 1_000_000),  # the [1m] suffix: every bundle read
    ("2.0.76", ("claude-sonnet-4-5-20250929[1M]",), 1_000_000),  # matched case-insensitively from 2.1.50
    ("2.1.112", ("claude-opus-4-7",), 200_000),  # before 2.1.117 Opus 4.7 was sized at 200K (CHANGELOG 2.1.117)
    ("2.1.117", ("claude-opus-4-7",), 1_000_000),
    ("2.1.196", ("claude-sonnet-5",), 200_000),
    ("2.1.197", ("claude-sonnet-5",), 1_000_000),
    ("2.1.232", ("claude-haiku-4-5-20251001", "claude-opus-4-6[1m]"), 1_000_000),  # any of the session's models
])
def test_claude_code_window_by_version_and_model(version, models, window):
    assert claude_code_window(version, models) == window


@pytest.mark.parametrize(("version", "model", "window", "reactive"), [
    ("2.1.45", "claude-opus-4-6[1m]", 1_000_000, False),  # 967,000: 1M - 20,000 - 13,000
    ("2.1.104", "claude-opus-4-6[1m]", 1_000_000, False),
    ("2.1.105", "claude-opus-4-6[1m]", 1_000_000, True),  # tengu_cobalt_raccoon; the logs' preTokens ~998,000
    ("2.1.150", "claude-opus-4-5-20251101", 200_000, False),  # the flag only on 1M windows from 2.1.120
    ("2.1.153", "claude-opus-4-6", 200_000, True),  # reactive by default, no model-default yet
    ("2.1.163", "claude-opus-4-6", 200_000, False),  # model-default: a 200,000 auto-compact window
    ("2.1.163", "claude-sonnet-4-6", 200_000, False),
    ("2.1.163", "claude-opus-4-6[1m]", 1_000_000, True),  # model-default only under 1M
    ("2.1.200", "claude-opus-4-5-20251101", 200_000, True),  # not a model-default model
])
def test_claude_code_reactive_by_version(version, model, window, reactive):
    assert claude_code_compacts_reactively(version, model, window) is reactive


def _claude(version: str, model: str) -> ClaudeLog:
    log = ClaudeLog(version=version, model=model)
    log.user("Refactor the parser.")
    log.assistant([text_block("Reading."), tool_use("t1")], input_total=160_000, output=100)
    log.tool_result("t1", "x" * 40_000)  # ~10,000 tokens by Claude Code's chars/4: 170,100 > 167,000
    log.assistant([tool_use("t2")], input_total=171_000, output=100)
    log.tool_result("t2", "y" * 4_000)
    return log


@pytest.mark.slow
def test_agent_settings_apply_the_versions_rules_and_say_why():
    old = agent_settings(parse_history(_claude("2.1.45", "claude-opus-4-6").text(), source="a.jsonl"))
    assert old.preset == "claude_code" and old.window == 200_000 and old.knobs.proactive_compaction
    new = agent_settings(parse_history(_claude("2.1.200", "claude-opus-4-5-20251101").text(), source="b.jsonl"))
    assert new.preset == "claude_code_2_1_153" and not new.knobs.proactive_compaction
    exempt = agent_settings(parse_history(_claude("2.1.200", "claude-opus-4-6").text(), source="c.jsonl"))
    assert exempt.knobs.proactive_compaction and any("proactive threshold" in n for n in exempt.notes)
    one_m = agent_settings(parse_history(_claude("2.1.120", "claude-opus-4-6[1m]").text(), source="d.jsonl"))
    assert one_m.window == 1_000_000 and not one_m.knobs.proactive_compaction and one_m.knobs.reactive_compaction
    assert any("API refuses" in n for n in one_m.notes)


@pytest.mark.parametrize(("version", "model"), [
    ("0.118.0", "gpt-5.4"), ("0.119.0-alpha.11", "gpt-5.4"), ("0.119.0-alpha.28", "gpt-5.4"), ("0.140.0", "gpt-5.5"),
    ("0.142.4", "gpt-5.5"), ("0.145.0", "gpt-5.5")])
def test_codex_limits_at_90_percent_of_272k_in_every_release_of_the_logs(version, model):
    """Every Codex release in the logs' range (0.118-0.145) ships gpt-5.4 and gpt-5.5 with context_window 272,000 and no
    auto_compact_token_limit (the catalogue embedded in @openai/codex@X-linux-x64 0.118.0, 0.140.0, 0.145.0), and the
    limit is 9/10 of that raw window (openai_models.rs @0d4367d0 and later ``auto_compact_token_limit``): one preset,
    244,800, whatever the version; the window comes from the logged 258,400 (272,000 x 95%)."""
    log = CodexLog(version=version, model=model, window_logged=258_400).turn().user("hi").say("ok").tokens(9_000, 20)
    s = agent_settings(parse_history(log.text(), source="rollout.jsonl"))
    assert s.preset == "codex_cli" and s.window == 272_000
    assert s.knobs.context_window_tokens * s.knobs.trigger_ratio == 244_800 and s.knobs.trigger_at_equal


def test_the_replay_fires_where_each_family_would():
    """The same log: 2.1.45 compacts at its 167,000 threshold (the first step's results), 2.1.200 on Opus 4.5 only
    past the 200,000 window, which this log never reaches."""
    for version, model, fires in (("2.1.45", "claude-opus-4-6", True), ("2.1.200", "claude-opus-4-5-20251101", False),
                                  ("2.1.200", "claude-opus-4-6", True)):
        h = parse_history(_claude(version, model).text(), source="e.jsonl")
        k = agent_settings(h).knobs.replace(trigger_counter="usage")
        found = first_compaction(h, k)
        assert (found is not None) is fires, (version, model)
