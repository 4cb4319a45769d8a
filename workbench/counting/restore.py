"""What Claude Code puts back into its context right after a compaction, worked out from the transcript.

Read from the bundles of @anthropic-ai/claude-code 2.1.1-2.1.39 (minified cli.js; 2.1.25 names in brackets) and
the 2.1.88 source map (compact.ts, attachments.ts):

- **Files** (``createPostCompactFileAttachments`` [wR2]): the entries of ``readFileState`` sorted by timestamp,
  newest first, the first 5 re-read whole (no offset or limit) with ``maxTokens`` 5,000 in "compact" mode
  [zu6], kept while the running total stays within 50,000 (``POST_COMPACT_*`` [sL2=5, tL2=50000, eL2=5000]).
  The timestamp the Read, Edit and Write tools store is the file's **mtime** (``Math.floor(statSync(path)
  .mtimeMs)`` [Kj]), so the newest entries are the files the session last modified; a file it only read sorts
  below them (its mtime predates the session; the log gives no order among such files, so the latest read
  comes first). A file over 5,000 tokens is not restored: a one-line ``compact_file_reference`` note stands in
  for it. ``readFileState`` is cleared at each compaction and refilled by the restore (the files re-read
  whole). Plan files and CLAUDE.md / memory files are left out. The attachment is the tool call and its
  result as the Read tool formats them (line-numbered, as the transcript's Read results show them).
- **Skills** invoked with the Skill tool (``invoked_skills`` [JR2]; its whole content in these versions), the
  **todo list** when not empty (``todo`` [HR2]) and the **plan file** (``plan_file_reference`` [Ou6]): one the
  session wrote, or the plan it started from (a plan approved with "clear context" starts a new session whose first
  message logs it as ``planContent``, 2.1.39 cli.js; its plan file goes on).

None of it is logged. A read's size comes from its result; a range read is scaled to the whole file by the
line counts Claude Code logs with it (``toolUseResult.file.totalLines``, kept by the reader as the tool
message's ``readLines``); a write gives the content (``counting.restore_files``). With the log's bill, a read
counts what the provider billed for it, a write what its call's input was billed; else tokens are counted like
the rest of the context: the trigger counter times ``token_ratio``. A resumed session (the reader marks where its ``SessionStart:resume`` hook ran)
rebuilds ``readFileState`` from the transcript's whole reads and writes only (2.1.25 [H9A]). Pure; no I/O.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.counting.restore_files import (
    Counts,
    _billed_input,
    _billed_message,
    _billed_part,
    _Counter,
    _File,
    _read,
    edit_growth,
)
from workbench.counting.tokens import CountCache

RESTORE_BUDGET_TOKENS = 50_000
READ_TOOLS = frozenset({"Read", "read_file", "view", "read"})
WRITE_TOOLS = frozenset({"Write", "write_file", "create_file"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "edit_file", "str_replace", "NotebookEdit"})
SKILL_TOOLS = frozenset({"Skill"})
TODO_TOOLS = frozenset({"TodoWrite"})
_TOOL_TYPES = ("tool-", "dynamic-tool")  # the part types Part.kind calls "tool" or "tool-result"
_EXCLUDED_NAMES = ("CLAUDE.md", "CLAUDE.local.md")
_EXCLUDED_PARTS = ("/.claude/plans/", "/.claude/memory", "/memory/")
_PLAN_PART = "/.claude/plans/"
# The bundles' attachment texts (2.1.25 cli.js, the attachment-to-message switch; the Read tool's in counting.attachments).
_REFERENCE = ("Note: {path} was read before the last conversation was summarized, but the contents are too "
              "large to include. Use Read tool if you need to access it.")
_SKILLS = "The following skills were invoked in this session. Continue to follow these guidelines:\n\n"
_TODO = ("Your todo list has changed. DO NOT mention this explicitly to the user. Here are the latest contents of "
         "your todo list:\n\n{todos}. Continue on with the tasks at hand if applicable.")
# Where a session that starts from an approved plan keeps it (2.1.39 cli.js): accepting a plan with "clear context"
# starts the session with ``Implement the following plan:`` and ``planContent`` and gives it the old session's slug
# (``Q01()`` kept, then ``P0A(p6(), slug)``), and the plan file is ``<plans folder>/<slug>.md`` (``mW``), the folder
# ``join(H8(), "plans")`` (``nM``; ``H8``: $CLAUDE_CONFIG_DIR, else ``~/.claude``; a ``plansDirectory`` setting moves
# it). The log records the slug on that message (``planSlug``, as the reader keeps it; the large set's later sessions
# read ``/Users/<name>/.claude/plans/<that slug>.md``), not the home folder nor the settings: ``~`` stands for the
# home, a few tokens short of the absolute path the attachment names. Without a slug, the folder alone.
_PLANS_FOLDER = "~/.claude/plans/"
_PLAN = ("A plan file exists from plan mode at: {path}\n\nPlan contents:\n\n{content}\n\nIf this plan is relevant "
         "to the current work and not already complete, continue working on it.")


def _path_of(data: dict[str, Any]) -> str | None:
    value = data.get("input")
    if isinstance(value, dict):
        for key in ("file_path", "path", "notebook_path", "filePath"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def _excluded(path: str) -> bool:
    return path.endswith(_EXCLUDED_NAMES) or any(p in path for p in _EXCLUDED_PARTS)


@dataclass(frozen=True)
class Restored:
    """One thing the agent re-attaches: a file (whole or as a reference note), a skill, the todo list, the plan."""

    kind: str  # "file", "reference", "skill", "todo", "plan"
    name: str  # the file's path, the skill's name
    tokens: int


def restored_items(
    messages: Sequence[Any], *, files: int, per_file_tokens: int, chars_per_token: float = 4.0,
    counter: str = "estimate", token_ratio: float = 1.0, cache: CountCache | None = None,
    billed: Counts | None = None,
) -> tuple[Restored, ...]:
    """Everything Claude Code re-attaches after compacting at the end of ``messages``: files newest first
    (whole, or a reference note for one over ``per_file_tokens``), then skills, the todo list and the plan.

    ``billed``: per message of the log (``messages`` is a start of it), what the provider billed for it (the billed
    counter's counts): a file read is then sized by what its reads were billed, a skill by its messages' bill, and
    the counter counts only the rest (a written file, the notes, the todo list, the plan). With a ``cache``, the
    walk of the log is kept and resumed: the restores of a log's compactions (each at the end of a longer prefix of
    the same messages) walk it once in all, not once per compaction."""
    if files <= 0:
        return ()
    if cache is None:
        walk = _Walk(_Counter(counter, token_ratio, chars_per_token, None, billed), files, per_file_tokens)
    else:
        walk = _resumable(cache, messages, (counter, token_ratio, chars_per_token, files, per_file_tokens),
                          billed)
    walk.advance(messages)
    return walk.result()


_WALKS_KEPT = 4  # walks kept per parameter set (a run interleaves a few logs at most)
_PARAMS_KEPT = 8  # parameter sets whose walks are kept


def _resumable(cache: CountCache, messages: Sequence[Any], params: tuple[Any, ...],
               billed: Counts | None = None) -> _Walk:
    """The cache's walk whose messages so far are the same objects as the start of ``messages`` (the longest),
    or a new one. A walk with ``billed`` counts keeps them (so their identity keys it: no other array can take
    it while the walk is kept)."""
    params = (*params, None if billed is None else id(billed))
    walks: list[_Walk] | None = cache.restore_walks.get(params)
    if walks is None:
        if len(cache.restore_walks) >= _PARAMS_KEPT:  # a long app session tries many knob sets: keep the last few
            cache.restore_walks.pop(next(iter(cache.restore_walks)))
        walks = cache.restore_walks[params] = []
    best = None
    for walk in walks:
        seen = walk.seen
        if (len(seen) <= len(messages) and (best is None or len(seen) > len(best.seen))
                and all(map(operator.is_, seen, messages))):
            best = walk
    if best is None:
        counter, token_ratio, chars_per_token, files, per_file_tokens, _ = params
        best = _Walk(_Counter(counter, token_ratio, chars_per_token, cache, billed), files, per_file_tokens)
        if len(walks) >= _WALKS_KEPT:
            walks.pop(0)
        walks.append(best)
    return best


_NO_METADATA: Any = {}.get  # the metadata view of a message without any


class _Walk:
    """What the transcript has told so far, message by message: the files, readFileState, skills, todo list and
    plan. ``result`` is the restore at the end of the messages walked; it changes nothing, so a walk goes on."""

    def __init__(self, count: _Counter, files: int, per_file_tokens: int) -> None:
        self.count, self.files, self.per_file_tokens = count, files, per_file_tokens
        self.seen: list[Any] = []  # the messages walked (their objects: a resumed walk must be over the same)
        self.known: dict[str, _File] = {}
        self.state: set[str] = set()  # readFileState's paths
        self.pending: dict[str, str] = {}  # call id -> path of a Read waiting for its result
        self.edits: dict[str, tuple[str, int]] = {}  # call id -> path and chars added of an Edit waiting for its result
        self.skills: dict[str, int] = {}
        self.skill_call: str | None = None  # the skill a Skill call just started: its messages follow
        self.todo: int | None = None
        self.plan: tuple[str, str] | None = None
        self.order = 0
        self.compacted = 0  # order at the last compaction: a resumed session rebuilds its state from after it

    def advance(self, messages: Sequence[Any], end: int | None = None) -> None:
        """Walk the messages past those already walked, up to ``end`` (``messages`` starts with them); only the new
        messages are read, so following a growing prefix costs each message once."""
        start = len(self.seen)
        end = len(messages) if end is None else end
        if start >= end:
            return
        self.seen.extend(messages[start:end])
        count, known, pending, skills = self.count, self.known, self.pending, self.skills
        files, per_file_tokens = self.files, self.per_file_tokens
        state, skill_call, todo, plan, order = self.state, self.skill_call, self.todo, self.plan, self.order
        billed = count.billed
        for i in range(start, end):
            msg = messages[i]
            role = msg.role
            md = msg.metadata
            meta = md.get if isinstance(md, dict) else _NO_METADATA  # msg.meta, its test made once a message
            if meta("resumed") is True:
                state = self._resumed()
                skills.clear()
            approved = meta("planContent")
            if isinstance(approved, str) and approved:  # a plan approved with "clear context": its file goes on
                slug = meta("planSlug")
                plan_file = _PLANS_FOLDER + (f"{slug}.md" if isinstance(slug, str) and slug else "")
                plan = (plan[0] if plan is not None else plan_file, approved)
            if meta("isCompactSummary"):
                state = {r.name for r in _pick(known, state, files, per_file_tokens, count) if r.kind == "file"}
                for kept in state:  # re-read: stored with its mtime again
                    known[kept].resumed_at = 0
                self.compacted = order
                continue
            if role == "assistant" or (role == "user" and not meta("isMeta")):
                skill_call = None  # the Skill tool's messages follow its result directly, marked isMeta
            elif role == "user" and skill_call is not None:
                size = _billed_message(billed, i)
                if size is None:
                    size = count(msg.text, ("skill", count.key(msg)))
                skills[skill_call] = skills.get(skill_call, 0) + size
            for j, part in enumerate(msg.parts or ()):
                data = part.data
                if not isinstance(data, dict):
                    continue
                kind = data.get("type")
                if not (isinstance(kind, str) and kind.startswith(_TOOL_TYPES)):  # Part.kind, for text parts quickly
                    continue
                kind = part.kind
                if kind == "tool":
                    name = part.tool_name or ""
                    args: dict[str, Any] = data["input"] if isinstance(data.get("input"), dict) else {}
                    if name in SKILL_TOOLS:
                        skill_call = str(args.get("skill") or args.get("command") or part.tool_call_id or "skill")
                        skills.pop(skill_call, None)  # invoked again: its content is replaced
                        continue
                    if name in TODO_TOOLS:
                        todos = args.get("todos")
                        todo = (count(_TODO.format(todos=json.dumps(todos)), ("todo", count.key(msg), j)) if todos
                                else None)
                        continue
                    path = _path_of(data)
                    if path is None:
                        continue
                    if _PLAN_PART in path and name in WRITE_TOOLS and isinstance(args.get("content"), str):
                        plan = (path, args["content"])
                    if _excluded(path):
                        continue
                    order += 1
                    file = known.get(path) or known.setdefault(path, _File(path))
                    file.resumed_at = 0  # used again: stored with its mtime
                    if name in WRITE_TOOLS:
                        content = args.get("content") if isinstance(args.get("content"), str) else ""
                        file.whole, file.ranges = (content, ("write", path, count.key(msg), j), True,
                                                   _billed_input(billed, i, msg, j)), []
                        file.grown = 0
                        file.modified = file.whole_at = order
                        state.add(path)
                    elif name in EDIT_TOOLS:
                        file.modified = order
                        if part.tool_call_id:  # its growth counts once its result says it was made
                            self.edits[part.tool_call_id] = (path, edit_growth(name, args))
                        state.add(path)
                    elif name in READ_TOOLS:
                        if args.get("offset") is None and args.get("limit") is None:
                            file.whole_at = order
                        if "output" in data:  # the result sits in the call (AI SDK shape)
                            _read(file, data["output"], None, (count.key(msg), j), path, None)
                            file.read = order
                            state.add(path)
                        elif part.tool_call_id:
                            pending[part.tool_call_id] = path
                            file.read = order
                elif kind == "tool-result" and part.tool_call_id in self.edits:
                    path, growth = self.edits.pop(part.tool_call_id or "")
                    if not data.get("isError"):
                        known[path].grown += growth
                elif kind == "tool-result" and part.tool_call_id in pending:
                    path = pending.pop(part.tool_call_id or "")
                    if data.get("isError"):  # the read failed: the tool stored nothing
                        continue
                    _read(known[path], data.get("output"), msg.meta("readLines"), (count.key(msg), j), path,
                          _billed_part(billed, i, msg, j))
                    state.add(path)
        self.state, self.skill_call, self.todo, self.plan, self.order = state, skill_call, todo, plan, order

    def _resumed(self) -> set[str]:
        """readFileState when the session is resumed (the process started again on the same transcript): rebuilt
        from the conversation since the last compaction, only its whole reads and writes, each stamped with its
        message's time, which puts it among the files changed then (2.1.25 cli.js ``H9A``, called as the REPL
        loads a resumed conversation); edits and range reads before it are gone."""
        state = {path for path, f in self.known.items() if f.whole_at > self.compacted}
        for path in state:
            self.known[path].resumed_at = self.known[path].whole_at
        return state

    def result(self) -> tuple[Restored, ...]:
        """The restore at the end of the messages walked so far."""
        count = self.count
        out = list(_pick(self.known, self.state, self.files, self.per_file_tokens, count))
        out += [Restored("skill", name, tokens) for name, tokens in self.skills.items() if tokens]
        if self.skills:
            out.append(Restored("skill", "", count(_SKILLS)))
        if self.todo:
            out.append(Restored("todo", "", self.todo))
        if self.plan is not None:
            out.append(Restored("plan", self.plan[0], count(_PLAN.format(path=self.plan[0], content=self.plan[1]))))
        return tuple(out)


def _pick(
    known: dict[str, _File], state: set[str], files: int, per_file_tokens: int, count: _Counter
) -> tuple[Restored, ...]:
    """The restore of the files in ``state``: newest mtime first, each whole or as a reference note."""
    newest = sorted(state, key=lambda p: known[p].stamp(), reverse=True)[:files]
    total = 0
    out = []
    for path in newest:
        size = known[path].tokens(count, per_file_tokens)
        if size is None:
            continue
        restored, fits = size
        item = (Restored("file", path, restored) if fits
                else Restored("reference", path, count(_REFERENCE.format(path=path))))
        if total + item.tokens > RESTORE_BUDGET_TOKENS:
            continue
        total += item.tokens
        out.append(item)
    return tuple(out)


def restore_args(knobs: Any) -> dict[str, Any]:
    """The restore's parameters from a knob set: how many files, the per-file limit, and how tokens are counted."""
    return {"files": knobs.restore_files, "per_file_tokens": knobs.restore_file_tokens,
            "chars_per_token": knobs.chars_per_token, "counter": knobs.trigger_counter,
            "token_ratio": knobs.token_ratio}


