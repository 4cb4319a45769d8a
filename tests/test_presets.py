"""Presets: each system's numbers as shipped YAML, checked against the line of spec/peers.md they come from,
and every preset replays every real history through the command line."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from conftest import shared_dir
from real_histories import real_history_paths

from workbench.cli import main
from workbench.knobs import Knobs
from workbench.policies import list_policy_names
from workbench.presets import get_preset, get_preset_info, list_preset_names, list_presets

PEERS = shared_dir() / "spec" / "peers.md"

# (preset, knob, value, peers.md line, text on that line the value comes from)
TABLE = [
    ("msagent", "trigger_ratio", 0.85, 39, "default **0.85** (Ascend upstream"),
    ("msagent", "trigger_hard_cap_tokens", 10_000_000, 39, "`current_input_tokens / context_window >= auto_compress"),
    ("msagent", "trigger_at_equal", True, 39, ">= auto_compress_threshold"),
    ("msagent", "keep_recent_messages", 6, 39, "last `messages_to_keep` non-system messages (upstream default **6**"),
    ("msagent", "pin_system_messages", True, 67, "system messages kept"),
    ("msagent", "briefing_mode", "incremental", 39, "rolling: prior summary message is part of the prefix"),
    ("deepagents", "trigger_ratio", 0.85, 79, "profile ⇒ trigger `fraction 0.85`"),
    ("deepagents", "kept_budget_ratio", 0.1, 79, "keep `fraction 0.10`"),
    ("deepagents", "reactive_compaction", True, 40, "plus reactive on `ContextOverflowError`"),
    ("deepagents", "overhead_chars_per_message", 12, 76, "`extra_tokens_per_message` **3.0**"),
    ("langchain", "keep_rule", "messages", 71, '`keep` default `("messages", 20)`'),
    ("langchain", "keep_recent_messages", 20, 71, '`keep` default `("messages", 20)`'),
    ("langchain", "briefer_input_cap_tokens", 4_000, 71, "`trim_tokens_to_summarize` default **4000**"),
    ("langchain", "overhead_chars_per_message", 12, 76, "`extra_tokens_per_message` **3.0**"),
    ("opencode", "trigger_reserve_tokens", 20_000, 88, "`COMPACTION_BUFFER` **20,000**"),
    (
        "opencode",
        "trigger_at_equal",
        True,
        88,
        "Overflow when last-step usage (total, or input+output+cache read+write) ≥",
    ),
    ("opencode", "kept_budget_cap_tokens", 15_000, 90, "min(**15,000**, max(**2,000**, floor(usable × 0.25)))"),
    ("opencode", "kept_budget_floor_tokens", 2_000, 90, "max(**2,000**, floor(usable × 0.25))"),
    ("opencode", "kept_budget_ratio", 0.25, 90, "floor(usable × 0.25)"),
    ("opencode", "prune_protect_tokens", 40_000, 89, "`PRUNE_PROTECT` **40,000**"),
    ("opencode", "prune_minimum_tokens", 20_000, 89, "`PRUNE_MINIMUM` **20,000**"),
    ("opencode", "prune_protect_user_turns", 2, 89, "ignore the two most recent user turns"),
    ("opencode", "prune_tool_outputs", False, 89, "prune runs only when `compaction.prune` is true"),
    ("opencode", "briefing_mode", "anchored", 43, "anchored template: Objective; Important Details"),
    ("opencode", "reactive_compaction", True, 43, "plus reactive on provider overflow"),
    ("gemini_cli", "trigger_ratio", 0.5, 97, "`DEFAULT_COMPRESSION_TOKEN_THRESHOLD` **0.5**"),
    ("gemini_cli", "keep_recent_share", 0.3, 97, "`COMPRESSION_PRESERVE_THRESHOLD` **0.3**"),
    ("gemini_cli", "context_window_tokens", 1_048_576, 44, "`tokenLimit` 1,048,576 for Gemini"),
    ("gemini_cli", "prune_protect_tokens", 50_000, 102, "`DEFAULT_TOOL_PROTECTION_THRESHOLD` **50,000**"),
    ("gemini_cli", "prune_minimum_tokens", 30_000, 102, "`DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD` **30,000**"),
    ("gemini_cli", "prune_protect_user_turns", 0, 102, "`DEFAULT_PROTECT_LATEST_TURN` true"),  # one entry
    (
        "gemini_cli",
        "briefing_mode",
        "anchored",
        44,
        "if a previous `<state_snapshot>` is in the span it must be integrated",
    ),
    ("codex_cli", "trigger_ratio", 0.9, 107, "**context_window × 9 / 10**"),
    ("codex_cli", "keep_rule", "user_messages", 109, "selected user messages (all real user messages, newest first"),
    ("codex_cli", "keep_user_messages_tokens", 20_000, 109, "`COMPACT_USER_MESSAGE_MAX_TOKENS` **20,000**"),
    ("codex_cli", "pin_system_messages", True, 109, "initial context +"),
    ("claude_code", "trigger_reserve_tokens", 33_000, 154, "W − min(max output tokens, **20,000**)"),
    ("claude_code", "trigger_reserve_tokens", 33_000, 154, "auto-compact at effective window − **13,000**"),
    ("claude_code", "keep_rule", "none", 54, "nothing verbatim from the chat"),
    ("claude_code", "briefing_mode", "regenerative", 54, "regenerated from the whole conversation"),
    ("claude_code", "reactive_compaction", True, 54, "reactive compact on prompt-too-long"),
    ("hermes", "trigger_ratio", 0.75, 124, "raised to **0.75** for windows below 512K"),
    ("hermes", "trigger_hard_cap_tokens", 256_000, 124, "capped by `threshold_tokens` **256,000**"),
    ("hermes", "kept_budget_ratio", 0.025, 125, "keeps 2.5% × W clamped to **10K–25K**"),
    ("hermes", "kept_budget_floor_tokens", 10_000, 125, "clamped to **10K–25K**"),
    ("hermes", "kept_budget_cap_tokens", 25_000, 125, "clamped to **10K–25K**"),
    ("hermes", "keep_min_messages", 20, 125, "`protect_last_n` **20**"),
    ("hermes", "pin_first_messages", 3, 125, "head `protect_first_n` **3**"),
    ("hermes", "target_briefing_chars", 40_000, 126, "ceiling min(W × 0.05, `_SUMMARY_TOKENS_CEILING` **12,000**)"),
    ("pi", "trigger_reserve_tokens", 16_384, 132, "`reserveTokens` **16,384**"),
    ("pi", "trigger_at_equal", False, 49, "T > W − `reserveTokens`"),
    ("pi", "kept_budget_cap_tokens", 20_000, 132, "`keepRecentTokens` **20,000**"),
    ("pi", "target_briefing_chars", 52_428, 134, "output cap floor(0.8 × reserveTokens)"),
    ("pi", "reactive_compaction", True, 136, "compact and auto-retry once"),
    ("cline", "trigger_ratio", 0.81, 51, "i.e. ≈ 81% of W"),
    ("cline", "chars_per_token", 3.0, 144, "`CHARS_PER_TOKEN` **3**"),
    ("cline", "kept_budget_cap_tokens", 20_000, 144, "`DEFAULT_PRESERVE_RECENT_TOKENS` **20,000**"),
    ("cline", "target_briefing_chars", 12_288, 144, "`DEFAULT_SUMMARY_MAX_OUTPUT_TOKENS` **4,096**"),
    ("roo_code", "trigger_ratio", 1.0, 145, "`autoCondenseContextPercent` default **100**"),
    ("roo_code", "trigger_reserve_tokens", 28_192, 145, "`TOKEN_BUFFER_PERCENTAGE` **0.1**"),
    ("roo_code", "keep_rule", "none", 52, 'nothing ("fresh start")'),
    ("roo_code", "pin_first_user_message", True, 52, "original task `<command>` blocks"),
    ("aider", "trigger_hard_cap_tokens", 8_192, 148, "min(max(max_input_tokens/16, **1024**), **8192**)"),
    ("aider", "kept_budget_cap_tokens", 4_096, 149, "keep a tail under half the budget"),
    ("aider", "keep_starts_at_user", True, 149, "ending after an assistant message"),
    ("aider", "latency_steps", 1, 149, "a background thread summarizes"),
    ("openhands", "trigger_max_messages", 120, 118, "max_size = `condenser_max_size` or **120**"),
    ("openhands", "pin_first_messages", 4, 118, "llm(keep_first=4"),
    ("openhands", "keep_recent_messages", 55, 46, "newest `max_size//2 − keep_first − 1`"),
    ("openhands", "reactive_compaction", True, 119, "emits a `CondensationRequestAction`"),
    ("openhands", "briefing_mode", "anchored", 46, "sectioned state: USER_CONTEXT, TASK_TRACKING"),
]


# Presets whose numbers come from code outside spec/peers.md: (preset, knob, value, upstream file @ commit and
# line, the words of the preset's YAML comment that quote it). The YAML comment must cite the file and commit.
CODE_TABLE = [
    ("swe_agent", "strategy", "observation_masking", "SWE-agent@3ea751c history_processors.py:85",
     "lines 85-177 (class LastNObservations)"),
    ("swe_agent", "mask_last_n_observations", 5, "SWE-agent@3ea751c config/sweagent_0_7/07.yaml:99-101",
     "last_n_observations, n: 5"),
    ("swe_agent", "trigger_ratio", -1, "SWE-agent@3ea751c (no token trigger; ContextWindowExceeded ends the run)",
     "No\n# summary and no token trigger"),
    ("complexity_trap_hybrid", "mask_last_n_observations", 10,
     "the-complexity-trap@adfaa1a config/..._N=43_M=10_masking_M=10.yaml:158-159", "last_n_observations (n: 10)"),
    ("complexity_trap_hybrid", "trigger_max_turns", 53,
     "the-complexity-trap@adfaa1a ..._N=43_M=10_masking_M=10.yaml:151-152 (n: 43 + keep_last_m_turns: 10)",
     "n + keep_last_m_turns = 53"),
    ("complexity_trap_hybrid", "trigger_at_equal", True, "the-complexity-trap@adfaa1a history_processors.py:450",
     "if len(unprocessed_turns) < self.n + self.keep_last_m_turns"),
    ("complexity_trap_hybrid", "keep_rule", "turns", "the-complexity-trap@adfaa1a history_processors.py:311",
     "keep_last_m_turns: 10"),
    ("complexity_trap_hybrid", "keep_recent_turns", 10, "the-complexity-trap@adfaa1a ..._masking_M=10.yaml:152",
     "keep_last_m_turns: 10"),
    ("complexity_trap_hybrid", "pin_first_messages", 2, "the-complexity-trap@adfaa1a history_processors.py:478",
     "history[:2], line 478"),
    ("complexity_trap_hybrid", "briefing_mode", "anchored", "the-complexity-trap@adfaa1a ..._masking_M=10.yaml:100",
     "USER_CONTEXT, COMPLETED, PENDING"),
    ("complexity_trap_hybrid", "trigger_ratio", -1, "the-complexity-trap@adfaa1a (turn-count trigger only)",
     "summarize_every_n_turns (n: 43"),
]
# Claude Code's version families, from its published bundles (docs/agents.md): each value against the minified code the
# preset's comment quotes.
CODE_TABLE += [
    ("claude_code", "trigger_reserve_tokens", 33_000, "@anthropic-ai/claude-code 2.1.21-2.1.152 bundles",
     "reserve min(model max output, 20,000) + 13,000"),
    ("claude_code", "proactive_compaction", True, "@anthropic-ai/claude-code 2.1.105 bundle (server flag, default off)",
     "a server flag (tengu_cobalt_raccoon"),
    ("claude_code_2_1_153", "proactive_compaction", False, "@anthropic-ai/claude-code-linux-x64 2.1.153 embedded JS",
     "`if(rDH()&&!qc()&&!GH$($,q))return!1`"),
    ("claude_code_2_1_153", "reactive_compaction", True, "@anthropic-ai/claude-code-linux-x64 2.1.153 embedded JS",
     "compacts when the API refuses the\n# call for its length"),
    ("claude_code_2_1_153", "trigger_reserve_tokens", 33_000, "@anthropic-ai/claude-code-linux-x64 2.1.170 embedded JS",
     "W - min(model max output, 20,000) - 13,000"),
]
# The newer agents' presets, each number against the package it was read in (docs/agents.md).
CODE_TABLE += [
    ("copilot_cli", "trigger_ratio", 0.8, "@github/copilot 1.0.40 app.js, 1.0.73 runtime.node",
     "DEFAULT_BACKGROUND_THRESHOLD=.8"),
    ("copilot_cli", "trigger_at_equal", True, "@github/copilot 1.0.40 app.js", "`u<this.\n# backgroundThreshold` skips"),
    ("copilot_cli", "check_point", "call", "@github/copilot 1.0.40 app.js", "before every model call"),
    ("copilot_cli", "trigger_counter", "o200k_base", "@github/copilot 1.0.73 runtime.node", "o200k_base tokens"),
    ("copilot_cli", "context_window_tokens", 128_000, "@github/copilot 1.0.40 app.js", "else 128,000"),
    ("opencode_1_3", "trigger_reserve_tokens", 20_000, "opencode-ai 1.3.2 bundle", "min(20,000\n# (COMPACTION_BUFFER)"),
    ("opencode_1_3", "trigger_at_equal", True, "opencode-ai 1.3.2 bundle", ">= usable"),
    ("opencode_1_3", "keep_rule", "none", "opencode-ai 1.3.2 bundle", "nothing verbatim stays"),
    ("opencode_1_3", "prune_tool_outputs", True, "opencode-ai 1.3.2 bundle", "Prune (compaction.prune ?? on)"),
    ("opencode_1_3", "prune_protect_tokens", 40_000, "opencode-ai 1.3.2 bundle", "40,000 estimated tokens (PRUNE_PROTECT)"),
    ("pi", "trigger_reserve_tokens", 16_384, "@mariozechner/pi-coding-agent 0.73.1", "reserveTokens 16384"),
    ("pi", "count_added_since_call", False, "@mariozechner/pi-coding-agent 0.73.1", "nothing estimated on top"),
    ("gemini_cli", "check_point", "call", "@google/gemini-cli-core 0.61.0", "checked before every call"),
    ("gemini_cli", "count_added_since_call", False, "@google/gemini-cli-core 0.61.0", "nothing is estimated on top"),
]
CITED = {"swe_agent": "SWE-agent/SWE-agent @ 3ea751c087f3", "complexity_trap_hybrid": "the-complexity-trap @ adfaa1a18b8b",
         "claude_code": "bundles of @anthropic-ai/claude-code 2.1.21,",
         "claude_code_2_1_153": "@anthropic-ai/claude-code-linux-x64 2.1.153,",
         "copilot_cli": "(@github/copilot 1.0.40 app.js, class CompactionProcessor", "opencode_1_3": "(opencode-ai 1.3.2:",
         "pi": "@mariozechner/pi-coding-agent 0.73.1", "gemini_cli": "@google/gemini-cli-core 0.61.0"}


@pytest.mark.parametrize(
    ("preset", "knob", "value", "where", "quote"), CODE_TABLE, ids=[f"{p}-{k}" for p, k, *_ in CODE_TABLE]
)
def test_preset_value_matches_the_code_it_cites(preset, knob, value, where, quote):
    assert getattr(get_preset(preset), knob) == value, where
    text = (resources.files("workbench") / "presets" / f"{preset}.yaml").read_text(encoding="utf-8")
    comment = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert CITED[preset] in comment.replace("\n# ", " ")
    assert quote in comment, quote


@pytest.mark.parametrize(
    ("preset", "knob", "value", "line", "quote"), TABLE, ids=[f"{p}-{k}-{n}" for p, k, _, n, _ in TABLE]
)
def test_preset_value_matches_peers_md(preset, knob, value, line, quote):
    assert getattr(get_preset(preset), knob) == value
    if PEERS.is_file():
        assert quote in PEERS.read_text(encoding="utf-8").splitlines()[line - 1]


def test_the_fourteen_systems_and_the_seeds_ship_as_presets():
    names = set(list_preset_names())
    systems = {
        "msagent",
        "deepagents",
        "langchain",
        "opencode",
        "gemini_cli",
        "codex_cli",
        "claude_code",
        "hermes",
        "pi",
        "cline",
        "roo_code",
        "aider",
        "openhands",
    }
    assert systems | {"stagewise", "stagewise_chat", "staged", "swe_agent", "complexity_trap_hybrid"} <= names
    assert {p for p, *_ in TABLE} == systems


@pytest.mark.parametrize("name", list_preset_names())
def test_each_preset_cites_its_source_and_names_a_registered_policy(name):
    text = (resources.files("workbench") / "presets" / f"{name}.yaml").read_text(encoding="utf-8")
    assert text.startswith("# ") and "title:" in text and "source:" in text
    preset = next(p for p in list_presets() if p.name == name)
    assert preset.source and preset.knobs.strategy in list_policy_names()


@pytest.mark.parametrize("name", list_preset_names())
def test_presets_cite_a_paper_or_code_not_an_internal_seed(name):
    """`workbench presets` shows each source; a seed number means nothing to a reader (issue 13)."""
    preset = next(p for p in list_presets() if p.name == name)
    text = (resources.files("workbench") / "presets" / f"{name}.yaml").read_text(encoding="utf-8")
    assert "seed 0" not in preset.source.lower() and "seed 0" not in text.lower()


def test_stagewise_preset_is_the_default_knobs():
    assert get_preset("stagewise") == Knobs()


@pytest.mark.slow
@pytest.mark.parametrize("name", list_preset_names())
def test_every_preset_replays_every_real_history_as_json(name, capsys):
    for path in real_history_paths():
        assert main(["simulate", str(path), "--preset", name, "--json", "--no-timeline"]) == 0, path.name
        data = json.loads(capsys.readouterr().out)
        m = data["metrics"]
        assert data["knobs"]["strategy"] == get_preset(name).strategy
        assert m["messages"] > 0 and m["peak_tokens"] > 0, path.name
        assert {"ineffective_compressions", "thrash_events", "reactive_compressions", "cooldown_skips"} <= set(m)


@pytest.mark.parametrize("name", list_preset_names())
def test_preset_knobs_round_trip_through_yaml(name):
    from workbench.knobs import dump_knobs, load_knobs

    assert load_knobs(dump_knobs(get_preset(name))) == get_preset(name)


def test_presets_read_the_same_with_libyaml_and_pure_python() -> None:
    """Presets load with libyaml's CSafeLoader when PyYAML has it: the values are the pure-Python SafeLoader's."""
    import yaml

    folder = resources.files("workbench") / "presets"
    entries = [e for e in folder.iterdir() if e.name.endswith(".yaml")]
    assert len(entries) >= 14
    for entry in entries:
        text = entry.read_text(encoding="utf-8")
        fast = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        slow = yaml.load(text, Loader=yaml.SafeLoader)
        assert repr(fast) == repr(slow), entry.name  # repr: 1 and 1.0 and True differ


def test_a_preset_validates_its_knobs_when_first_asked_and_names_its_file() -> None:
    from types import MappingProxyType

    from workbench.presets import Preset

    bad = Preset(name="broken", title="t", source="s", settings=MappingProxyType({"trigger_ratio": "high"}))
    assert bad.agent is None and bad.covers("1.0")  # choosing a preset never validates one
    with pytest.raises(ValueError, match=r"broken\.yaml: trigger_ratio must be a number"):
        _ = bad.knobs
    good = Preset(name="ok", title="t", source="s", settings=MappingProxyType({"trigger_ratio": 0.5}))
    assert good.knobs is good.knobs and good.knobs.trigger_ratio == 0.5
    for name in list_preset_names():  # every shipped preset's knobs, validated
        assert get_preset(name) == get_preset_info(name).knobs
