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

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from workbench.briefing.base import BRIEFER_PROMPT_CHARS, BriefRecord, BriefRequest, briefing_tokens
from workbench.briefing.message_facts import (
    _clip,
    message_facts,
)
from workbench.briefing.prompt import detect_leaks
from workbench.briefing.textrefs import find_links
from workbench.history.jsjson import utf16_len
from workbench.history.model import Message
from workbench.history.words import counted

H_INTENT = "## Session intent"
H_FILES = "## Files touched"
H_DECISIONS = "## User decisions and constraints"
H_ERRORS = "## Errors and dead ends"
H_LINKS = "## Links"
H_PROGRESS = "## Progress"
H_STATUS = "## Current status"
OWN_HEADINGS = (H_INTENT, H_FILES, H_DECISIONS, H_ERRORS, H_LINKS, H_PROGRESS, H_STATUS)


def path_link(path: str) -> str:
    """A path as stagewise writes it in briefings: ``[](path:<path>)``."""
    return f"[](path:{path})"



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


def _add_unique(items: list[str], new: Iterable[str], seen: set[str] | None = None) -> None:
    """Append what ``items`` lacks; ``seen`` (``set(items)``, kept up to date here) spares building it a call."""
    seen = set(items) if seen is None else seen
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
    _add_unique(b.links, _links_in(text))
    return b


# Each distinct line's links, for ``_links_in``: a chained briefing repeats most lines of the one before it.
_LINE_LINKS: dict[str, tuple[str, ...]] = {}
_LINE_LINKS_MAX = 50_000  # then it starts afresh
# Where a link could run on past a line's end: only the whitespace before its title, ``\s+"``, takes a newline.
_TITLE_ACROSS_LINES = re.compile(r'\n\s*"')


def _links_in(text: str) -> list[str]:
    """``LINK_RE.findall(text)`` (as ``find_links`` finds it), read line by line, each distinct line's links
    remembered (the whole text at once when a link could span two lines: a newline, maybe more whitespace, then a
    quote)."""
    if "](" not in text:  # every link holds it
        return []
    if _TITLE_ACROSS_LINES.search(text):
        return find_links(text)
    out: list[str] = []
    cache = _LINE_LINKS
    for line in text.split("\n"):
        if "](" not in line:
            continue
        found = cache.get(line)
        if found is None:
            if len(cache) >= _LINE_LINKS_MAX:
                cache.clear()
            found = cache[line] = tuple(find_links(line))
        out += found
    return out


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
    # Chained briefings carry hundreds of entries: one set per section for the whole span, not one a message.
    seen_decisions, seen_errors, seen_links = set(b.decisions), set(b.errors), set(b.links)
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
        _add_unique(b.decisions, facts.decisions, seen_decisions)
        _add_unique(b.errors, facts.errors, seen_errors)
        _add_unique(b.links, facts.links, seen_links)
        if facts.status:
            b.status = facts.status
    if messages:
        last = request.folded_from + len(request.folded) - 1
        b.progress.append(
            f"Compression {request.chain_index}: messages {request.folded_from}–{last} folded "
            f"({users} from the user, {assistants} from you, {counted(calls, 'tool call')})."
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


@dataclass
class _Written:
    """A briefing text with what is read off it: its length, leak flags, and tokens by (counter, chars per token)."""

    text: str
    chars: int
    leaks: tuple[bool, bool]
    tokens: dict[tuple[str, float], int] = field(default_factory=dict)


# Briefings already written, by what ``write_briefing`` reads of a request (``_written_key``): the replays of one
# history under many knobs (a sweep, a tuner) fold the same spans into the same previous briefings again (notebook
# 03's sweep of 768 replays asked 9,575 times for 5,248 distinct briefings). A few hundred cover a sweep's
# consecutive replays of one history; each holds one text.
_WRITTEN: OrderedDict[Hashable, _Written] = OrderedDict()
_WRITTEN_MAX = 256
_WRITTEN_LOCK = threading.Lock()


def _written_key(request: BriefRequest) -> Hashable | None:
    """Everything ``write_briefing`` reads of ``request``: the span (by its key; its length and any briefing stored
    in it follow), the previous briefing, whether to regenerate, where the span starts, the chain index and the
    target. None when the span has no key."""
    if request.folded_key is None:
        return None
    return (request.folded_key, request.previous_briefing, request.regenerate, request.folded_from,
            request.chain_index, request.target_chars)


def _written(request: BriefRequest) -> _Written:
    """``write_briefing(request)`` with its leak flags, written once per distinct request (``_written_key``)."""
    key = _written_key(request)
    if key is not None:
        with _WRITTEN_LOCK:
            found = _WRITTEN.get(key)
            if found is not None:
                _WRITTEN.move_to_end(key)
                return found
    text = write_briefing(request)
    written = _Written(text=text, chars=utf16_len(text), leaks=detect_leaks(text))
    if key is not None:
        with _WRITTEN_LOCK:
            _WRITTEN[key] = written
            if len(_WRITTEN) > _WRITTEN_MAX:
                _WRITTEN.popitem(last=False)
    return written


def clear_caches() -> None:
    """Forget the briefings and line links kept for later replays (the benchmarks time a replay writing its own)."""
    with _WRITTEN_LOCK:
        _WRITTEN.clear()
    _LINE_LINKS.clear()


@dataclass(frozen=True)
class ExtractiveBriefer:
    """Deterministic sectioned briefings from the folded messages: free, offline, with real text."""

    name: str = "extractive"

    def __call__(self, request: BriefRequest) -> BriefRecord:
        written = _written(request)
        text, (previous, xml) = written.text, written.leaks
        counter = (request.knobs.trigger_counter, request.knobs.chars_per_token)
        tokens = written.tokens.get(counter)
        if tokens is None:  # a tokenizer's count of a long briefing takes milliseconds
            tokens = written.tokens[counter] = briefing_tokens(text, request.knobs)
        # It stands in for an LLM briefer, so like the simulated one it reports the tokens such a briefer
        # would read and write; the replay prices them at ``briefer_model`` (the text itself is free).
        cpt = request.knobs.chars_per_token
        return BriefRecord(
            text=text,
            chars=written.chars,
            tokens=tokens,
            model="extractive",
            input_tokens=math.ceil((request.compact_history_chars + BRIEFER_PROMPT_CHARS) / cpt),
            output_tokens=tokens,
            leak_previous_tag=previous,
            leak_xml=xml,
        )
