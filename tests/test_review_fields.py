"""Fields of a Claude Code log that the reality, bill and restore changes read: a value of the wrong type is that
record's problem, said with file, line and field, never a crash and never silently read as something else."""

from __future__ import annotations

from agent_log_builders import ClaudeLog, text_block

from workbench.history.readers import parse_history


def test_a_plan_content_that_is_no_text_is_ignored_with_a_warning():
    """``planContent`` (a session started from a plan approved with "clear context", 2.1.39) must be text: another
    JSON type is not a plan, and the reader says where it found it."""
    log = ClaudeLog().user("Implement the following plan:\n\n# Plan", planContent={"steps": ["a"]})
    log.assistant([text_block("ok")], input_total=20_000, output=5)
    h = parse_history(log.text(), source="p.jsonl")
    assert h.messages[0].meta("planContent") is None
    (w,) = [w for w in h.warnings if w.field == "planContent"]
    assert w.source == "p.jsonl" and w.line == 1 and "not text" in w.message
    good = parse_history(ClaudeLog().user("Implement it", planContent="# Plan").text(), source="q.jsonl")
    assert good.messages[0].meta("planContent") == "# Plan" and not good.warnings


def test_a_prompt_is_read_as_thinking_off_only_by_its_metadata_values():
    """``thinkingMetadata`` turns thinking off by ``maxThinkingTokens`` 0 (2.1.19 and later), ``disabled`` true or
    ``level`` "none": a JSON false or 0.0 there, equal to 0 in Python, is no budget of 0 tokens."""
    cases = [({"maxThinkingTokens": 0}, True), ({"maxThinkingTokens": 31999}, False), ({"disabled": True}, True),
             ({"disabled": False, "level": "high"}, False), ({"level": "none"}, True),
             ({"maxThinkingTokens": False}, False), ({"maxThinkingTokens": 0.0}, False), (["off"], False)]
    for info, off in cases:
        log = ClaudeLog().user("go", thinkingMetadata=info)
        log.assistant([text_block("ok")], input_total=20_000, output=5)
        h = parse_history(log.text(), source="t.jsonl")
        assert (h.messages[0].meta("thinkingOff") is True) is off, info


def test_a_task_list_change_is_known_by_the_tools_name_in_either_shape():
    """``changes_tasks`` reads the tool's name as ``Part.tool_name`` does: ``tool-TaskCreate`` or a dynamic tool named
    ``TaskUpdate``; a name of another JSON type is no task tool."""
    from workbench.analysis.real_logs.bill import changes_tasks
    from workbench.history.model import Message, Part

    def msg(*parts: dict) -> Message:
        return Message(id="m", role="assistant", parts=tuple(Part(data=p) for p in parts))

    assert changes_tasks(msg({"type": "tool-TaskCreate", "toolCallId": "t1", "input": {}}))
    assert changes_tasks(msg({"type": "dynamic-tool", "toolName": "TaskUpdate", "toolCallId": "t2", "input": {}}))
    assert not changes_tasks(msg({"type": "dynamic-tool", "toolName": ["TaskUpdate"], "toolCallId": "t3"}))
    assert not changes_tasks(msg({"type": "tool-Bash", "toolCallId": "t4", "input": {}}))


def test_a_version_family_is_fitted_only_where_two_logs_have_it_and_takes_the_agents_carry_share():
    """``fit_bill_models``, what ``workbench calibrate`` and the reality folds' shipped fits both call: the agent's
    fit on every log, a family's on its own logs where ``FAMILY_MIN_LOGS`` have it, with the agent's carry share."""
    from workbench.analysis.real_logs.bill import FAMILY_MIN_LOGS, bill_family, fit_bill_model, fit_bill_models
    from workbench.analysis.real_logs.reality import follow_log

    def session(version: str, prefix: int) -> tuple:
        log = ClaudeLog(version=version)
        for k in range(4):
            log.user(f"question {k} " + "x" * 2_000)
            log.assistant([text_block("answer " + "y" * 1_000)], input_total=prefix + 1_500 * k, output=30)
        h = parse_history(log.text(), source=f"{version}-{prefix}.jsonl")
        return h, follow_log(h).calls, version

    sessions = [session("2.1.25", 20_000), session("2.1.29", 26_000), session("2.1.7", 31_000)]
    fits = fit_bill_models("claude_code", sessions)
    family = bill_family("claude_code", "2.1.25")
    assert FAMILY_MIN_LOGS == 2 and set(fits) == {"claude_code", family}  # 2.1.7's family has one log
    alone = fit_bill_model([s[:2] for s in sessions[:2]], agent="claude_code", family=family)
    assert fits[family].sessions == 2 and fits[family].carry_share == fits["claude_code"].carry_share
    assert fits[family].reset_cached_tokens == alone.reset_cached_tokens
    assert fits["claude_code"].sessions == 3



