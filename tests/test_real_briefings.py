"""Real briefings, scored: hand-built Claude Code and Codex logs pin retention, facts at risk and re-fetches."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, need_shared, shared_dir

from workbench.analysis.real_logs.real_briefings import score_briefings
from workbench.analysis.real_logs.real_briefings_report import (
    briefings_json,
    briefings_markdown,
    briefings_summary,
    format_briefings_table,
)
from workbench.analysis.real_logs.refetch import FileRead, call_reads, file_reads, refetches, shell_reads
from workbench.cli import main
from workbench.history.jsjson import js_stringify_len
from workbench.history.readers import load_history

# ── a Claude Code log ───────────────────────────────────────────────────────────────────────

CC_SUMMARY_1 = ("This session is being continued from a previous conversation.\n\nSummary:\n"
                "Fixing src/parse.py for the empty-input case. Never change the public API.\n")
CC_SUMMARY_2 = "Summary:\nStill on src/parse.py; src/new.py was added.\n"
PARSE_PY = "def parse(x):\n    return x\n" * 40
README = "# Demo\n\nRun the tests with pytest.\n"
CC_REQUEST = "Fix the parser in `src/parse.py`. Never change the public API."


class _CC:
    """Writes Claude Code records (type user/assistant/system, uuid chain, cwd, version)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.n = 0

    def _base(self, kind: str) -> dict[str, Any]:
        self.n += 1
        parent = self.lines[-1]["uuid"] if self.lines else None
        return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/repo",
                "sessionId": "s-1", "version": "2.1.30", "type": kind, "uuid": f"u-{self.n:03d}",
                "timestamp": f"2026-01-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"}

    def user(self, content: Any, **flags: Any) -> None:
        self.lines.append({**self._base("user"), "message": {"role": "user", "content": content}, **flags})

    def assistant(self, *blocks: dict[str, Any]) -> None:
        self.lines.append({**self._base("assistant"), "message": {
            "id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-opus-4-5-20251101",
            "content": list(blocks), "usage": {"input_tokens": 10, "cache_read_input_tokens": 1000,
                                               "cache_creation_input_tokens": 10, "output_tokens": 5}}})

    def tool(self, name: str, inp: dict[str, Any], output: str, *, error: bool = False, text: str = "") -> None:
        call_id = f"toolu_{self.n + 1}"
        blocks = [{"type": "text", "text": text}] if text else []
        self.assistant(*blocks, {"type": "tool_use", "id": call_id, "name": name, "input": inp})
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": output}
        if error:
            result["is_error"] = True
        self.user([result])

    def compact(self, summary: str, pre_tokens: int) -> None:
        parent = self.lines[-1]["uuid"]
        self.lines.append({**self._base("system"), "parentUuid": None, "logicalParentUuid": parent,
                           "subtype": "compact_boundary", "content": "Conversation compacted",
                           "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens}})
        self.user(summary, isCompactSummary=True)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.lines), encoding="utf-8")
        return path


def claude_code_log(path: Path) -> Path:
    """Two compactions; README is read by the shell before the first and again (relative path) after it."""
    cc = _CC()
    cc.user(CC_REQUEST)                                                                             # 0
    cc.tool("Read", {"file_path": "/repo/src/parse.py"}, PARSE_PY, text="Let me read the parser first.")  # 1, 2
    cc.tool("Bash", {"command": "cat /repo/README.md"}, README)                                     # 3, 4
    cc.tool("Bash", {"command": "pytest -q"}, "FAILED tests/test_parse.py::test_empty - ValueError: empty input",
            error=True)                                                                             # 5, 6
    cc.assistant({"type": "text", "text": "I will handle the empty input case next."})             # 7
    cc.compact(CC_SUMMARY_1, 155_000)                                                               # 8 = summary
    cc.tool("Read", {"file_path": "/repo/src/parse.py"}, PARSE_PY)                                  # 9, 10
    cc.tool("Bash", {"command": "sed -n '1,5p' README.md"}, README)                                 # 11, 12
    cc.tool("Write", {"file_path": "/repo/src/new.py", "content": "X = 1\n"}, "File created")      # 13, 14
    cc.tool("Read", {"file_path": "/repo/src/parse.py"}, PARSE_PY)                                  # 15, 16
    cc.compact(CC_SUMMARY_2, 160_000)                                                               # 17 = summary
    cc.tool("Read", {"file_path": "/repo/src/new.py"}, "X = 1\n")                                   # 18, 19
    return cc.write(path)