def compaction_restore(messages: Sequence[Any], knobs: Any, *, cache: CountCache | None = None,
                       billed: Counts | None = None) -> int:
    """Everything a replay adds to the context right after compacting at the end of ``messages``: the knobs'
    constant ``compaction_restore_tokens`` plus what the restore works out from the transcript (``billed``: the
    log's billed counts per message, ``restored_items``)."""
    return knobs.compaction_restore_tokens + restored_tokens(messages, **restore_args(knobs), cache=cache,
                                                             billed=billed)


class RunningRestore:
    """``compaction_restore`` at a replay's compactions, each at a later message of the same history: one walk of
    the transcript advanced as the replay goes (each message read once), never the history up to each compaction
    again (that made long replays quadratic). Nothing is walked when the knobs restore no file."""

    def __init__(self, messages: Sequence[Any], knobs: Any, *, cache: CountCache | None = None,
                 billed: Callable[[], Counts | None] | None = None) -> None:
        self.messages = messages
        self.constant = int(knobs.compaction_restore_tokens)
        self.args = restore_args(knobs)
        self.cache = cache
        self.billed = billed  # the log's billed counts, asked for at the first compaction (most replays have none)
        self.walk: _Walk | None = None
        self.end = 0

    def at(self, i: int) -> int:
        """What ``compaction_restore(messages[: i + 1], knobs, ...)`` gives; ``i`` never goes back."""
        if self.args["files"] <= 0:
            return self.constant
        if i + 1 < self.end:
            raise ValueError(f"the restore walk is past message {i}: it cannot go back")
        if self.walk is None:
            a = self.args
            billed = self.billed() if self.billed is not None else None
            self.walk = _Walk(_Counter(a["counter"], a["token_ratio"], a["chars_per_token"], self.cache, billed),
                              a["files"], a["per_file_tokens"])
        self.walk.advance(self.messages, i + 1)
        self.end = i + 1
        return self.constant + sum(r.tokens for r in self.walk.result())


def restored_tokens(
    messages: Sequence[Any], *, files: int, per_file_tokens: int, chars_per_token: float = 4.0,
    counter: str = "estimate", token_ratio: float = 1.0, cache: CountCache | None = None,
    billed: Counts | None = None,
) -> int:
    """Tokens Claude Code re-attaches after compacting at the end of ``messages`` (``restored_items``)."""
    return sum(r.tokens for r in restored_items(messages, files=files, per_file_tokens=per_file_tokens,
                                                 chars_per_token=chars_per_token, counter=counter,
                                                 token_ratio=token_ratio, cache=cache, billed=billed))


def restored_files(
    messages: Sequence[Any], *, files: int, per_file_tokens: int, chars_per_token: float = 4.0,
    counter: str = "estimate", token_ratio: float = 1.0, cache: CountCache | None = None,
) -> tuple[tuple[str, int], ...]:
    """The files (path, tokens) re-attached, newest first: whole, or by a reference note that names them."""
    return tuple((r.name, r.tokens) for r in restored_items(
        messages, files=files, per_file_tokens=per_file_tokens, chars_per_token=chars_per_token, counter=counter,
        token_ratio=token_ratio, cache=cache) if r.kind in ("file", "reference"))
