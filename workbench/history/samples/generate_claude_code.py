"""A seeded Claude Code session log, in Claude Code's own JSONL: billed usage on every call, one logged compaction.

The canonical samples (``workbench.history.samples.generate``) carry no agent log, so without ``../shared``'s real logs
nothing showed what ``workbench reality``, the Reality tab and notebook 06 are for. This writes a session the way
Claude Code 2.1.25 writes one (the records of ``../shared/real_sessions/claude_code__ad_ff0201aecb_0.jsonl``, a
2.1.25 log): user and assistant records chained by ``parentUuid``, one assistant line per content block of a
response with the response's usage, tool results with ``toolUseResult``, a ``compact_boundary`` system record
(``parentUuid`` null, ``logicalParentUuid`` the last message) and the compact-summary user line after it.
Where a real log repeats a tool's whole output in ``toolUseResult`` (a read file's text, an edit's strings, a
command's stdout), this keeps only the fields the workbench reads, so the file stays small.

The agent it models: every call bills a hidden prefix (system prompt, tool schemas, CLAUDE.md) plus the context,
each text at CHARS_PER_TOKEN; before each call it compacts when the last bill plus a quarter of the characters added
since reaches the window less Claude Code's reserve (the rule of ``workbench/presets/claude_code.yaml``), and after
the compaction it bills the summary and the files it re-read. The vocabulary (files, requests, decisions) is
``generate``'s. Deterministic: one ``random.Random(seed)``. Text out, no I/O; ``workbench samples`` writes it.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from workbench.history.model import History
from workbench.history.samples import synth
from workbench.history.samples.generate import ASKS, CONSTRAINTS, DECISIONS, FILES, FOLLOW_UPS, MOUNT

VERSION = "2.1.25"
MODEL = "claude-opus-4-5-20251101"
CWD = "/home/dev/projects/app"
WINDOW_TOKENS = 200_000  # Claude Code's window for a model without the 1M beta
RESERVE_TOKENS = 33_000  # min(32,000, the model's max output, 20,000) + 13,000 from 2.1.21 (presets/claude_code.yaml)
# The first call of the 2.1.25 log named above bills 41,848 tokens for a one-line request: the hidden prefix.
HIDDEN_PREFIX_TOKENS = 41_000
# The provider's count of a text: the claude_code preset's fitted token_ratio (1.238) times chars/4, about chars/3.2.
CHARS_PER_TOKEN = 3.2
RESTORE_TOKENS = 9_000  # what it re-attaches after compacting (recent files, the todo list), billed, never logged
_B62 = string.ascii_letters + string.digits


def _iso(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _path(file: str) -> str:
    return f"{CWD}/{file.removeprefix(MOUNT + '/')}"


def _tokens(chars: int) -> int:
    return round(chars / CHARS_PER_TOKEN)


class _Log:
    """The session as it is written: records, the billed context, and what the agent's own estimate has seen."""

    def __init__(self, seed: int, start: str) -> None:
        self.rng = random.Random(seed)
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.clock = int(datetime.fromisoformat(start).timestamp() * 1000)
        self.session = self.uuid()
        self.context = 0  # tokens of the visible context, as the provider counts them
        self.billed = 0  # the last call's input + output
        self.since = 0  # characters added since the last call (the agent's estimate reads a quarter of them)
        self.cached = 0  # tokens of the context the previous call sent (read from the prompt cache)
        self.compactions = 0
        self.n_calls = 0
        self.versions: dict[str, int] = {}
        self.sizes: dict[str, int] = {}

    def uuid(self) -> str:
        x = f"{self.rng.getrandbits(128):032x}"
        return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-{'89ab'[int(x[16], 16) % 4]}{x[17:20]}-{x[20:]}"

    def tick(self, median_s: float) -> str:
        self.clock += int(self.rng.lognormvariate(0, 0.8) * median_s * 1000) + 1
        return _iso(self.clock)

    def _record(self, kind: str, **fields: Any) -> dict[str, Any]:
        uuid = self.uuid()
        record = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": CWD,
                  "sessionId": self.session, "version": VERSION, "gitBranch": "main", "type": kind, **fields,
                  "uuid": uuid, "timestamp": self.tick(1.5)}
        self.records.append(record)
        self.parent = uuid
        return record

    def user(self, content: Any, chars: int, **flags: Any) -> None:
        self._record("user", message={"role": "user", "content": content}, **flags)
        self.context += _tokens(chars) + 4
        self.since += chars

    def trigger_reached(self) -> int | None:
        """The agent's measure before the next call when it reaches the threshold, else None."""
        measure = self.billed + self.since // 4
        return measure if self.billed and measure >= WINDOW_TOKENS - RESERVE_TOKENS else None

    def call(self, blocks: list[dict[str, Any]]) -> None:
        """One response: a line per content block, each with the response's usage."""
        chars = sum(len(json.dumps(b.get("input", b.get("text", "")))) for b in blocks)
        output = _tokens(chars) + 12
        total_in = HIDDEN_PREFIX_TOKENS + self.context
        read = min(self.cached, total_in - 3)
        usage = {"input_tokens": 3, "cache_creation_input_tokens": total_in - 3 - read, "cache_read_input_tokens": read,
                 "output_tokens": output, "service_tier": "standard"}
        self.n_calls += 1
        msg_id = "msg_01" + "".join(self.rng.choice(_B62) for _ in range(22))
        for block in blocks:
            self._record("assistant", message={"model": MODEL, "id": msg_id, "type": "message", "role": "assistant",
                                               "content": [block], "stop_reason": None, "stop_sequence": None,
                                               "usage": usage},
                         requestId="req_011" + "".join(self.rng.choice(_B62) for _ in range(21)))
        self.billed = total_in + output
        self.cached = total_in
        self.context += output
        self.since = 0

    def compact(self, measure: int, summary: str) -> None:
        """Claude Code's automatic compaction: the boundary record, then its summary as a user line."""
        last = self.parent
        self.parent = None
        self._record("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False,
                     level="info", logicalParentUuid=last, compactMetadata={"trigger": "auto", "preTokens": measure})
        self.context = RESTORE_TOKENS
        self.cached = 0
        self.since = 0
        self.user(summary, len(summary), isCompactSummary=True, isVisibleInTranscriptOnly=True)
        self.compactions += 1

    # -- tools ---------------------------------------------------------------------------------------------
    def call_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choice(_B62) for _ in range(22))

    def tool(self, name: str, tool_input: dict[str, Any], result: str, use_result: Any, *, error: bool = False) -> None:
        call = self.call_id()
        self.call([{"type": "tool_use", "id": call, "name": name, "input": tool_input}])
        block: dict[str, Any] = {"tool_use_id": call, "type": "tool_result", "content": result}
        if error:
            block["is_error"] = True
        self.user([block], len(result), toolUseResult=use_result)

    def read(self, file: str) -> None:
        size = self.sizes.setdefault(file, synth.lognormal_size(self.rng, 9_000, 0.7, 2_500, 40_000))
        content = synth.file_content(file, self.versions.get(file, 0), size)
        lines = content.split("\n")
        shown = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, start=1))
        self.tool("Read", {"file_path": _path(file)}, shown,
                  {"type": "text", "file": {"filePath": _path(file), "numLines": len(lines), "startLine": 1,
                                            "totalLines": len(lines)}})

    def edit(self, file: str) -> None:
        content = synth.file_content(file, self.versions.get(file, 0), self.sizes.get(file, 6_000))
        at = self.rng.randint(0, max(0, len(content) - 300))
        old = content[at:at + self.rng.randint(60, 300)]
        new = old + "\n" + synth.file_content(file, self.rng.randint(100, 10**6), self.rng.randint(80, 500))
        self.versions[file] = self.versions.get(file, 0) + 1
        path = _path(file)
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                  f"The file {path} has been updated successfully.",
                  {"filePath": path, "replaceAll": False})

    def bash(self, kind: str, failing: int = 0) -> None:
        rng = self.rng
        size = synth.lognormal_size(rng, 5_000, 0.8, 800, 30_000)
        if kind == "test":
            command, out = "pnpm test --run", synth.vitest_output(rng, list(FILES), size, failing=failing)
        elif kind == "tsc":
            command, out = "pnpm tsc --noEmit", synth.type_check(rng, list(FILES), size)
        elif kind == "git":
            command, out = "git status && git diff", synth.git_output(rng, list(FILES), size)
        else:
            command, out = "pnpm build", synth.build_log(rng, size)
        failed = kind == "tsc" or bool(failing)
        result = f"Exit code 1\n{out}" if failed else out
        self.tool("Bash", {"command": command, "description": f"Run {command.split()[1]}"}, result,
                  {"stderr": "", "interrupted": False, "isImage": False}, error=failed)

    def grep(self, focus: str) -> None:
        rng = self.rng
        hits = [_path(f) for f in rng.sample(FILES, k=rng.randint(2, 9))]
        word = synth.camel(rng.choice(synth.VERBS), rng.choice(synth.NOUNS))
        self.tool("Grep", {"pattern": word, "path": CWD, "output_mode": "files_with_matches"},
                  f"Found {len(hits)} files\n" + "\n".join(hits),
                  {"mode": "files_with_matches", "filenames": hits, "numFiles": len(hits)})

    def todo(self, items: list[str]) -> None:
        todos = [{"content": t, "status": "in_progress" if i == 0 else "pending", "activeForm": t} for i, t in
                 enumerate(items)]
        self.tool("TodoWrite", {"todos": todos},
                  "Todos have been modified successfully. Ensure that you continue to use the todo list to track "
                  "your progress. Please proceed with the current tasks if applicable",
                  {"oldTodos": [], "newTodos": todos})

    def say(self, text: str) -> None:
        self.call([{"type": "text", "text": text}])


