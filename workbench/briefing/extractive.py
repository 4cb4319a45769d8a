"""The extractive briefer: a real, deterministic, sectioned briefing written without any LLM.

It reads the newly folded messages and pulls out what an anchored summary keeps (seed 003, the
"artifact trail"): the session intent, every file touched (tool inputs, attachments, mentions and
paths in text, as ``[](path:...)`` links), the user's decisions and constraints, errors and dead ends,
every markdown link verbatim, a progress line per compression and the last status. Chained: the
previous briefing's sections are merged in, so text exists for previews, bundles and probes for free.

Guarantee: every markdown link (``[](path:...)`` included) in the text parts of the folded span, and
in the previous briefing, appears verbatim in the output; trimming to the target never drops one.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.briefing.base import BRIEFER_PROMPT_CHARS, BriefRecord, BriefRequest, briefing_tokens
from workbench.briefing.prompt import detect_leaks
from workbench.briefing.textrefs import LINK_RE, bare_urls
from workbench.briefing.textrefs import URL_RE as _URL_RE
from workbench.history.jsjson import js_truthy, utf16_len
from workbench.history.model import Message, Part

H_INTENT = "## Session intent"
H_FILES = "## Files touched"
H_DECISIONS = "## User decisions and constraints"
H_ERRORS = "## Errors and dead ends"
H_LINKS = "## Links"
H_PROGRESS = "## Progress"
H_STATUS = "## Current status"
OWN_HEADINGS = (H_INTENT, H_FILES, H_DECISIONS, H_ERRORS, H_LINKS, H_PROGRESS, H_STATUS)

_PATH_RE = re.compile(
    r"(?<![\w@:/.\-])((?:~|\.{1,2})?/?(?:[\w@+\-][\w@.+\-]*/)+[\w@.+\-]*[\w+\-]\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
)
_FILE_RE = re.compile(
    r"(?<![\w@:/.\-])([\w\-][\w.\-]*\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|mdx|yaml|yml|toml|rs|go|java|kt|"
    r"c|h|cc|cpp|hpp|cs|rb|php|swift|css|scss|html|vue|svelte|sh|sql|ini|cfg|lock|xml|csv|ipynb))(?![\w/])"
)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION_RE = re.compile(
    r"\b(must|should|shouldn't|don't|do not|never|always|prefer\w*|instead|make sure|only|avoid|keep|use|want|"
    r"needs?|require[sd]?|has to|have to|every|without|not|no new|ask me|please|no longer|switch|decid\w*|let's|"
    r"go with|requirement|constraint)\b",
    re.IGNORECASE,
)
_ERROR_START_RE = re.compile(r"^\s*(error|traceback|exception|fatal|failed|panic)\b", re.IGNORECASE)
# Tool-input keys whose string value is file content, not a reference to a file.
_CONTENT_KEYS = frozenset({"content", "new_string", "old_string", "new_str", "old_str", "file_text", "text", "code",
                           "script", "edits", "query", "pattern", "explanation", "description", "title"})
_PATH_KEY_RE = re.compile(r"(path|file|filename|paths|files|dir|directory|notebook)$", re.IGNORECASE)

INTENT_CHARS = 600
ENTRY_CHARS = 280
USER_SENTENCES = 6
STATUS_CHARS = 900


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def path_link(path: str) -> str:
    """A path as stagewise writes it in briefings: ``[](path:<path>)``."""
    return f"[](path:{path})"


# -- what one message contributes ---------------------------------------------------------------
@dataclass(frozen=True)
class _Facts:
    files: tuple[tuple[str, str], ...] = ()  # (path, verb)
    links: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    status: str = ""
    intent: str = ""
    tool_calls: int = 0


def _verb(tool: str, inp: Any, out: Any) -> str:
    name = tool.lower()
    command = str(inp.get("command", "")).lower() if isinstance(inp, dict) else ""
    probe = command if command and name in ("str_replace_editor", "str_replace_based_edit_tool", "editor") else name
    if isinstance(out, dict) and isinstance(out.get("message"), str) and "created" in out["message"]:
        return "created"
    for needle, verb in (("read", "read"), ("view", "read"), ("cat", "read"), ("open", "read"), ("create", "created"),
                         ("write", "wrote"), ("edit", "edited"), ("replace", "edited"), ("patch", "edited"),
                         ("insert", "edited"), ("delete", "deleted"), ("remove", "deleted"), ("move", "moved"),
                         ("copy", "copied"), ("grep", "searched"), ("search", "searched"), ("glob", "listed"),
                         ("ls", "listed"), ("list", "listed"), ("exec", "shell"), ("bash", "shell"),
                         ("shell", "shell"), ("command", "shell"), ("terminal", "shell"), ("lint", "linted"),
                         ("diagnostic", "linted")):
        if needle in probe:
            return verb
    return tool


def _paths_in_text(text: str) -> list[str]:
    # Each pattern needs a substring that is cheap to test for: skip the scans a text cannot match.
    if "." not in text:
        return []
    scrubbed = LINK_RE.sub(" ", text) if "](" in text else text
    if "://" in scrubbed:
        scrubbed = _URL_RE.sub(" ", scrubbed)
    found = [m.group(1) for m in _PATH_RE.finditer(scrubbed)] if "/" in scrubbed else []
    rest = _PATH_RE.sub(" ", scrubbed) if found else scrubbed
    found += [m.group(1) for m in _FILE_RE.finditer(rest)]
    return found


def _input_paths(inp: Any, *, depth: int = 0) -> list[str]:
    """Paths named by a tool input: path-like keys directly, other strings by pattern."""
    if depth > 3:
        return []
    out: list[str] = []
    if isinstance(inp, dict):
        for key, value in inp.items():
            if not isinstance(key, str) or key in _CONTENT_KEYS:
                continue
            if _PATH_KEY_RE.search(key):
                if isinstance(value, str) and value.strip() and "\n" not in value:
                    out.append(value.strip())
                elif isinstance(value, list):
                    out += [v.strip() for v in value if isinstance(v, str) and v.strip() and "\n" not in v]
            elif isinstance(value, str):
                out += _paths_in_text(value)
            elif isinstance(value, (dict, list)):
                out += _input_paths(value, depth=depth + 1)
    elif isinstance(inp, list):
        for value in inp:
            out += _input_paths(value, depth=depth + 1)
    elif isinstance(inp, str):
        out += _paths_in_text(inp)
    return out


def _first_line(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else str(value)
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return _clip(line, limit)


def _label(tool: str, inp: Any) -> str:
    if isinstance(inp, dict):
        for key in ("path", "file_path", "command", "cmd", "explanation", "query", "title"):
            value = inp.get(key)
            if isinstance(value, str) and value.strip():
                return f"{tool}: {_clip(value, 80)}"
    return tool


def _tool_facts(part: Part) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(files, errors, decisions) of one tool part."""
    data = part.data if isinstance(part.data, dict) else {}
    tool = part.tool_name or part.type or "tool"
    inp, out, state = data.get("input"), data.get("output"), data.get("state")
    files = [(p, _verb(tool, inp, out)) for p in dict.fromkeys(_input_paths(inp))] if js_truthy(inp) else []
    errors: list[str] = []
    decisions: list[str] = []
    label = _label(tool, inp)
    if state == "output-error":
        errors.append(f"[{label}] failed: {_first_line(data.get('errorText') or 'unknown error')}")
    elif state == "output-denied":
        errors.append(f"[{label}] was denied by the user")
    if isinstance(out, dict):
        code = out.get("exit_code")
        if out.get("timed_out"):
            errors.append(f"[{label}] timed out")
        elif isinstance(code, int) and not isinstance(code, bool) and code != 0:
            detail = _first_line(out.get("output") or "", 120)
            errors.append(f"[{label}] exited {code}" + (f": {detail}" if detail else ""))
        summary = out.get("summary")
        if isinstance(summary, dict) and isinstance(summary.get("errors"), int) and summary["errors"] > 0:
            errors.append(f"[{label}] lint: {summary['errors']} errors")
        answers = out.get("answers")
        if tool == "askUserQuestions" and isinstance(answers, dict) and out.get("completed"):
            title = inp.get("title", "question") if isinstance(inp, dict) else "question"
            shown = "; ".join(f"{k}: {v}" for k, v in answers.items())
            decisions.append(_clip(f"Asked the user ({title}): {shown}", ENTRY_CHARS))
    if part.kind == "tool-result":
        if data.get("isError"):
            errors.append(f"[{tool}] failed: {_first_line(out if out is not None else 'error')}")
        elif isinstance(out, str) and _ERROR_START_RE.match(out):
            errors.append(f"[{tool}] {_first_line(out)}")
    return files, errors, decisions


