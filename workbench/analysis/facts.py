"""Facts a continuing agent needs, extracted from a history without an LLM, and how to recognise them again.

Five kinds, after Factory's probes (seed 003): artifacts (files created, edited, read: tool inputs, shell
commands, ``[](path:...)`` links, backticked paths), user decisions and constraints (user sentences with
cue words: must, don't, always, never, use, prefer, decided, ...), errors (failed tool parts, non-zero
exit codes, tracebacks, tool errors), links (URLs and markdown links) and next steps (each user request,
each assistant plan). Each fact keeps where it was first met and its *needles* (exact strings) and
*words* (for paraphrase), so ``workbench.analysis.probes`` can look for it in a briefing or a kept message.
Heuristics, deterministic and cheap; pure: no I/O.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from workbench.briefing.textrefs import bare_urls, link_targets
from workbench.history.model import History, Message, Part

KINDS = ("artifact", "decision", "error", "link", "next_step")
PROBES = ("recall", "artifact", "continuation", "decision")
PROBE_OF_KIND = {"artifact": "artifact", "decision": "decision", "error": "recall", "link": "recall",
                 "next_step": "continuation"}
# A paraphrased fact (decision, error, next step) counts as kept when this share of its content words is there.
WORD_SHARE = 0.6
MAX_DECISIONS_PER_MESSAGE = 10
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
_PATH_KEYS = ("path", "file_path", "filePath", "filename", "file", "notebook_path", "target_file",
              "relative_workspace_path", "input_path", "output_path")
_SHELL_KEYS = ("command", "cmd")
_SHELL_WRITE = {"sed": "edited", "perl": "edited", "patch": "edited", "touch": "created", "rm": "deleted",
                "tee": "created"}
_ACTION_RANK = {"created": 4, "edited": 3, "deleted": 3, "read": 2, "linked": 1, "mentioned": 0, "used": 0}


@dataclass(frozen=True, kw_only=True)
class Fact:
    """One thing a continuing agent needs, where it was first met, and how to recognise it again."""

    kind: str  # artifact | decision | error | link | next_step
    key: str  # what must survive: a path, a sentence, an error line, a URL
    detail: str = ""  # artifact actions (created, edited, read), request | plan, the erroring tool
    index: int  # message where it was first met
    needles: tuple[str, ...] = ()  # lowercase strings: any one found keeps the fact
    words: tuple[str, ...] = ()  # content words: WORD_SHARE of them found keeps a paraphrased fact
    path_like: bool = False  # needles are paths: match on path boundaries only

    @property
    def probe(self) -> str:
        """The probe type that asks about this fact (recall, artifact, continuation, decision)."""
        return PROBE_OF_KIND[self.kind]


# ── text helpers ─────────────────────────────────────────────────────────────────────────────


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


def fact_found(fact: Fact, text_lower: str, words: frozenset[str] | None = None) -> bool:
    """Is ``fact`` recognisable in ``text_lower`` (lowercased)? Exact needles first, then word share."""
    if fact.path_like:
        if any(_contains_path(text_lower, n) for n in fact.needles):
            return True
    elif any(n in text_lower for n in fact.needles):
        return True
    if fact.words:
        ws = words if words is not None else word_set(text_lower)
        hit = sum(1 for w in fact.words if w in ws)
        return hit >= WORD_SHARE * len(fact.words)
    return False


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


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


# ── extraction ───────────────────────────────────────────────────────────────────────────────


class _Collector:
    """Facts met so far, deduplicated by (kind, identity); artifact actions accumulate."""

    def __init__(self) -> None:
        self.facts: dict[tuple[str, str], Fact] = {}
        self.actions: dict[str, dict[str, None]] = {}
        self.per_message_decisions = 0

    def artifact(self, path: str, action: str, index: int) -> None:
        p = _norm_path(path)
        if not p or "\n" in p or len(p) > 300 or "://" in p:
            return
        ident = p.lower()
        self.actions.setdefault(ident, {}).setdefault(action, None)
        key = ("artifact", ident)
        if key not in self.facts:
            self.facts[key] = Fact(kind="artifact", key=p, index=index, needles=_path_needles(p), path_like=True)

    def add(self, kind: str, key: str, index: int, *, detail: str = "", exact: bool = True) -> None:
        key = key.strip()
        ident = " ".join(key.lower().split())
        if not ident or (kind, ident) in self.facts:
            return
        words = () if kind == "link" else _content_words(key)
        needles = (ident,) if exact else ()
        if kind != "link" and len(words) < 2 and not needles:
            return
        self.facts[(kind, ident)] = Fact(kind=kind, key=key, detail=detail, index=index, needles=needles, words=words)

    def result(self) -> tuple[Fact, ...]:
        out = []
        for (kind, ident), f in self.facts.items():
            if kind == "artifact":
                acts = sorted(self.actions.get(ident, {}), key=lambda a: -_ACTION_RANK.get(a, 0))
                f = Fact(kind=f.kind, key=f.key, detail=",".join(acts), index=f.index, needles=f.needles,
                         path_like=True)
            out.append(f)
        out.sort(key=lambda f: (f.index, KINDS.index(f.kind)))
        return tuple(out)


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
    head = output.lstrip()
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


def _message_facts(c: _Collector, i: int, msg: Message) -> None:
    role = msg.role
    decisions = 0
    for part in msg.parts or ():
        kind = part.kind
        if kind == "text":
            text = part.text or ""
            _text_facts(c, i, role, text)
            if role == "user":
                # A sentence holds a cue word only where the text does (sentences end at whitespace): one
                # search of the text skips the split for most turns.
                for s in _sentences(text) if _DECISION_RE.search(text) else ():
                    question = s.rstrip().endswith("?")
                    if decisions < MAX_DECISIONS_PER_MESSAGE and not question and _DECISION_RE.search(s) and _prose(s):
                        c.add("decision", s, i, detail="user")
                        decisions += 1
                # A pasted traceback or error line is an error the user met (aider, SWE-agent observations).
                errors = _errors_in(text) if "Traceback (most recent call last)" in text else []
                if any(w in text for w in _EXC_WORDS):
                    errors += [m.group(1)[:160] for m in _EXC_LINE_RE.finditer(text) if ": " in m.group(1)]
                for e in errors:
                    c.add("error", e, i, detail="user")
        elif kind == "tool":
            _tool_facts(c, i, part)
        elif kind == "tool-result":
            output = _as_text(part.output)
            errors = _errors_in(output)
            if part.get("isError") is True and not errors and output.strip():
                errors = [output.strip().splitlines()[0][:160]]
            for e in errors:
                c.add("error", e, i, detail=part.tool_name or "tool")
    if role == "user":
        request = " ".join(msg.text.split())[:300]
        if request:
            c.add("next_step", request, i, detail="request", exact=False)
    elif role == "assistant":
        plan = _last_plan(msg.text)
        if plan:
            c.add("next_step", plan[:300], i, detail="plan", exact=False)


def _is_plan(sentence: str) -> bool:
    return _PLAN_RE.search(sentence) is not None and len(sentence.split()) >= 4


def _last_plan(text: str) -> str | None:
    """The last sentence of ``text`` that states a plan (a cue word and at least four words), if any.

    A cue word never spans a sentence break (breaks are whitespace after . ! ? or newlines; cues hold single
    spaces after letters) and keeps its word boundaries in its sentence, so the sentence holding the text's
    last cue is the last sentence with one. Split from the non-blank start of that cue's line (a split of
    the rest gives the same sentences there); only when that sentence is too short are all sentences read.
    """
    last = None
    for m in _PLAN_RE.finditer(text):
        last = m
    if last is None:
        return None
    line = text.rfind("\n", 0, last.start()) + 1
    start = len(text) - len(text[line:].lstrip())
    for s in reversed(_sentences(text[start:])):
        if _PLAN_RE.search(s) is not None:
            if len(s.split()) >= 4:
                return s
            break
    plans = [s for s in _sentences(text) if _is_plan(s)]
    return plans[-1] if plans else None


def _text_facts(c: _Collector, i: int, role: str, text: str) -> None:
    targets = [t for t in link_targets(text) if t]
    for target in targets:
        if target.startswith("path:"):
            c.artifact(target[5:], "linked", i)
    if role not in ("user", "assistant"):
        return
    for target in targets:
        if not target.startswith("path:"):
            c.add("link", target, i, detail="markdown")
    for url in bare_urls(text):
        c.add("link", url, i, detail="url")
    if "`" in text:
        for m in _BACKTICK_PATH_RE.finditer(text):
            if "://" not in m.group(1):
                c.artifact(m.group(1), "mentioned", i)
    if role == "assistant" and "```" in text:
        for m in _FENCE_PATH_RE.finditer(text):  # aider-style edit blocks: the path line, then the fence
            c.artifact(m.group(1), "edited", i)


def _tool_facts(c: _Collector, i: int, part: Part) -> None:
    name = part.tool_name or ""
    inp = part.input
    if isinstance(inp, dict):
        for key in _PATH_KEYS:
            value = inp.get(key)
            if isinstance(value, str) and value.strip():
                c.artifact(value, _tool_action(name, inp), i)
        for key in _SHELL_KEYS:
            value = inp.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str):
                for path, action in _shell_paths(value):
                    c.artifact(path, action, i)
                for path, action in _patch_paths(value):
                    c.artifact(path, action, i)
        for value in inp.values():
            if isinstance(value, str) and "*** Begin Patch" in value:
                for path, action in _patch_paths(value):
                    c.artifact(path, action, i)
            if isinstance(value, str) and value.startswith(("http://", "https://")):
                c.add("link", value, i, detail=name or "tool")
    elif isinstance(inp, str) and "*** Begin Patch" in inp:
        for path, action in _patch_paths(inp):
            c.artifact(path, action, i)
    if part.state == "output-error":
        c.add("error", (part.error_text or "tool error").strip().splitlines()[0][:160] if (part.error_text or "").strip()
              else "tool error", i, detail=name or "tool")
    elif part.state == "output-available" and part.output is not None:
        for e in _errors_in(_as_text(part.output)):
            c.add("error", e, i, detail=name or "tool")


def extract_facts(history: History) -> tuple[Fact, ...]:
    """Every fact of ``history`` in order of first appearance (deterministic; no LLM)."""
    c = _Collector()
    for i, msg in enumerate(history.messages):
        _message_facts(c, i, msg)
    return c.result()
