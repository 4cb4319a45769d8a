"""The text rules of fact extraction: cue words, sentences, paths in shell commands and patches, error lines.

``workbench.analysis.fact_probes.facts`` applies them message by message; they live here, apart from the facts
and their collection, so each rule (and each shortcut that skips one where it cannot match) reads on its own.
Import them from here. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from workbench.history.caseless import CaselessPattern

MAX_WORDS = 16

_STOP_WORDS = (
    "the a an and or but if then else of to in on at for from by with without into onto over under is are was were "
    "be been being it its this that these those there here as so not no yes do does did done have has had will would "
    "can could should shall may might must you your we our us i me my they them their he she his her what which who "
    "when where why how all any each every some such than too very just also only own same both few more most other "
    "about after before again once up down out off above below between through during while use using make sure "
    "please let lets now next need needs want like get got go going"
)
_STOP = frozenset(_STOP_WORDS.split())
_WORD_RE = re.compile(r"[a-z0-9_][a-z0-9_.\-]*[a-z0-9_]|[a-z0-9]")
_EXT_NAMES = (
    "py pyi ipynb js jsx ts tsx mjs cjs json jsonl md mdx rst txt toml yaml yml ini cfg conf env lock sh bash zsh "
    "rs go java kt kts swift c h cc cpp hpp cs rb php pl lua r scala sql html htm css scss sass less vue svelte xml "
    "csv tsv log patch diff pony proto graphql gradle dockerfile makefile mk cmake tf hcl ex exs erl hs ml clj dart "
    "zig nim jl m mm tex bib svg png jpg jpeg gif pdf"
)
_EXT = _EXT_NAMES.split()
_EXT_RE = "(?:" + "|".join(sorted(_EXT, key=len, reverse=True)) + ")"
_PATH_TOKEN_RE = re.compile(r"(?:~|\.{1,2})?/?[\w@+\-.]+(?:/[\w@+\-.]+)*\." + _EXT_RE, re.IGNORECASE)
_BACKTICK_PATH_RE = re.compile(r"`([^`\s]+\." + _EXT_RE + r")`", re.IGNORECASE)
_FENCE_PATH_RE = re.compile(r"^([^\s`]+\." + _EXT_RE + r")[ \t]*\n```", re.IGNORECASE | re.MULTILINE)
_PATCH_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.MULTILINE)
_DECISION_RE = re.compile(
    r"\b(must|mustn't|don't|do not|never|always|use|prefer|preferred|decided|decide|should|shouldn't|"
    r"make sure|ensure|avoid|instead|only|needs?|has to|have to|keep|stays?|without|no new|required|stick to|"
    r"no longer|not allowed|go with|let's|switch to|want)\b",
    re.IGNORECASE,
)
_PLAN_RE = re.compile(r"\b(next|i'll|i will|let me|let's|now i|plan|going to|then i|i need to)\b", re.IGNORECASE)
# The same cues, searched case-sensitively on a lowercased text where that is exact (history/caseless.py); the
# plan form starts each alternative with a literal, so re skips to the letters that can start a cue.
_DECISION_CUES = CaselessPattern(_DECISION_RE.pattern)
_PLAN_CUES = CaselessPattern(
    _PLAN_RE.pattern,
    r"(?:n(?<!\w.)(?:ext|ow i)|i(?<!\w.)(?:'ll| will| need to)|l(?<!\w.)et(?: me|'s)|p(?<!\w.)lan|g(?<!\w.)oing to"
    r"|t(?<!\w.)hen i)\b",
)
_SENTENCE_SPLIT_RE = re.compile(r"\n+|(?<=[.!?])\s+")
_BULLET_RE = re.compile(r"^\s*(?:[-*•>]|\d+[.)])\s+")
_CODE_CHARS = frozenset("{}()[];=<>|\\$`")
_EXIT_RE = re.compile(r"(?:process exited with code|exit code:?|exit status:?|<returncode>)\s*(-?\d+)", re.IGNORECASE)
_ERROR_LINE_RE = re.compile(
    r"^.*\b(error|errors|failed|failure|fatal|cannot|can't|not found|no such file|denied|invalid|exception)\b.*$",
    re.IGNORECASE | re.MULTILINE,
)
_EXC_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Failure")  # every _EXC_LINE_RE match holds one
_EXC_LINE_RE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure)\b.*)$", re.MULTILINE)
_TOOL_USE_ERROR_RE = re.compile(r"<tool_use_error>(.*?)</tool_use_error>", re.DOTALL)
_SHELL_WRITE = {"sed": "edited", "perl": "edited", "patch": "edited", "touch": "created", "rm": "deleted",
                "tee": "created"}


def _content_words(text: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for w in _WORD_RE.findall(text.lower()):
        if len(w) >= 3 and w not in _STOP and not w.isdigit():
            seen.setdefault(w, None)
    return tuple(seen)[:MAX_WORDS]


def word_set(text_lower: str) -> frozenset[str]:
    return frozenset(_WORD_RE.findall(text_lower))


def _contains_path(text: str, needle: str) -> bool:
    """``needle`` occurs in ``text`` on path boundaries ("a.py" is not in "data.py"; "app/x.ts" is in "/src/app/x.ts")."""
    start = 0
    n = len(needle)
    while True:
        i = text.find(needle, start)
        if i < 0:
            return False
        before = text[i - 1] if i > 0 else " "
        after = text[i + n] if i + n < len(text) else " "
        if not (before.isalnum() or before in "_.-") and not (after.isalnum() or after in "_/-"):
            return True
        start = i + 1


def _path_needles(path: str) -> tuple[str, ...]:
    p = path.strip().strip("'\"").lower()
    if p.startswith("./"):
        p = p[2:]
    parts = [x for x in p.split("/") if x]
    tail = "/".join(parts[-2:]) if len(parts) >= 2 else (parts[0] if parts else p)
    return tuple(dict.fromkeys(x for x in (p, tail) if x))


def _norm_path(path: str) -> str:
    p = path.strip().strip("'\"")
    return p[2:] if p.startswith("./") else p


def _sentences(text: str) -> list[str]:
    out = []
    for raw in _SENTENCE_SPLIT_RE.split(text):
        s = _BULLET_RE.sub("", raw).strip()
        if s:
            out.append(s)
    return out


def _prose(sentence: str) -> bool:
    """A sentence a person wrote, not a line of code or a log line."""
    if sentence.startswith("#"):  # a markdown heading or a shell comment, not something the user decided
        return False
    words = sentence.split()
    if not 3 <= len(words) <= 60:
        return False
    code = sum(1 for ch in sentence if ch in _CODE_CHARS)
    return code / len(sentence) < 0.08 and len(_content_words(sentence)) >= 2


_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return _ENCODER.encode(value)  # json.dumps(value, ensure_ascii=False), without a new encoder a call
    except (TypeError, ValueError):
        return str(value)


def _tool_action(name: str, inp: Any) -> str:
    n = name.lower()
    if isinstance(inp, dict) and n in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor"):
        cmd = str(inp.get("command", ""))
        return {"view": "read", "create": "created"}.get(cmd, "edited")
    if any(w in n for w in ("multiedit", "edit", "replace", "patch", "insert")):
        return "edited"
    if any(w in n for w in ("write", "create")):
        return "created"
    if "delete" in n or "remove" in n:
        return "deleted"
    if any(w in n for w in ("read", "view", "open", "cat")):
        return "read"
    return "used"


def _shell_paths(command: str) -> list[tuple[str, str]]:
    """(path, action) pairs from the first line of a shell command (heredoc bodies are not commands)."""
    line = command.strip().splitlines()[0] if command.strip() else ""
    out: list[tuple[str, str]] = []
    for m in re.finditer(r">>?\s*([^\s;|&<>]+)", line):
        if _PATH_TOKEN_RE.fullmatch(m.group(1)):
            out.append((m.group(1), "created"))
    try:
        tokens = shlex.split(line, comments=False, posix=True)
    except ValueError:
        tokens = line.split()
    action = "read"
    previous = ""
    for tok in tokens:
        redirected, previous = previous in (">", ">>"), tok
        if tok in ("&&", "||", ";", "|"):
            action = "read"
            continue
        if redirected:
            continue  # already taken as created by the redirect pattern above
        base = tok.rsplit("/", 1)[-1]
        if base in _SHELL_WRITE:
            action = _SHELL_WRITE[base]
            continue
        if tok.startswith("-") or "://" in tok or "$" in tok or "*" in tok or "=" in tok:
            continue
        if _PATH_TOKEN_RE.fullmatch(tok) and any(c.isalpha() for c in base.split(".", 1)[0] or "x"):
            out.append((tok, action))
    return out


def _patch_paths(text: str) -> list[tuple[str, str]]:
    out = []
    for m in _PATCH_RE.finditer(text):
        if m.group(2):
            out.append((m.group(2).strip(), {"Add": "created", "Update": "edited", "Delete": "deleted"}[m.group(1)]))
        elif m.group(3):
            out.append((m.group(3).strip(), "created"))
    return out


def _may_hold_exit_code(output: str) -> bool:
    """Whether ``_EXIT_RE`` can match (every alternative holds 'exit' or '<returncode>', any case)."""
    low = output.lower()
    return "exit" in low or "<returncode>" in low


def _errors_in(output: str) -> list[str]:
    """Error lines worth remembering in one tool output (tracebacks, failed commands, tool errors)."""
    found: list[str] = []
    if "<tool_use_error>" in output:  # substring tests first: the regexes scan every output otherwise
        for m in _TOOL_USE_ERROR_RE.finditer(output):
            found.append(m.group(1).strip().splitlines()[0] if m.group(1).strip() else "tool error")
    pos = output.find("Traceback (most recent call last)")
    while pos >= 0:
        exc = _EXC_LINE_RE.search(output, pos)
        if exc:
            found.append(exc.group(1))
        pos = output.find("Traceback (most recent call last)", pos + 1)
    head = output.lstrip() if "ERROR:" in output else ""  # the copy only where it can start so
    if head.startswith("ERROR:"):
        rest = [ln.strip() for ln in head[len("ERROR:"):].splitlines() if ln.strip()]
        if rest:
            found.append(rest[0])
    if not found and _may_hold_exit_code(output):
        code = _EXIT_RE.search(output)
        if code and int(code.group(1)) != 0:
            line = _ERROR_LINE_RE.search(output)
            if line:
                found.append(line.group(0).strip())
    return [f[:160].strip() for f in found if f.strip()]


def _is_plan(sentence: str) -> bool:
    return _PLAN_RE.search(sentence) is not None and len(sentence.split()) >= 4


def _last_plan(text: str) -> str | None:
    """The last sentence of ``text`` that states a plan (a cue word and at least four words), if any.

    A cue word never spans a sentence break (breaks are whitespace after . ! ? or newlines; cues hold single
    spaces after letters) and keeps its word boundaries in its sentence, so the sentence holding the text's
    last cue is the last sentence with one. The split is read from the non-blank start of that cue's line
    (it gives the same sentences from there) up to the break after the cue; only when that sentence is too
    short are all sentences read.
    """
    last = None
    for m in _PLAN_CUES.finditer(text):
        last = m
    if last is None:
        return None
    pos = last.start()
    line = text.rfind("\n", 0, pos) + 1
    start = len(text) - len(text[line:].lstrip())
    # Breaks are whitespace and the cue starts with a letter, so no break straddles it.
    piece_start, piece_end = start, len(text)
    for brk in _SENTENCE_SPLIT_RE.finditer(text, start):
        if brk.start() > pos:
            piece_end = brk.start()
            break
        piece_start = brk.end()
    sentence = _BULLET_RE.sub("", text[piece_start:piece_end]).strip()
    if len(sentence.split()) >= 4:
        return sentence
    plans = [s for s in _sentences(text) if _is_plan(s)]
    return plans[-1] if plans else None