def test_claude_code_real_summary_against_extractive(tmp_path: Path) -> None:
    history = load_history(claude_code_log(tmp_path / "cc.jsonl"))
    assert [c.index for c in history.log.compactions] == [8, 17]
    first, second = score_briefings(history)

    # Span 1 = messages 0-7. Its facts: src/parse.py (mentioned), /repo/src/parse.py (read), /repo/README.md
    # (cat), the decision, the failing test, the request (0) and the latest plan (7). The Bash call's "tool
    # error" fact names nothing its message says, so no message mentions it and it is not probed.
    assert (first.index, first.span_from, first.trigger, first.ordinal) == (8, 0, "auto", 1)
    assert first.facts == 7
    # The summary names src/parse.py (both path facts: the path and its tail), the decision, and paraphrases
    # the request (fix·ing, src, parse.py, never, change, public, api: 6 of its 8 words); Claude Code restores
    # /repo/src/parse.py itself (its last file-tool read), which keeps that path too.
    assert first.restored == ("/repo/src/parse.py",)
    assert first.retained_real == 4 and first.kept_verbatim == 2
    assert {f.key for f in first.at_risk} == {"/repo/README.md", "I will handle the empty input case next.",
                                              "FAILED tests/test_parse.py::test_empty - ValueError: empty input"}
    # Next steps first among the examples, then decisions, changed files, errors, other files.
    assert [f.kind for f in first.at_risk] == ["next_step", "error", "artifact"]
    assert first.at_risk_examples() == ("next_step: I will handle the empty input case next.",
                                        "error: FAILED tests/test_parse.py::test_empty - ValueError: empty input")
    # The extractive briefing of the same input lists every file, the error, the user's words and the status.
    assert first.retained_extractive == 7 and first.extractive_at_risk == 0
    assert first.summary_readable and first.summary_chars == len(CC_SUMMARY_1)
    assert first.target_chars == len(CC_SUMMARY_1)
    assert "it never cuts files or links" in first.notes[0]

    # Re-fetches after compaction 1 (before 17): parse.py (its first re-read only, not the one at 15) and README
    # through `sed -n` relative to the session's cwd.
    assert [(r.path, r.index, r.first_read, r.via) for r in first.refetched] == [
        ("/repo/src/parse.py", 9, 1, "read"), ("/repo/README.md", 11, 3, "shell")]
    assert [r.restored for r in first.refetched] == [True, False] and first.refetches_restored == 1
    # README was at risk (the summary dropped it): reading it back is the re-fetch seed 003 means.
    assert first.refetches_at_risk == 1
    # Tokens: the preset's estimate of each result message, ceil((JSON chars of the result part + 16) / 4).
    msgs = history.messages
    expected = [math.ceil((js_stringify_len(msgs[i].parts[0].data) + 16) / 4) for i in (10, 12)]
    assert [r.tokens for r in first.refetched] == expected == [313, 33]
    assert first.refetch_tokens == 346

    # Span 2 = the first summary (8) and messages 9-16. Nothing first met in a summary is a fact (the summary's
    # own text is no request); facts from before count when the span mentions them: the summary carries
    # src/parse.py, the decision and the request; /repo/src/parse.py, README.md (sed's relative path is a
    # fact of its own) and /repo/src/new.py (written) are new.
    assert (second.span_from, second.index, second.ordinal) == (8, 17, 2)
    assert second.facts == 6 and second.retained_real == 3
    assert {f.key for f in second.at_risk} == {"README.md", "Never change the public API.", CC_REQUEST}
    # Newest mtime first: new.py was written in the session, parse.py only read (its mtime predates the session).
    assert second.restored == ("/repo/src/new.py", "/repo/src/parse.py")
    # The extractive briefer chains on the real first summary (kept verbatim as its preamble) and adds the span.
    assert second.extractive_text.startswith(CC_SUMMARY_1.strip())
    assert second.retained_extractive == 6
    # new.py was written before compaction 2, never read: reading it afterwards is no re-fetch.
    assert second.refetched == ()


