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