def _summary(requests: list[str], decisions: list[str], files: list[str]) -> str:
    """Claude Code's nine-section summary of what the session did so far (its compact prompt's sections)."""
    lines = ["This session is being continued from a previous conversation that ran out of context. The summary "
             "below covers the earlier portion of the conversation.", "", "Summary:",
             "1. Primary Request and Intent:", *(f"   - {r}" for r in requests),
             "", "2. Key Technical Concepts:", "   - pnpm workspace, vitest, TanStack Query, zod validation",
             "", "3. Files and Code Sections:", *(f"   - {_path(f)}" for f in files),
             "", "4. Errors and fixes:", "   - Type errors from `pnpm tsc --noEmit` fixed in the edited files",
             "", "5. Problem Solving:", "   - Failing tests traced to the changed modules and fixed",
             "", "6. All user messages:", *(f"   - {d}" for d in decisions),
             "", "7. Pending Tasks:", f"   - {requests[-1]}",
             "", "8. Current Work:", f"   - Working on {_path(files[-1])}",
             "", "9. Optional Next Step:", "   - Run the tests again and report the result."]
    return "\n".join(lines)


def claude_code_log(seed: int, *, turns_after: int = 2, start: str = "2026-05-06T09:00:00Z") -> str:
    """A Claude Code session log as JSONL text: requests with Read/Edit/Grep/Bash steps until one automatic
    compaction, then ``turns_after`` more requests, ending below the threshold."""
    log = _Log(seed, start)
    rng = log.rng
    requests: list[str] = []
    decisions: list[str] = []
    touched: list[str] = []
    after = None
    turn = 0
    while after is None or turn < after + turns_after:
        request, hints = rng.choice(ASKS)
        focus = rng.choice([f for f in FILES if any(h in f for h in hints)])
        said = [request.format(f=_path(focus).removeprefix(CWD + "/"))]
        if turn == 0 or rng.random() < 0.3:
            said += rng.sample(DECISIONS, k=1) + (rng.sample(CONSTRAINTS, k=1) if rng.random() < 0.5 else [])
        if turn and rng.random() < 0.5:
            said.insert(0, rng.choice(FOLLOW_UPS))
        text = " ".join(said)
        requests.append(said[-1] if len(said) == 1 else request.format(f=_path(focus)))
        decisions += [s for s in said if s in DECISIONS or s in CONSTRAINTS]
        log.user(text, len(text))
        steps = ["read", "read", "grep", "edit", "bash-test", "edit", "bash-tsc", "read", "bash-test"]
        if turn == 0:
            steps.insert(0, "todo")
        for step in steps[: rng.randint(4, len(steps))]:
            measure = log.trigger_reached()
            if measure is not None and after is None:
                log.compact(measure, _summary(requests, decisions, touched[-6:] or [focus]))
                after = turn
            file = focus if rng.random() < 0.6 else rng.choice(FILES)
            if step == "read":
                log.read(file)
                touched.append(file)
            elif step == "edit":
                log.edit(file)
            elif step == "grep":
                log.grep(file)
            elif step == "todo":
                log.todo([request.format(f=focus.rsplit("/", 1)[-1]), "Run the tests", "Fix the type errors"])
            else:
                log.bash(step.removeprefix("bash-"), failing=rng.randint(0, 2) if step == "bash-test" else 0)
        log.say(f"Done: {request.format(f=_path(focus))} " + synth.sentence(rng, 2))
        turn += 1
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in log.records) + "\n"


@dataclass(frozen=True)
class AgentLogSample:
    """One file in ``sample_histories/`` written in an agent's own log format (``SAMPLES`` are canonical JSONL)."""

    name: str
    seed: int
    why: str
    format: str = "Claude Code JSONL"

    def text(self) -> str:
        return claude_code_log(self.seed)

    def history_and_text(self) -> tuple[History, str]:
        from workbench.history.readers.claude_code import parse_claude_code

        text = self.text()
        return parse_claude_code(text, source=f"{self.name}.jsonl"), text


AGENT_LOG_SAMPLES: tuple[AgentLogSample, ...] = (
    AgentLogSample("claude_code", 20260506,
                   "a Claude Code session log with its billed usage per call and one automatic compaction: "
                   "`workbench reality`, the Reality tab and notebook 06 without ../shared"),
)