# ── a Codex rollout ─────────────────────────────────────────────────────────────────────────


class _Codex:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.calls = 0
        self.total = 0

    def add(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": f"2026-06-26T09:00:{len(self.lines):02d}.000Z", "type": kind,
                           "payload": payload})

    def user(self, text: str) -> None:
        self.add("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})

    def shell(self, cmd: str, output: str, code: int = 0) -> None:
        self.calls += 1
        call_id = f"call_{self.calls}"
        self.add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call_id,
                                   "arguments": json.dumps({"cmd": cmd, "workdir": "/home/u/app"})})
        self.total += 1000
        usage = {"input_tokens": self.total, "cached_input_tokens": 0, "output_tokens": 10,
                 "reasoning_output_tokens": 0, "total_tokens": self.total + 10}
        self.add("event_msg", {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": {
            **usage, "total_tokens": self.total * 7}, "model_context_window": 258400}})
        self.add("response_item", {"type": "function_call_output", "call_id": call_id,
                                   "output": f"Process exited with code {code}\nOutput:\n{output}"})

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.lines), encoding="utf-8")
        return path


CODEX_REQUEST = "Use bun, not npm. Update `src/app.ts` and read docs/guide.md first."


def codex_log(path: Path) -> Path:
    cx = _Codex()
    cx.add("session_meta", {"id": "s-2", "cwd": "/home/u/app", "cli_version": "0.142.4", "originator": "codex_cli_rs",
                            "base_instructions": {"text": "You are Codex."}})
    cx.add("turn_context", {"cwd": "/home/u/app", "model": "gpt-5.5"})
    cx.add("event_msg", {"type": "task_started"})
    cx.user(CODEX_REQUEST)                                                     # 1 (0 is the instructions)
    cx.shell("cat docs/guide.md", "Guide: run bun test.\n")                    # 2, 3
    cx.shell("cd /home/u/app && sed -n '1,40p' src/app.ts", "export const x = 1;\n")  # 4, 5
    cx.shell("bun test", "error: expected 2, got 1\n", code=1)                # 6, 7
    cx.add("compacted", {"message": "", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": CODEX_REQUEST}]},
        {"type": "compaction", "encrypted_content": "REDACTED"}]})
    cx.shell("nl -ba src/app.ts | sed -n '1,20p'", "1 export const x = 1;\n")  # 8, 9: a re-fetch
    cx.shell("cat docs/missing.md", "cat: docs/missing.md: No such file", code=1)  # 10, 11: failed, no read
    cx.shell("rg -n guide docs", "docs/guide.md:1:Guide\n")                  # 12, 13: a directory search
    cx.shell("rg -n Guide docs/guide.md", "1:Guide: run bun test.\n")       # 14, 15: a one-file search
    cx.add("event_msg", {"type": "task_complete"})
    return cx.write(path)


