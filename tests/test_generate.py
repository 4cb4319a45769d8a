"""The session generator: deterministic, shaped like stagewise's UIMessages, and the shipped samples match it."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from conftest import REPO

from workbench.cli import main as cli_main
from workbench.cli.samples import history_stats
from workbench.history import load_history, parse_history, write_canonical_jsonl
from workbench.history.samples.generate import SAMPLES, generate_session

SAMPLE_DIR = REPO / "sample_histories"
SAMPLE = {s.name: s for s in SAMPLES}
STATES = {"output-available", "output-error"}


@pytest.fixture(scope="module")
def session():
    return generate_session(7, turns=80, tool_heavy=0.5, error_rate=0.1)


def test_same_seed_same_bytes_other_seed_other_session():
    """A seed fixes the session exactly; another seed gives another one."""
    a = write_canonical_jsonl(generate_session(3, turns=12))
    assert a == write_canonical_jsonl(generate_session(3, turns=12))
    assert a != write_canonical_jsonl(generate_session(4, turns=12))


def test_turns_alternate_user_and_assistant(session):
    """Each turn is a user message answered by one assistant message of several steps."""
    assert [m.role for m in session.messages] == ["user", "assistant"] * 80
    assert len({m.id for m in session.messages}) == 160
    stamps = [datetime.fromisoformat(m.metadata["createdAt"]) for m in session.messages]
    assert stamps == sorted(stamps)
    assert all(m.metadata["createdAt"].endswith("Z") and len(m.metadata["createdAt"]) == 24 for m in session.messages)


def test_tool_parts_have_the_static_ai_sdk_shape(session):
    """Static tool-<name> parts: no toolName, unique call ids, output or errorText by state."""
    tools = [p for m in session.messages for p in m.parts if p.kind == "tool"]
    assert len({p.tool_call_id for p in tools}) == len(tools)
    names = Counter(p.tool_name for p in tools)
    assert set(names) >= {"read", "write", "multiEdit", "grepSearch", "glob", "executeShellCommand",
                          "getLintingDiagnostics", "askUserQuestions"}
    for p in tools:
        assert "toolName" not in p.data and p.state in STATES
        if p.state == "output-available":
            assert "output" in p.data and "errorText" not in p.data
        else:
            assert p.error_text and "output" not in p.data
    errors = sum(p.state == "output-error" for p in tools)
    assert 0.04 < errors / len(tools) < 0.2
    shells = [p.output for p in tools if p.tool_name == "executeShellCommand" and p.state == "output-available"]
    assert {s["exit_code"] for s in shells} >= {0, 1}
    assert all(set(s) == {"session_id", "output", "exit_code", "session_exited", "timed_out"} for s in shells)
    lint = [p.output for p in tools if p.tool_name == "getLintingDiagnostics" and p.state == "output-available"]
    assert all(set(x["summary"]) == {"totalFiles", "totalIssues", "errors", "warnings", "infos", "hints"} for x in lint)


def test_output_sizes_follow_their_tools(session):
    """Reads run 2-40k chars and shells 0.2-20k, lint stays small: long tails, not uniform sizes."""
    tools = [p for m in session.messages for p in m.parts if p.kind == "tool" and p.state == "output-available"]
    reads = [len(p.output["content"]) for p in tools if p.tool_name == "read"]
    shells = [len(p.output["output"]) for p in tools if p.tool_name == "executeShellCommand"]
    assert min(reads) >= 1500 and max(reads) <= 40_000 and max(reads) > 4 * min(reads)
    assert min(shells) >= 150 and max(shells) <= 21_000
    assert max(len(str(p.output)) for p in tools if p.tool_name == "getLintingDiagnostics") < 2_000


def test_parts_metadata_has_holes_at_non_text_parts(session):
    """partsMetadata lines up with parts; only text and reasoning get timings, as stagewise records them."""
    for m in session.messages:
        if m.role != "assistant":
            continue
        timing = m.metadata["partsMetadata"]
        assert len(timing) == len(m.parts)
        for part, t in zip(m.parts, timing, strict=True):
            assert (t is not None) == (part.kind in ("text", "reasoning"))


def test_user_turns_plant_facts_with_file_links(session):
    """Decisions and constraints sit in user text; file links use the [](path:w1/...) form."""
    facts = session.meta["facts"]
    kinds = Counter(f["kind"] for f in facts)
    assert kinds["decision"] >= 2 and kinds["constraint"] >= 2 and kinds["file"] >= 60
    by_id = {m.id: m for m in session.messages}
    for fact in facts:
        message = by_id[fact["message_id"]]
        assert session.messages[fact["index"]] is message
        if fact["kind"] in ("decision", "constraint"):
            assert fact["text"] in message.text
        elif fact["kind"] == "file":
            assert f"[](path:{fact['text']})" in message.text
    users = [m for m in session.messages if m.role == "user"]
    assert all("[](path:w1/" in m.text for m in users)
    assert all(m.metadata["mentions"][0]["mountPrefix"] == "w1" for m in users)


def test_tool_heavy_shifts_tokens_into_tool_outputs():
    """More tool_heavy means a larger share of tokens in tool outputs."""
    light = history_stats(generate_session(11, turns=30, tool_heavy=0.0))
    heavy = history_stats(generate_session(11, turns=30, tool_heavy=1.0))
    assert heavy["tool_output_share"] > light["tool_output_share"] + 0.2
    assert heavy["estimated_tokens"] > light["estimated_tokens"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"turns": 0}, "turns must be >= 1, got 0"),
    ({"turns": 3, "tool_heavy": 1.5}, r"tool_heavy must be in \[0, 1\], got 1.5"),
    ({"turns": 3, "error_rate": -0.1}, r"error_rate must be in \[0, 1\], got -0.1"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        generate_session(1, **kwargs)


# -- the shipped samples --------------------------------------------------------------------------


def test_short_sample_regenerates_byte_for_byte():
    """sample_histories/short.jsonl is exactly what the generator writes today."""
    assert (SAMPLE_DIR / "short.jsonl").read_bytes() == SAMPLE["short"].text().encode("utf-8")


@pytest.mark.slow
def test_cli_regenerates_every_sample_and_the_readme(tmp_path):
    """``workbench samples --out DIR`` reproduces the shipped folder."""
    assert cli_main(["samples", "--out", str(tmp_path)]) == 0
    for name in ("short.jsonl", "long.jsonl", "tool_heavy.jsonl", "claude_code.jsonl", "README.md"):
        assert (tmp_path / name).read_bytes() == (SAMPLE_DIR / name).read_bytes(), name


@pytest.fixture(scope="session")  # once per worker, not once per visit (tests/conftest.py)
def shipped():
    return {name: load_history(SAMPLE_DIR / f"{name}.jsonl") for name in SAMPLE}


def test_samples_have_the_sizes_they_exist_for(shipped):
    """short ~60 messages; long >= 2,000 messages and >= 1.5M tokens under 12 MB; tool_heavy >= 70% tool output."""
    stats = {name: history_stats(h) for name, h in shipped.items()}
    assert 50 <= stats["short"]["messages"] <= 70
    assert stats["long"]["messages"] >= 2_000 and stats["long"]["estimated_tokens"] >= 1_500_000
    assert (SAMPLE_DIR / "long.jsonl").stat().st_size < 12_000_000
    assert stats["tool_heavy"]["tool_output_share"] >= 0.7
    for name, h in shipped.items():
        assert h.id == name and h.source_format == "canonical" and h.meta["seed"] == SAMPLE[name].seed
        readme = (SAMPLE_DIR / "README.md").read_text()
        assert f"| `{name}.jsonl` | canonical JSONL | {stats[name]['messages']:,} | {stats[name]['estimated_tokens']:,} |" in readme


def test_samples_survive_the_canonical_round_trip(shipped):
    h = shipped["short"]
    assert parse_history(write_canonical_jsonl(h)) == h


# -- the generated Claude Code log (issue 21, item 13) -------------------------------------------------------


def test_the_claude_code_sample_is_a_native_log_with_usage_and_one_compaction():
    """sample_histories/claude_code.jsonl is read as Claude Code's own log: a version and model, the bill of every
    call, one automatic compaction with its summary, and the replay with the log's usage fires at its message."""
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.analysis.real_logs.reality import follow_log
    from workbench.history.samples.generate_claude_code import AGENT_LOG_SAMPLES

    path = SAMPLE_DIR / "claude_code.jsonl"
    assert path.read_bytes() == AGENT_LOG_SAMPLES[0].text().encode("utf-8")  # regenerates byte for byte
    assert path.stat().st_size < 1_000_000
    history = load_history(path)
    assert history.source_format == "claude_code" and not history.warnings
    log = history.log
    assert (log.agent, log.version, log.model) == ("claude_code", "2.1.25", "claude-opus-4-5-20251101")
    assistants = [m for m in history.messages if m.role == "assistant"]
    assert assistants and all(m.usage is not None for m in assistants)
    (compaction,) = log.compactions
    assert compaction.trigger == "auto" and compaction.tokens_before >= 167_000 and compaction.summary
    assert agent_settings(history).preset == "claude_code"
    (check,) = follow_log(history).compactions
    assert check.error == 0 and check.predicted_index == compaction.index
    readme = (SAMPLE_DIR / "README.md").read_text()
    assert "| `claude_code.jsonl` | Claude Code JSONL | " in readme


def test_the_claude_code_generator_is_deterministic():
    from workbench.history.samples.generate_claude_code import claude_code_log

    assert claude_code_log(5, turns_after=1) == claude_code_log(5, turns_after=1)
    assert claude_code_log(5, turns_after=1) != claude_code_log(6, turns_after=1)
