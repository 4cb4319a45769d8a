"""Facts a continuing agent needs, extracted from a history without an LLM, and how to recognise them again.

Five kinds, after Factory's probes (seed 003): artifacts (files created, edited, read: tool inputs, shell
commands, ``[](path:...)`` links, backticked paths), user decisions and constraints (user sentences with
cue words: must, don't, always, never, use, prefer, decided, ...), errors (failed tool parts, non-zero
exit codes, tracebacks, tool errors), links (URLs and markdown links) and next steps (each user request,
each assistant plan). Each fact keeps where it was first met and its *needles* (exact strings) and
*words* (for paraphrase), so ``workbench.analysis.fact_probes.probes`` can look for it in a briefing or a kept message.
Heuristics, deterministic and cheap; pure: no I/O. The text rules (cues, sentences, shell and patch paths,
error lines) are in ``workbench.analysis.fact_probes.fact_rules``.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.analysis.fact_probes.fact_rules import (
    _BACKTICK_PATH_RE,
    _DECISION_CUES,
    _EXC_LINE_RE,
    _EXC_WORDS,
    _FENCE_PATH_RE,
    _as_text,
    _contains_path,
    _content_words,
    _errors_in,
    _last_plan,
    _norm_path,
    _patch_paths,
    _path_needles,
    _prose,
    _sentences,
    _shell_paths,
    _tool_action,
    word_set,
)
from workbench.briefing.textrefs import bare_urls, link_targets
from workbench.history.model import History, Message, Part

KINDS = ("artifact", "decision", "error", "link", "next_step")
PROBES = ("recall", "artifact", "continuation", "decision")
PROBE_OF_KIND = {"artifact": "artifact", "decision": "decision", "error": "recall", "link": "recall",
                 "next_step": "continuation"}
# A paraphrased fact (decision, error, next step) counts as kept when this share of its content words is there.
WORD_SHARE = 0.6
MAX_DECISIONS_PER_MESSAGE = 10

_PATH_KEYS = ("path", "file_path", "filePath", "filename", "file", "notebook_path", "target_file",
              "relative_workspace_path", "input_path", "output_path")
_SHELL_KEYS = ("command", "cmd")
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
                for s in _sentences(text) if _DECISION_CUES.search(text) else ():
                    question = s.rstrip().endswith("?")
                    if (decisions < MAX_DECISIONS_PER_MESSAGE and not question and _DECISION_CUES.search(s)
                            and _prose(s)):
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