def test_codex_scores_what_it_kept_and_says_the_summary_is_encrypted(tmp_path: Path) -> None:
    history = load_history(codex_log(tmp_path / "codex.jsonl"))
    (score,) = score_briefings(history)
    assert score.index == 8 and score.agent == "codex" and not score.summary_readable
    assert score.summary_chars is None and "encrypted" in score.notes[0]
    # Facts of 0-7: src/app.ts, docs/guide.md, the decision "Use bun, not npm.", the failing test's error and
    # the request. The kept user message names all but the error.
    assert score.facts == 5
    assert score.kept_verbatim == score.retained_real == 4
    assert [f.kind for f in score.at_risk] == ["error"]
    # The extractive briefer keeps the same four, not the error: it reads exit codes from structured outputs
    # only, and Codex logs its exit code inside the output text.
    assert score.retained_extractive == 4
    # The preset's target stands in for the unreadable summary's length.
    assert score.target_chars == 30_000
    # Re-fetches: src/app.ts through nl (workdir-relative) and docs/guide.md through a one-file rg; the failed
    # cat and the directory search read nothing.
    assert [(r.path, r.via, r.first_read) for r in score.refetched] == [
        ("/home/u/app/src/app.ts", "shell", 4), ("/home/u/app/docs/guide.md", "search", 2)]


def test_reports_show_every_compaction(tmp_path: Path) -> None:
    scores = [*score_briefings(load_history(claude_code_log(tmp_path / "cc.jsonl"))),
              *score_briefings(load_history(codex_log(tmp_path / "codex.jsonl")))]
    total = briefings_summary(scores)
    assert total["compactions"] == 3 and total["facts"] == 7 + 6 + 5
    assert total["retained_real"] == 4 + 3 + 4 and total["refetches"] == 2 + 0 + 2
    assert total["retention_real"] == round(11 / 18, 4) and total["refetches_restored"] == 1
    assert total["refetches_at_risk"] == 1
    assert total["by_agent"]["codex"]["retained_extractive"] == 4
    rows = briefings_json(scores)
    assert [r["index"] for r in rows] == [8, 17, 8]
    assert rows[0]["retention_real"] == round(4 / 7, 4) and rows[0]["refetches"] == 2
    assert rows[0]["at_risk"] == 3 and rows[0]["refetched"][0]["restored"] is True
    json.dumps(rows)  # plain JSON values only
    table = format_briefings_table(scores).splitlines()
    assert table[0].split()[:3] == ["file", "#", "index"]
    assert any(line.startswith("codex.jsonl") and "80%*" in line for line in table)
    md = briefings_markdown(scores)
    assert md.startswith("## Real briefings, scored")
    assert f"| cc.jsonl | #1 → 8 (line 9) | auto | 7 | 57% (4) | 100% (7) | {len(CC_SUMMARY_1)} / 619 | 3 |" in md
    assert "| 2 (1 lost, 1 restored) | 346 |" in md and "| **all** | 3 | | 18 | 61% (11) |" in md
    assert "| codex.jsonl | #1 → 8 (line 14) | auto | 5 | 80%\\* (4) | 80% (4) | – / " in md