def _user_decisions(text: str) -> list[str]:
    sentences = [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]
    # The user's own words are short and dense with decisions: keep them all, unless the turn is a long
    # paste (instructions, a log), where only the sentences that sound like decisions are kept.
    if len(sentences) > USER_SENTENCES:
        sentences = [s for s in sentences if _DECISION_RE.search(s)][:USER_SENTENCES] or sentences[:1]
    picked = sentences
    return [_clip(s, ENTRY_CHARS) for s in picked]


@functools.lru_cache(maxsize=65_536)
def message_facts(msg: Message) -> _Facts:
    """What one message contributes to a briefing (cached by content: each message is read once)."""
    files: list[tuple[str, str]] = []
    links: list[str] = []
    errors: list[str] = []
    decisions: list[str] = []
    calls = 0
    texts = [p.text or "" for p in msg.parts or () if p.kind == "text" and p.text]
    joined = "\n".join(texts)
    if msg.role in ("user", "assistant"):
        links = list(dict.fromkeys(LINK_RE.findall(joined) + bare_urls(joined)))
        files += [(p, "mentioned") for p in _paths_in_text(joined)]
    for part in msg.parts or ():
        if part.kind in ("tool", "tool-result"):
            calls += part.kind == "tool"
            f, e, d = _tool_facts(part)
            files += f
            errors += e
            decisions += d
        elif part.kind == "file":
            name = part.get("filename") or part.get("url")
            if isinstance(name, str) and name and not name.startswith("data:"):
                files.append((name, "attached"))
    meta = msg.metadata if isinstance(msg.metadata, dict) else {}
    for att in meta.get("attachments") or ():
        if isinstance(att, dict) and isinstance(att.get("path"), str):
            files.append((att.get("originalFileName") or att["path"], "attached"))
    for men in meta.get("mentions") or ():
        if isinstance(men, dict) and men.get("providerType") == "file":
            name = men.get("mountedPath") or men.get("relativePath") or men.get("fileName")
            if isinstance(name, str) and name:
                files.append((name, "mentioned"))
    intent = status = ""
    if msg.role == "user" and joined.strip():
        decisions = _user_decisions(joined) + decisions
        intent = _clip(joined, INTENT_CHARS)
    elif msg.role == "assistant" and joined.strip():
        status = _clip(joined, STATUS_CHARS)
    return _Facts(
        files=tuple(files), links=tuple(links), decisions=tuple(decisions), errors=tuple(errors),
        status=status, intent=intent, tool_calls=calls,
    )


