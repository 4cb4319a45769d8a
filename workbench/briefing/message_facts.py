"""What one message contributes to an extractive briefing: files touched, links, decisions, errors, status.

``workbench.briefing.extractive`` folds these per-message facts into its sections; they are read here, once
per message (``message_facts`` is cached by content), apart from how the briefing is merged and trimmed.
Import them from here. Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from workbench.briefing.textrefs import LINK_RE, bare_urls, find_links
from workbench.briefing.textrefs import URL_RE as _URL_RE
from workbench.counting.attachments import without_reminders
from workbench.counting.usage import CONTEXTUAL_USER_PREFIXES
from workbench.history.caseless import CaselessPattern
from workbench.history.jsjson import js_truthy
from workbench.history.model import Message, Part

_PATH_RE = re.compile(
    r"(?<![\w@:/.\-])((?:~|\.{1,2})?/?(?:[\w@+\-][\w@.+\-]*/)+[\w@.+\-]*[\w+\-]\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
)
_FILE_EXTS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|mdx|yaml|yml|toml|rs|go|java|kt|"
    "c|h|cc|cpp|hpp|cs|rb|php|swift|css|scss|html|vue|svelte|sh|sql|ini|cfg|lock|xml|csv|ipynb"
)
_FILE_RE = re.compile(r"(?<![\w@:/.\-])([\w\-][\w.\-]*\.(?:" + _FILE_EXTS + r"))(?![\w/])")
# _FILE_RE's end alone: it starts with a literal, so re jumps from dot to dot (see _file_names).
_EXT_DOT_RE = re.compile(r"\.(?:" + _FILE_EXTS + r")(?![\w/])")
_NAME_CHARS_RE = re.compile(r"[\w.\-]*")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION_RE = re.compile(
    r"\b(must|should|shouldn't|don't|do not|never|always|prefer\w*|instead|make sure|only|avoid|keep|use|want|"
    r"needs?|require[sd]?|has to|have to|every|without|not|no new|ask me|please|no longer|switch|decid\w*|let's|"
    r"go with|requirement|constraint)\b",
    re.IGNORECASE,
)
_DECISION_CUES = CaselessPattern(_DECISION_RE.pattern)  # the same cues, faster (history/caseless.py)
_ERROR_START_RE = re.compile(r"^\s*(error|traceback|exception|fatal|failed|panic)\b", re.IGNORECASE)
# Tool-input keys whose string value is file content, not a reference to a file.
_CONTENT_KEYS = frozenset({"content", "new_string", "old_string", "new_str", "old_str", "file_text", "text", "code",
                           "script", "edits", "query", "pattern", "explanation", "description", "title"})
_PATH_KEY_RE = re.compile(r"(path|file|filename|paths|files|dir|directory|notebook)$", re.IGNORECASE)

INTENT_CHARS = 600
# User messages no user wrote: Codex's contextual fragments (AGENTS.md, environment context, skills: the one list,
# counting.usage's) and Claude Code's reminders, local-command echoes, `!` shell echoes, background-task notices and
# interruption markers (each seen starting user messages of ../shared/real_sessions_large). Claude Code also marks its
# own injections (skill bodies, command caveats, the compact summary) with these flags on the record.
INJECTED_USER_PREFIXES = (*CONTEXTUAL_USER_PREFIXES, "<system-reminder>", "<local-command-caveat>",
                          "<local-command-stdout>", "<local-command-stderr>", "<bash-input>", "<bash-stdout>",
                          "<bash-stderr>", "<task-notification>", "[Request interrupted by user")
INJECTED_FLAGS = ("isMeta", "isCompactSummary")
# Blocks an agent wraps around a user's words: GitHub Copilot CLI's <current_datetime> and <system_reminder> (with an
# underscore: ../shared/agent_formats/copilot-cli, real_sessions_large/copilot_cli__*).
WRAPPING_BLOCK_TAGS = ("current_datetime", "system_reminder")
# Where the files a user's @-mention pulled in start, appended after the words: Gemini CLI's "--- Content from
# referenced files ---" (../shared/agent_formats/gemini-cli) and OpenCode's synthetic Read (agent_formats/opencode).
REFERENCED_FILES_MARKS = ("--- Content from referenced files ---", "Called the Read tool with the following input: ")
# A Claude Code slash command as its log records it: <command-message>, <command-name>/x</command-name>, and the
# <command-args> the user typed after it (the skill or command body follows as an isMeta message).
_COMMAND_NAME_RE = re.compile(r"<command-name>\s*([^<]*?)\s*</command-name>")
_COMMAND_ARGS_RE = re.compile(r"<command-args>(.*?)(?:</command-args>|$)", re.S)
ENTRY_CHARS = 280
USER_SENTENCES = 6
STATUS_CHARS = 900


def own_words(msg: Message, text: str) -> str:
    """The part of a user message's ``text`` its user wrote: "" for what the agent injected (rules files, environment,
    skills, reminders, shell echoes, its own summary), reminder and date blocks cut out of a real request, the files
    an @-mention attached cut off its end, and a slash command as the user typed it ("/review PR 2"; "" without
    arguments: the name alone says nothing the skill body, which the agent injected, does not)."""
    if msg.role != "user" or any(msg.meta(flag) is True for flag in INJECTED_FLAGS):
        return ""
    words = without_reminders(text)
    for tag in WRAPPING_BLOCK_TAGS:
        words = _without_blocks(words, tag)
    for mark in REFERENCED_FILES_MARKS:
        words = words.partition(mark)[0]
    words = words.strip()
    if words.startswith(INJECTED_USER_PREFIXES):
        return ""
    command = _COMMAND_NAME_RE.search(words) if words.startswith("<command-") else None
    if command is not None:
        found = _COMMAND_ARGS_RE.search(words)
        args = found.group(1).strip() if found else ""
        return f"{command.group(1)} {args}" if args else ""
    return words


def _without_blocks(text: str, tag: str) -> str:
    """``text`` without its ``<tag>...</tag>`` blocks, each found with ``str.find`` (linear: a log of a million
    opening tags and no closing one costs one pass, not one scan to the end per tag, as a lazy regex would)."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    at = text.find(opening)
    if at < 0:
        return text
    kept: list[str] = []
    done = 0
    while at >= 0:
        end = text.find(closing, at + len(opening))
        if end < 0:
            break
        kept.append(text[done:at])
        done = end + len(closing)
        at = text.find(opening, done)
    kept.append(text[done:])
    return "\n".join(kept)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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
    found += _file_names(rest)
    return found