def test_reality_command_adds_the_briefings_table_and_json_list(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cc, codex = claude_code_log(tmp_path / "cc.jsonl"), codex_log(tmp_path / "codex.jsonl")
    assert main(["reality", str(cc), str(codex), "--json"]) == 0
    assert "briefings" not in json.loads(capsys.readouterr().out)  # the documented shape, unless asked
    assert main(["reality", str(cc), str(codex), "--json", "--briefings"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"sessions", "summary", "briefings"}
    assert [(b["file"], b["index"], b["facts"], b["retained_real"], b["retained_extractive"], b["refetches"])
            for b in out["briefings"]] == [("cc.jsonl", 8, 7, 4, 7, 2), ("cc.jsonl", 17, 6, 3, 6, 0),
                                           ("codex.jsonl", 8, 5, 4, 4, 2)]
    assert main(["reality", str(cc), str(codex), "--briefings"]) == 0
    text = capsys.readouterr().out
    assert "Real summaries vs the extractive briefer" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("cc.jsonl") and " 57% " in line)
    assert row.split()[:6] == ["cc.jsonl", "1", "8", "9", "auto", "7"]
    assert "2 (1 lost, 1 restored)" in row and row.split()[-1] == "346"
    assert "cc.jsonl #1 at risk: next_step: I will handle the empty input case next." in text


# ── what counts as a read ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("script", "expected"), [
    ("cd /r && sed -n '1,260p' a/x.ts", [("/r/a/x.ts", "shell")]),
    ("cat a.py b.py | rg foo", [("/w/a.py", "shell"), ("/w/b.py", "shell")]),
    ("head -n 40 README.md && tail -20 CHANGELOG.md", [("/w/README.md", "shell"), ("/w/CHANGELOG.md", "shell")]),
    ("sed -n 1,20p x.py 2>/dev/null", [("/w/x.py", "shell")]),
    ("rg -n foo src/a.ts src", [("/w/src/a.ts", "search")]),
    ("grep -e pat -n file.c", [("/w/file.c", "search")]),
    ("cat < in.txt", [("/w/in.txt", "shell")]),
    ("FOO=1 cat ./x/../y.txt", [("/w/y.txt", "shell")]),
    ("sed -i 's/a/b/' x.py", []),  # an edit
    ("rg --files src | rg x", []),  # names, not content
    ("rg -n 'eval.ts' packages/src | head -n 50", []),  # a directory search; the pattern is no file
    ("for f in *.py; do cat $f; done", []),
    ("cat > out.txt <<'EOF'\ncat secret.txt\nEOF", []),  # a heredoc body is not a command
    ("wc -l a.py", []),
    ("cat 'unterminated", []),
])
def test_shell_reads_are_conservative(script: str, expected: list[tuple[str, str]]) -> None:
    assert shell_reads(script, "/w") == expected


def test_read_tools_across_agents() -> None:
    assert call_reads("Read", {"file_path": "/a/b.py", "offset": 10}, None) == [("/a/b.py", "read")]
    assert call_reads("str_replace_based_edit_tool", {"command": "view", "path": "b.py"}, "/a") == [("/a/b.py", "read")]
    assert call_reads("str_replace_based_edit_tool", {"command": "create", "path": "b.py"}, "/a") == []
    assert call_reads("Grep", {"pattern": "x", "path": "/a/b.py"}, None) == [("/a/b.py", "search")]
    assert call_reads("Grep", {"pattern": "x", "path": "/a/src"}, None) == []
    assert call_reads("Glob", {"pattern": "**/*.py"}, None) == []
    assert call_reads("local_shell", {"action": {"command": ["bash", "-lc", "cat x.md"], "working_directory": "/d"}},
                      None) == [("/d/x.md", "shell")]


def test_refetches_count_each_file_once_and_only_reads_that_returned_content() -> None:
    def read(index: int, path: str, *, ok: bool = True, tokens: int = 10) -> FileRead:
        return FileRead(index=index, path=path, via="read", tool="Read", tokens=tokens, ok=ok)

    reads = [read(1, "/a"), read(2, "/b", ok=False), read(3, "/c"), read(6, "/a", tokens=7), read(7, "/a"),
             read(8, "/b"), read(9, "/d"), read(12, "/c")]
    # Compaction at 5, next one at 10: /a once (its first re-read), /b never read before (it failed), /d new,
    # /c only after the next compaction.
    again = refetches(reads, 5, 10, restored=["/a"])
    assert [(r.path, r.index, r.first_read, r.tokens, r.restored) for r in again] == [("/a", 6, 1, 7, True)]
    assert [r.path for r in refetches(reads, 5, 100)] == ["/a", "/c"]