def test_a_share_no_call_of_a_family_measures_is_its_agents_not_zero():
    """A version family whose logs have no call at the edge of the cache's lifetime, after a command or after a task
    list change (here: four quick plain turns) measures nothing of those shares: it takes its agent's fit's (review:
    "a version family with no edge calls gets edge share 0"), while a share it measures stays its own, and one its
    rules rule out stays 0 (late hits past a known lifetime; the edge of a 1-hour lifetime, past which nothing is
    read)."""
    from workbench.analysis.real_logs.bill import BillModel, fit_bill_model
    from workbench.analysis.real_logs.reality import follow_log

    def quick(version: str) -> tuple:
        log = ClaudeLog(version=version)
        for k in range(4):
            log.user(f"question {k} " + "x" * 2_000)
            log.assistant([text_block("answer " + "y" * 1_000)], input_total=20_000 + 1_500 * k, output=30)
        h = parse_history(log.text(), source=f"{version}.jsonl")
        return h, follow_log(h).calls

    agent = BillModel(agent="claude_code", family="claude_code", edge_hit_share=0.55, late_hit_share=0.43,
                      command_miss_share=0.44, task_miss_share=0.33, turn_miss_share=0.9)
    five_minutes = [quick("2.1.7")]
    family = fit_bill_model(five_minutes, agent="claude_code", family="f", prior=agent)
    assert (family.edge_hit_share, family.late_hit_share) == (0.55, 0.0)
    assert (family.command_miss_share, family.task_miss_share) == (0.44, 0.33)
    alone = fit_bill_model(five_minutes, agent="claude_code", family="f")
    assert family.turn_miss_share == alone.turn_miss_share != 0.9
    assert alone.edge_hit_share == 0.0 and alone.task_miss_share == alone.turn_miss_share  # no prior: as before
    assert fit_bill_model([quick("2.1.25")], agent="claude_code", family="f", prior=agent).edge_hit_share == 0.0

def test_unlogged_microcompaction_counts_a_result_as_claude_code_does():
    """Claude Code's microcompaction counts a tool result as ``Math.round(chars / 4)`` of a string, and of a list of
    blocks each text block so and 2,000 an image (2.1.7 cli.js ``js2``, ``l7``, ``_s2``): not the blocks' JSON, whose
    base64 image data would count the image again by its length."""
    from agent_log_builders import tool_use

    from workbench.counting.structure import MICROCOMPACT_IMAGE_TOKENS, compactable_results
    from workbench.counting.tokens import CountCache

    text = 'line "quoted"\n' * 300  # 4,200 chars: 1,050 of Claude Code's tokens
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 40_000}}
    log = ClaudeLog(version="2.1.7").user("look")
    log.assistant([tool_use("r1", "Read", file_path="/a.png")], input_total=20_000, output=5)
    log.user([{"type": "tool_result", "tool_use_id": "r1", "content": [{"type": "text", "text": text}, image]}])
    log.assistant([tool_use("r2", "Bash", command="ls")], input_total=40_000, output=5)
    log.tool_result("r2", "ab")  # 2 chars: Math.round(0.5) = 1
    h = parse_history(log.text(), source="m.jsonl")
    sizes = {c: n for _, results in compactable_results(CountCache().counts_for(h)) for c, n, _ in results}
    assert sizes == {"r1": 1_050 + MICROCOMPACT_IMAGE_TOKENS, "r2": 1}


def test_the_bill_model_table_is_one_list_of_columns_for_calibrate_and_the_docs():
    """``bill_model_table``: ``workbench calibrate``'s table, and docs/reality.md's with the uncached tokens per call
    after the late hit (a dash for an agent other than Claude Code)."""
    from workbench.analysis.real_logs.bill import SHIPPED, bill_model_table

    models = {k: SHIPPED[k] for k in ("claude_code", "codex")}
    headers, rows = bill_model_table(models)
    docs, docs_rows = bill_model_table(models, uncached=True)
    assert docs == headers[:9] + ["uncached / call"] + headers[9:] and headers[0] == "bill model"
    assert [len(r) for r in rows] == [len(headers)] * 2 and [r[0] for r in rows] == ["claude_code", "codex"]
    assert [r[9] for r in docs_rows] == [f"{SHIPPED['claude_code'].uncached_per_call:,.0f}", "–"]
    assert rows[1][headers.index("carry")] == f"{SHIPPED['codex'].carry_share:.2f}"