def _file_names(text: str) -> list[str]:
    """``_FILE_RE``'s matches in ``text``, found from the extensions' dots: 4x faster on prose.

    A match lies in a maximal run of ``[\\w.-]`` characters, starts at its first character (the lookbehind
    refuses any later one, and "@", ":" or "/" before the run) unless that is a dot, and ends, the run being
    read greedily and then backtracked, at the run's last dot that ``_EXT_DOT_RE`` matches. So each dot it
    matches (in text order) is traced back to its run's start (a match on the reversed text), and each run
    keeps its last dot.
    """
    if "." not in text:
        return []
    n = len(text)
    back = text[::-1]
    ends: dict[int, int] = {}
    for m in _EXT_DOT_RE.finditer(text):
        run = _NAME_CHARS_RE.match(back, n - m.start())  # the name's characters before the dot, read backwards
        start = n - run.end() if run else m.start()
        ends[start] = m.end()
    return [text[a:b] for a, b in ends.items() if text[a] != "." and (a == 0 or text[a - 1] not in "@:/")]


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
        sentences = [s for s in sentences if _DECISION_CUES.search(s)][:USER_SENTENCES] or sentences[:1]
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
        links = list(dict.fromkeys(find_links(joined) + bare_urls(joined)))
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
        intent = _clip(own_words(msg, joined), INTENT_CHARS)  # the request, never the rules the agent injected
    elif msg.role == "assistant" and joined.strip():
        status = _clip(joined, STATUS_CHARS)
    return _Facts(
        files=tuple(files), links=tuple(links), decisions=tuple(decisions), errors=tuple(errors),
        status=status, intent=intent, tool_calls=calls,
    )