def test_file_reads_take_the_result_tokens_and_share_them() -> None:
    history = load_history(Path(__file__).parent / "fixtures" / "histories" / "claude_code_session.jsonl")
    tokens = [100 + i for i in range(len(history.messages))]
    reads = file_reads(history.messages, tokens, cwd=history.meta.get("cwd"))
    first = reads[0]
    assert first.path == "/path/to/Demo/src/utils/date.test.ts" and first.via == "read" and first.ok
    result = next(j for j, m in enumerate(history.messages) if j > first.index and m.role == "tool")
    assert first.tokens == tokens[result]
    two = file_reads([*history.messages[: first.index], history.messages[first.index]], tokens)
    assert two[0].tokens == 0 and not two[0].ok  # the result was never logged: nothing came back


# ── the dev set ─────────────────────────────────────────────────────────────────────────────


@pytest.mark.slow
def test_every_logged_compaction_of_the_dev_set_is_scored() -> None:
    folder = need_shared(shared_dir() / "real_sessions")
    facts = json.loads((folder / "facts.json").read_text(encoding="utf-8"))
    for session in facts["sessions"]:
        scores = score_briefings(load_history(folder / session["file"]))
        logged = [(c["source_line"], c["message_index_after"], c["trigger"]) for c in session["compactions"]]
        assert [(s.source_line, s.index, s.trigger) for s in scores] == logged, session["file"]
        for s in scores:
            assert s.facts > 0 and s.retention_real is not None and s.retention_extractive is not None
            assert 0 <= s.retained_real <= s.facts and 0 <= s.retained_extractive <= s.facts
            assert s.refetches >= 0 and s.refetch_tokens >= 0 and (s.refetches == 0) == (s.refetch_tokens == 0)
            assert s.summary_readable == (session["agent"] == "claude_code")
            assert s.extractive_text


def test_docs_reality_shows_every_logged_compaction_scored() -> None:
    """The Done-when line of issue 11: docs/reality.md has real vs extractive retention and re-fetches for each."""
    folder = need_shared(shared_dir() / "real_sessions")
    facts = json.loads((folder / "facts.json").read_text(encoding="utf-8"))
    doc = (REPO / "docs" / "reality.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Real briefings, scored"):]
    for session in facts["sessions"]:
        for n, c in enumerate(session["compactions"], 1):
            prefix = f"| {session['file']} | #{n} → {c['message_index_after']} (line {c['source_line']}) | {c['trigger']} |"
            row = next((line for line in section.splitlines() if line.startswith(prefix)), None)
            assert row is not None, prefix
            cells = [x.strip() for x in row.split(" | ")]
            assert cells[4].endswith(")") and "%" in cells[4] and "%" in cells[5]  # real, extractive retention
            assert cells[-2].split()[0].isdigit() and cells[-1].rstrip(" |").replace(",", "").isdigit()


def test_the_reality_tab_shows_each_compaction_scored(tmp_path: Path) -> None:
    from test_app import no_errors
    from test_app_reality import opened

    at = opened("cc.jsonl", claude_code_log(tmp_path / "cc.jsonl").read_bytes())
    no_errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["facts in the folded span"] == "7"
    assert metrics["kept by the real summary"] == "57%" and metrics["kept by the extractive briefer"] == "100%"
    assert metrics["re-fetched after"] == "2 files"
    texts = [m.value for m in at.markdown]
    assert any(t.startswith("**At risk** (3:") and "`next_step: I will handle the empty input case next.`" in t
               for t in texts)
    assert any(t.startswith("**Read again after it**") and "`/repo/src/parse.py` (313 tokens, restored by the agent)"
               in t and "`/repo/README.md` (33 tokens)" in t for t in texts)
    # The extractive briefing beside the real one, shown as written (a code block: never rendered as Markdown).
    assert any(c.value.startswith("## Session intent") and "[](path:/repo/README.md) — shell" in c.value for c in at.code)
    next(s for s in at.selectbox if s.key == "reality_pick").set_value(1).run()
    no_errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["facts in the folded span"] == "6" and metrics["re-fetched after"] == "0 files"
    assert metrics["kept by the real summary"] == "50%"