# -- the briefing as sections --------------------------------------------------------------------
@dataclass
class Briefing:
    """A sectioned briefing; ``extra`` keeps sections of a foreign briefing (an LLM's, a real one) verbatim."""

    preamble: str = ""
    extra: list[tuple[str, str]] = field(default_factory=list)
    intent: str = ""
    files: dict[str, list[str]] = field(default_factory=dict)
    decisions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    status: str = ""

    def render(self) -> str:
        out: list[str] = []
        if self.preamble.strip():
            out.append(self.preamble.strip())
        out += [f"{h}\n\n{body.strip()}" for h, body in self.extra]
        if self.intent:
            out.append(f"{H_INTENT}\n\n{self.intent}")
        if self.files:
            out.append(H_FILES + "\n\n" + "\n".join(f"- {path_link(p)} — {', '.join(v)}" for p, v in self.files.items()))
        for heading, items in ((H_DECISIONS, self.decisions), (H_ERRORS, self.errors), (H_LINKS, self.links),
                               (H_PROGRESS, self.progress)):
            if items:
                out.append(heading + "\n\n" + "\n".join(f"- {x}" for x in items))
        if self.status:
            out.append(f"{H_STATUS}\n\n{self.status}")
        return "\n\n".join(out) + "\n" if out else ""


def _add_unique(items: list[str], new: Iterable[str]) -> None:
    seen = set(items)
    for x in new:
        if x not in seen:
            items.append(x)
            seen.add(x)


