"""A seeded generator of realistic coding-agent sessions in stagewise's UIMessage shape.

A session alternates user turns (requests carrying decisions, constraints and ``[](path:w1/...)`` file
links) and assistant turns (steps of static tool parts: read, write, multiEdit, grepSearch, glob,
executeShellCommand, getLintingDiagnostics, askUserQuestions ...). Output sizes are lognormal, a few tool
calls fail (``output-error``), and every planted decision or constraint is listed in ``meta["facts"]``
so probes can ask whether a briefing kept it. Deterministic: one ``random.Random(seed)``, no global state.

``workbench samples --out sample_histories`` (``workbench/cli/samples.py``) rewrites the shipped samples byte
for byte.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from workbench.history.model import History, Message, Part
from workbench.history.samples import synth
from workbench.history.writers import write_canonical_jsonl

MOUNT = "w1"
FILES = tuple(f"{MOUNT}/{p}" for p in (
    "src/components/Header.tsx", "src/components/Sidebar.tsx", "src/components/TodoList.tsx",
    "src/components/SettingsPanel.tsx", "src/components/ThemeToggle.tsx", "src/components/DataTable.tsx",
    "src/components/Modal.tsx", "src/hooks/useSession.ts", "src/hooks/useTheme.ts", "src/hooks/usePagination.ts",
    "src/lib/api.ts", "src/lib/date.ts", "src/lib/retry.ts", "src/lib/cache.ts", "src/lib/logger.ts",
    "src/lib/validation.ts", "src/routes/index.tsx", "src/routes/settings.tsx", "src/routes/projects.tsx",
    "src/styles/globals.css", "src/styles/theme.css", "server/app/main.py", "server/app/auth.py",
    "server/app/models.py", "server/app/db.py", "server/app/routes_projects.py", "server/app/routes_users.py",
    "tests/api.test.ts", "tests/date.test.ts", "tests/retry.test.ts", "tests/session.test.ts",
    "server/tests/test_auth.py", "server/tests/test_projects.py", "docs/architecture.md", "README.md",
))
DECISIONS = (
    "Let's use zod for validation, not yup.", "Use pnpm for everything, never npm.",
    "Store the theme in localStorage under the key `app.theme`.", "Dates go over the wire as ISO strings in UTC.",
    "Retries back off exponentially: 200 ms, doubling, at most 5 attempts.", "Pagination is cursor-based, page size 50.",
    "Keep the session token in an httpOnly cookie, not in localStorage.", "Use CSS variables for colours, not Tailwind's dark: classes.",
    "Errors from the API are shown as toasts, never as alerts.", "The settings page is split into General, Billing and Members tabs.",
    "Use TanStack Query for server state; no new Redux slices.", "Feature flags live in `src/lib/flags.ts`, read once at startup.",
)
CONSTRAINTS = (
    "Don't change the public API of `formatDate`.", "No new runtime dependencies without asking me.",
    "The bundle must stay under 250 KB gzipped.", "It has to keep working on Node 18.",
    "Don't touch the migrations in server/alembic.", "Every new function needs a test.",
    "Keep the README in sync when you change scripts in package.json.", "The API must stay backwards compatible for mobile 3.x.",
)
# (request, substrings a fitting first file has): "dark mode" goes to a component, not to the README
ASKS = (("Add dark mode to {f}.", (".tsx", "theme.css")),
        ("Make the table in {f} sortable by every column.", ("DataTable.tsx",)),
        ("Add a retry with backoff to the fetch in {f}.", ("src/lib/api.ts", "src/lib/retry.ts")),
        ("The login redirect loops when the session expires; fix it. Start from {f}.", ("useSession", "auth.py")),
        ("Split {f}, it's getting too long.", ("src/",)),
        ("Add pagination to the projects list; the endpoint is in {f}.", ("routes_projects.py", "projects.tsx")),
        ("Write tests for the edge cases in {f}.", ("src/lib/", "src/hooks/")),
        ("Rename `fetchUser` to `loadUser` everywhere, starting with {f}.", ("src/lib/api.ts", "routes_users.py")),
        ("Add input validation to the form in {f}.", ("SettingsPanel.tsx", "validation.ts")),
        ("The CI build fails on main; the log points at {f}.", ("tests/", "src/")),
        ("Make {f} accessible: labels, focus order, aria attributes.", (".tsx",)))
QUESTIONS = (("How does {f} decide when to refresh the token?", ("useSession", "auth.py", "api.ts")),
             ("Why is {f} rendering twice on mount?", (".tsx",)),
             ("What calls into {f}? I want to know what breaks if I change it.", ("src/lib/", "server/app/")),
             ("Is the cache in {f} safe across tabs?", ("cache.ts", "useSession", "api.ts")),
             ("Can you explain the error handling in {f}?", ("api.ts", "retry.ts", "main.py", "auth.py")))
FOLLOW_UPS = ("That works, thanks.", "Looks good. Next thing:", "Close, but the spacing is off on mobile.",
              "Tests pass locally now.", "Hmm, CI still fails.", "Great, ship it.", "Revert the last change, please.")
PACKAGES = ("zod", "date-fns", "@tanstack/react-query", "clsx", "msw", "vitest", "@testing-library/react")
_B62 = string.ascii_letters + string.digits


@dataclass
class _Turn:
    kind: str
    tools: int


def _iso(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _link(path: str) -> str:
    return f"[](path:{path})"


class _Session:
    """The running state of one generated session: clock, file versions, ids, planted facts."""

    def __init__(self, seed: int, *, tool_heavy: float, error_rate: float, start_ms: int) -> None:
        self.rng = random.Random(seed)
        self.h = tool_heavy
        self.scale = 0.4 + tool_heavy  # tool-heavy sessions read bigger files and run longer commands
        self.error_rate = error_rate
        self.clock = start_ms
        self.versions: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        self.messages: list[Message] = []
        self.facts: list[dict[str, Any]] = []
        self.told: list[str] = []

    # -- small helpers ----------------------------------------------------------------------------
    def uuid(self) -> str:
        x = f"{self.rng.getrandbits(128):032x}"
        return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-{'89ab'[int(x[16], 16) % 4]}{x[17:20]}-{x[20:]}"

    def call_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choice(_B62) for _ in range(22))

    def tick(self, median_s: float, sigma: float = 0.8) -> int:
        self.clock += int(self.rng.lognormvariate(0, sigma) * median_s * 1000) + 1
        return self.clock

    def file_size(self, path: str) -> int:
        if path not in self.sizes:  # a file keeps its size class across reads: big files stay big
            self.sizes[path] = synth.lognormal_size(self.rng, 5000 * self.scale, 0.8, 2000, 40000)
        return self.sizes[path]

    def content(self, path: str) -> str:
        return synth.file_content(path, self.versions.get(path, 0), self.file_size(path))

    def fact(self, kind: str, text: str) -> None:
        self.facts.append({"index": len(self.messages), "kind": kind, "text": text})

    # -- turns ------------------------------------------------------------------------------------
    def plan(self, first: bool) -> _Turn:
        h, rng = self.h, self.rng
        weights = {"question": (1 - h) * 0.35, "quick": 0.25, "edit": 0.2 + 0.1 * h, "feature": 0.1 + 0.25 * h,
                   "debug": 0.08 + 0.2 * h, "ask": 0.06}
        kind = "feature" if first else rng.choices(list(weights), weights=list(weights.values()))[0]
        low, high = {"question": (0, 1), "quick": (1, 2), "edit": (2, 5), "feature": (5, 14), "debug": (4, 10),
                     "ask": (2, 4)}[kind]
        tools = rng.randint(low, high) * (0.5 + h)
        return _Turn(kind, max(1, round(tools)) if kind != "question" else round(tools))

    def user_turn(self, turn: _Turn, first: bool) -> list[str]:
        rng = self.rng
        request, hints = rng.choice(QUESTIONS if turn.kind == "question" else ASKS)
        first_file = rng.choice([f for f in FILES if any(h in f for h in hints)])
        focus = [first_file, *rng.sample([f for f in FILES if f != first_file], k=rng.randint(0, 2))]
        lines = [] if first else [rng.choice(FOLLOW_UPS)] if rng.random() < 0.5 else []
        lines.append(request.format(f=_link(first_file)))
        if len(focus) > 1:
            lines.append("Related: " + ", ".join(_link(f) for f in focus[1:]) + ".")
        if first or rng.random() < 0.18:
            for text in rng.sample(DECISIONS, k=2 if first else 1):
                lines.append(text)
                self.fact("decision", text)
        if first or rng.random() < 0.12:
            for text in rng.sample(CONSTRAINTS, k=2 if first else 1):
                lines.append(text)
                self.fact("constraint", text)
        if self.told and rng.random() < 0.06:
            lines.append(f"Reminder from earlier: {rng.choice(self.told)}")
        self.told.extend(f["text"] for f in self.facts if f["index"] == len(self.messages))
        for f in focus:
            self.fact("file", f)
        mentions = [{"providerType": "file", "mountedPath": "/workspace/app", "relativePath": f.removeprefix(f"{MOUNT}/"),
                     "mountPrefix": MOUNT, "fileName": f.rsplit("/", 1)[-1]} for f in focus]
        at = self.tick(240 if rng.random() > 0.04 else 40000, 1.1)
        self.messages.append(Message(
            id=self.uuid(), role="user", parts=(Part(data={"type": "text", "text": "\n".join(lines)}),),
            metadata={"createdAt": _iso(at), "partsMetadata": [], "mentions": mentions}))
        return focus

    def assistant_turn(self, turn: _Turn, focus: list[str]) -> None:
        rng = self.rng
        created = self.tick(2)
        parts: list[dict[str, Any]] = []
        timing: list[Any] = []

        def add(part: dict[str, Any], timed: bool) -> None:
            parts.append(part)
            if timed:
                start = self.tick(1)
                timing.append({"startedAt": _iso(start), "endedAt": _iso(self.tick(3))})
            else:
                timing.append(None)  # stagewise leaves holes at non-text, non-reasoning parts

        for step in range(turn.tools):
            add({"type": "step-start"}, False)
            if rng.random() < 0.35 * (1 - self.h / 2):
                add({"type": "reasoning", "text": synth.sentence(rng, rng.randint(1, 4)), "state": "done"}, True)
            if rng.random() < 0.3 * (1 - self.h / 2):
                add({"type": "text", "text": f"Let me check {_link(rng.choice(focus))}. " + synth.sentence(rng),
                     "state": "done"}, True)
            add(self.tool_part(turn, focus, step), False)
            self.tick(4, 1.0)
        add({"type": "step-start"}, False)
        add({"type": "text", "text": self.summary(turn, focus), "state": "done"}, True)
        self.messages.append(Message(
            id=self.uuid(), role="assistant", parts=tuple(Part(data=p) for p in parts),
            metadata={"createdAt": _iso(created), "partsMetadata": timing}))

    def summary(self, turn: _Turn, focus: list[str]) -> str:
        rng = self.rng
        if turn.kind == "question":
            body = [synth.sentence(rng, rng.randint(3, 10)) for _ in range(rng.randint(1, 4))]
            if rng.random() < 0.5:
                lang = {"py": "python", "css": "css", "md": "markdown"}.get(focus[0].rsplit(".", 1)[-1], "ts")
                code = synth.file_content(focus[0], rng.randint(0, 99), rng.randint(200, 900))
                body.append(f"```{lang}\n{code}```")
            return "\n\n".join(body)
        bullets = [f"- {_link(f)}: {synth.sentence(rng)}" for f in focus]
        return ("Done. Changes:\n" + "\n".join(bullets) + "\n\n" + synth.sentence(rng, rng.randint(1, 3)) +
                f"\n\nRan `pnpm test`: {rng.randint(40, 400)} tests pass.")

    # -- tool parts -------------------------------------------------------------------------------
    def tool_part(self, turn: _Turn, focus: list[str], step: int) -> dict[str, Any]:
        rng = self.rng
        menu = {"question": ("read", "grepSearch"), "quick": ("read", "grepSearch", "glob", "ls"),
                "edit": ("read", "multiEdit", "getLintingDiagnostics"),
                "feature": ("read", "read", "grepSearch", "glob", "write", "multiEdit", "multiEdit",
                            "getLintingDiagnostics", "executeShellCommand", "executeShellCommand"),
                "debug": ("executeShellCommand", "executeShellCommand", "read", "grepSearch", "multiEdit"),
                "ask": ("read", "multiEdit")}[turn.kind]
        name = "askUserQuestions" if turn.kind == "ask" and step == 0 else rng.choice(menu)
        if name in ("write", "multiEdit") and rng.random() < self.h * 0.6:  # heavy sessions investigate more
            name = rng.choice(("read", "executeShellCommand", "grepSearch"))
        path = rng.choice(focus) if rng.random() < 0.7 else rng.choice(FILES)
        tool_input, output = getattr(self, f"_{name}")(path, turn)
        part: dict[str, Any] = {"type": f"tool-{name}", "toolCallId": self.call_id()}
        if name != "askUserQuestions" and rng.random() < self.error_rate:
            part.update(state="output-error", input=tool_input, errorText=self._error(name, path))
        else:
            part.update(state="output-available", input=tool_input, output=output)
        return part

    def _error(self, name: str, path: str) -> str:
        return self.rng.choice({
            "read": (f"ENOENT: no such file or directory, open '{path}'",),
            "multiEdit": (f"old_string not found in {path}. Make sure it matches exactly, including whitespace.",
                          f"Found 3 matches of old_string in {path}; set replace_all or add more context."),
            "executeShellCommand": ("Command timed out after 120000 ms", "Tool execution aborted by user"),
        }.get(name, ("Tool execution aborted by user", f"Permission denied: {path}")))

    def _read(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:
        text = self.content(path)
        lines = text.count("\n") + 1
        tool_input: dict[str, Any] = {"path": path}
        if lines > 400 and self.rng.random() < 0.4:  # a long file read in a window
            start = self.rng.randint(1, lines - 200)
            tool_input.update(start_line=start, end_line=start + 199)
            text = "\n".join(text.split("\n")[start - 1:start + 199])
        return tool_input, {"message": f"Read {text.count(chr(10)) + 1} lines", "content": text}

    def _write(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:
        existed = path in self.versions
        self.versions[path] = self.versions.get(path, 0) + 1
        size = synth.lognormal_size(self.rng, 3000, 0.7, 400, 12000)
        verb = "updated" if existed else "created"
        return ({"path": path, "content": synth.file_content(path, self.versions[path], size)},
                {"message": f"Successfully {verb} file: {path}"})

    def _multiEdit(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:  # noqa: N802 (the tool's name)
        rng = self.rng
        text = self.content(path)
        edits = []
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, max(0, len(text) - 400))
            old = text[at:at + rng.randint(60, 400)]
            new = old.replace(rng.choice(synth.NOUNS), rng.choice(synth.NOUNS)) + "\n" + synth.file_content(
                path, rng.randint(100, 10**6), rng.randint(50, 600))
            edits.append({"old_string": old, "new_string": new})
        self.versions[path] = self.versions.get(path, 0) + 1
        return {"path": path, "edits": edits}, {"message": f"Successfully applied {len(edits)} edits to {path}"}

    def _grepSearch(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:  # noqa: N802
        rng = self.rng
        query = synth.camel(rng.choice(synth.VERBS), rng.choice(synth.NOUNS))
        matches = []
        for f in rng.sample(FILES, k=rng.randint(1, 12)):
            for line in self.content(f).split("\n")[: rng.randint(1, 4)]:
                matches.append({"path": f, "line": rng.randint(1, 400), "preview": line[:160]})
        return ({"mount_prefix": MOUNT, "query": query, "include_file_pattern": "**/*.{ts,tsx,py}"},
                {"message": "Found matches", "result": {"totalMatches": len(matches), "filesSearched": rng.randint(80, 900),
                                                        "matches": matches, "truncated": len(matches) > 30}})

    def _glob(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:
        folder = path.rsplit("/", 1)[0]
        found = [f for f in FILES if f.startswith(folder)]
        return {"mount_prefix": MOUNT, "pattern": folder.removeprefix(f"{MOUNT}/") + "/**/*"}, {
            "message": f"Found {len(found)} files", "files": found}

    def _ls(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:
        folder = path.rsplit("/", 1)[0]
        entries = [{"name": f.rsplit("/", 1)[-1], "type": "file", "size": self.file_size(f)} for f in FILES
                   if f.rsplit("/", 1)[0] == folder]
        return {"path": folder}, {"message": f"{len(entries)} entries", "entries": entries}

    def _getLintingDiagnostics(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:  # noqa: N802
        rng = self.rng
        issues = [] if rng.random() < 0.5 else [
            {"line": rng.randint(1, 300), "column": rng.randint(1, 40), "severity": rng.choice(("error", "warning")),
             "message": rng.choice(("'x' is assigned a value but never used.", "Missing return type on function.",
                                    "React Hook useEffect has a missing dependency.", "Unexpected any.")),
             "source": "eslint"} for _ in range(rng.randint(1, 4))]
        errors = sum(1 for i in issues if i["severity"] == "error")
        return {"paths": [path]}, {
            "message": "No issues found" if not issues else f"{len(issues)} issues",
            "files": [{"path": path, "diagnostics": issues}] if issues else [],
            "summary": {"totalFiles": 1, "totalIssues": len(issues), "errors": errors,
                        "warnings": len(issues) - errors, "infos": 0, "hints": 0}}

    def _executeShellCommand(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:  # noqa: N802
        rng = self.rng
        size = synth.lognormal_size(rng, 1200 * self.scale, 1.1, 200, 20000)
        kind = rng.choice(("test", "test", "tsc", "git", "build", "install"))
        failing = rng.randint(1, 3) if turn.kind == "debug" and rng.random() < 0.6 else 0
        if kind == "test":
            command, out, code = "pnpm test --run", synth.vitest_output(rng, list(FILES), size, failing=failing), int(bool(failing))
        elif kind == "tsc":
            command, out, code = "pnpm tsc --noEmit", synth.type_check(rng, list(FILES), size), 2
        elif kind == "git":
            command, out, code = "git status && git diff", synth.git_output(rng, list(FILES), size), 0
        elif kind == "build":
            command, out, code = "pnpm build", synth.build_log(rng, size), 0
        else:
            package = rng.choice(PACKAGES)
            command, out, code = f"pnpm add {package}", synth.install_log(rng, package), 0
        return ({"explanation": f"Run `{command}` to check the change", "command": command},
                {"session_id": f"s{rng.randint(1, 9)}", "output": out, "exit_code": code, "session_exited": False,
                 "timed_out": False})

    def _askUserQuestions(self, path: str, turn: _Turn) -> tuple[dict[str, Any], Any]:  # noqa: N802
        rng = self.rng
        choice = rng.choice(DECISIONS)
        self.fact("answer", choice)
        return ({"title": "A few decisions before I start", "steps": [{"fields": [
                    {"questionId": "q1", "label": "Which approach should I take?", "type": "radio-group",
                     "options": [{"value": "a", "label": choice}, {"value": "b", "label": rng.choice(DECISIONS)}]},
                    {"questionId": "q2", "label": "Anything else I should know?", "type": "text"}]}]},
                {"completed": True, "cancelled": False, "answers": {"q1": "a", "q2": rng.choice(FOLLOW_UPS)},
                 "completedSteps": 1})


def generate_session(
    seed: int,
    *,
    turns: int,
    tool_heavy: float = 0.4,
    error_rate: float = 0.05,
    start: str = "2026-05-04T08:30:00Z",
    id: str | None = None,
) -> History:
    """A synthetic session of ``turns`` user turns (each answered by one assistant message).

    ``tool_heavy`` in [0, 1] shifts the mix toward long tool-using turns with bigger outputs;
    ``error_rate`` is the chance that a tool call ends in ``output-error``.
    """
    if turns < 1:
        raise ValueError(f"turns must be >= 1, got {turns}")
    if not 0.0 <= tool_heavy <= 1.0:
        raise ValueError(f"tool_heavy must be in [0, 1], got {tool_heavy}")
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"error_rate must be in [0, 1], got {error_rate}")
    start_ms = int(datetime.fromisoformat(start).timestamp() * 1000)
    s = _Session(seed, tool_heavy=tool_heavy, error_rate=error_rate, start_ms=start_ms)
    for t in range(turns):
        turn = s.plan(first=t == 0)
        focus = s.user_turn(turn, first=t == 0)
        s.assistant_turn(turn, focus)
    # The generator's name as the shipped samples record it (its module moved to history/samples/; the bytes stay).
    meta = {"generator": "workbench.history.generate", "seed": seed, "turns": turns, "tool_heavy": tool_heavy,
            "error_rate": error_rate, "facts": [{**f, "message_id": s.messages[f["index"]].id} for f in s.facts]}
    return History(id=id or f"generated-{seed}", messages=tuple(s.messages), source_format="generated", meta=meta)


# -- the shipped samples --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One file in ``sample_histories/``: how it is made and why it exists."""

    name: str
    seed: int
    turns: int
    tool_heavy: float
    why: str
    format: str = "canonical JSONL"

    def history(self) -> History:
        return generate_session(self.seed, turns=self.turns, tool_heavy=self.tool_heavy, id=self.name)

    def text(self) -> str:
        return write_canonical_jsonl(self.history())

    def history_and_text(self) -> tuple[History, str]:
        history = self.history()
        return history, write_canonical_jsonl(history)


SAMPLES: tuple[Sample, ...] = (
    Sample("short", 20260501, 30, 0.2,
           "small enough to read by eye; fast tests, the app's default, compaction only with small windows"),
    Sample("long", 20260502, 1100, 0.1,
           "a multi-day session: at a 200k window stagewise's defaults compress it well over ten times"),
    Sample("tool_heavy", 20260505, 30, 0.95,
           "tool outputs dominate (70%+ of tokens): where eliding tool results pays off most"),
)