def parse_briefing(text: str | None) -> Briefing:
    """Read a previous briefing back into sections; headings it does not know are kept verbatim."""
    b = Briefing()
    if not text:
        return b
    chunks = re.split(r"(?m)^(?=## )", text)
    if chunks and not chunks[0].startswith("## "):
        b.preamble = chunks.pop(0)
    for chunk in chunks:
        heading, _, body = chunk.partition("\n")
        heading = heading.rstrip()
        entries = [ln[2:] for ln in body.splitlines() if ln.startswith("- ")]
        if heading == H_INTENT:
            b.intent = body.strip()
        elif heading == H_FILES:
            for entry in entries:
                link, sep, verbs = entry.rpartition(") — ")
                if sep and link.startswith("[](path:"):
                    b.files[link[len("[](path:"):]] = [v.strip() for v in verbs.split(",") if v.strip()]
        elif heading == H_DECISIONS:
            b.decisions += entries
        elif heading == H_ERRORS:
            b.errors += entries
        elif heading == H_LINKS:
            b.links += entries
        elif heading == H_PROGRESS:
            b.progress += entries
        elif heading == H_STATUS:
            b.status = body.strip()
        else:
            b.extra.append((heading, body))
    # Links anywhere in the previous briefing must survive any later trimming.
    _add_unique(b.links, LINK_RE.findall(text))
    return b


def _previous_and_span(request: BriefRequest) -> tuple[str | None, Sequence[Message]]:
    """The previous briefing and the messages to fold; a briefing stored inside the span wins (stagewise §6)."""
    folded = request.folded
    for i in range(len(folded) - 1, -1, -1):
        stored = folded[i].briefing if folded[i] else None
        if stored:
            return stored, folded[i:]
    return (None if request.regenerate else request.previous_briefing), folded


def _fold(b: Briefing, messages: Sequence[Message], request: BriefRequest) -> None:
    users = assistants = calls = 0
    for msg in messages:
        if not msg:
            continue
        facts = message_facts(msg)
        users += msg.role == "user"
        assistants += msg.role == "assistant"
        calls += facts.tool_calls
        if facts.intent and not b.intent:
            b.intent = facts.intent
        for path, verb in facts.files:
            verbs = b.files.setdefault(path, [])
            if verb not in verbs:
                verbs.append(verb)
        _add_unique(b.decisions, facts.decisions)
        _add_unique(b.errors, facts.errors)
        _add_unique(b.links, facts.links)
        if facts.status:
            b.status = facts.status
    if messages:
        last = request.folded_from + len(request.folded) - 1
        b.progress.append(
            f"Compression {request.chain_index}: messages {request.folded_from}–{last} folded "
            f"({users} from the user, {assistants} from you, {calls} tool calls)."
        )


def _trim(b: Briefing, target: int) -> str:
    """Shorten the oldest, most compressible parts until the text fits; files and links are never cut."""
    text = b.render()
    steps = (
        lambda: _keep_last(b.progress, 5),
        lambda: _keep_last(b.errors, 8),
        lambda: _keep_last(b.decisions, 12),
        lambda: _shorten_extra(b, 600),
        lambda: _keep_last(b.errors, 2),
        lambda: _keep_last(b.decisions, 4),
        lambda: _shorten_extra(b, 200),
        lambda: setattr(b, "status", _clip(b.status, 300)),
    )
    for step in steps:
        if utf16_len(text) <= target:
            break
        step()
        text = b.render()
    return text


def _keep_last(items: list[str], n: int) -> None:
    del items[: max(0, len(items) - n)]


def _shorten_extra(b: Briefing, limit: int) -> None:
    b.extra = [(h, _clip(body, limit)) for h, body in b.extra]


def write_briefing(request: BriefRequest) -> str:
    """The next briefing's text: the previous one's sections merged with what the new span adds."""
    previous, span = _previous_and_span(request)
    b = parse_briefing(previous)
    _fold(b, span, request)
    return _trim(b, request.target_chars)


@dataclass(frozen=True)
class ExtractiveBriefer:
    """Deterministic sectioned briefings from the folded messages: free, offline, with real text."""

    name: str = "extractive"

    def __call__(self, request: BriefRequest) -> BriefRecord:
        text = write_briefing(request)
        previous, xml = detect_leaks(text)
        tokens = briefing_tokens(text, request.knobs)
        # It stands in for an LLM briefer, so like the simulated one it reports the tokens such a briefer
        # would read and write; the replay prices them at ``briefer_model`` (the text itself is free).
        cpt = request.knobs.chars_per_token
        return BriefRecord(
            text=text,
            chars=utf16_len(text),
            tokens=tokens,
            model="extractive",
            input_tokens=math.ceil((request.compact_history_chars + BRIEFER_PROMPT_CHARS) / cpt),
            output_tokens=tokens,
            leak_previous_tag=previous,
            leak_xml=xml,
        )
