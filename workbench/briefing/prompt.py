"""The briefer's prompt: our own system prompt and the user message with stagewise's budget hint (§7).

The wording is this project's, written in the spirit of stagewise's prompt; the shape of the user
message, the four budget buckets, en-US number formatting and ``Math.round`` semantics follow the spec
so that bundles and live runs are comparable with stagewise's. Pure text functions, no I/O.
"""

from __future__ import annotations

import re

from workbench.stagewise.core import budget_bucket

# Bump when the system prompt or the user-message shape changes: it is part of every cache key.
PROMPT_VERSION = "workbench-briefing-v1"
TARGET_CHARS = 30_000
PREVIOUS_TAG = "<previous-chat-history>"

SYSTEM_PROMPT = """\
You write the briefing that a coding agent reads instead of its own earlier conversation. The agent \
has no other memory of what happened: whatever the briefing leaves out is gone for good, so when in \
doubt keep a detail rather than drop it. Address the agent as "you" and call the person it works \
with "the user".

# What you receive

The conversation comes inside <chat-history> tags. Each <user> element is something the user wrote, \
with bracketed notes such as [attached: ...] or [mentioned: ...] for files they pointed at. Each \
<assistant> element is what the agent said and did; its tool calls appear as one-line markers, for \
example [read: path], [edited: path (3 edits)], [created: path], [searched: "query"], \
[shell: label → exit 1] or [lint: paths → 2 errors, 0 warnings]. A marker ending in ✗ and a message \
means the call failed. If a <previous-chat-history> element is present, it is the briefing written \
at the previous compaction: treat it as true, it covers everything that came before the messages \
that follow it.

# What the briefing must cover

The tasks the user asked for and why; how you approached them; what you found out and what you \
decided, with the reasons; questions you asked and the answers you got; errors, failed attempts and \
dead ends, so that they are not repeated; tool results that changed the plan; and, at the end of \
each topic, where things stand now: done, in progress, or still open.

# What must survive word for word

Every file or folder path, written as a link of the form [](path:<mount-prefixed path>); convert \
plain paths and old wsfile: links to that form. Every markdown link exactly as it appeared. The \
user's decisions, preferences and constraints, in their own words where possible. Colour values, \
names, version numbers, directory layouts and configuration values.

# When a previous briefing is present

Carry it over unchanged while the length budget allows. When it does not, shorten the oldest \
sections first and in place: keep every ## heading, every link, every decision and every outcome, \
leave the recent sections alone, and never cut a section below two to four sentences.

# Layout

One ## heading per topic, in the order the topics came up, with flowing prose under each heading. \
No bullet lists, tables, code blocks or sub-headings. Early topics that were settled get two to \
four sentences; recent and unfinished topics get full detail and end with their current status.

# Output

Reply with the briefing only, as plain markdown. Do not wrap it in any XML tag, and never write \
<previous-chat-history> or <chat-history> yourself. Use the length budget you are given: it is a \
goal, not a ceiling, and a longer briefing is better than a lost detail.
"""

CLOSING_INSTRUCTION = "Write the briefing for the conversation above now, following the instructions."

# Tags that wrap the briefer's input; any of them in the output means the model copied its input.
_WRAPPER_TAGS = ("previous-chat-history", "chat-history", "user", "assistant", "memory", "briefing", "summary")
_WRAPPER_RE = re.compile(r"</?(?:" + "|".join(re.escape(t) for t in _WRAPPER_TAGS) + r")(?:\s[^<>]*)?>")
_WHOLE_WRAP_RE = re.compile(r"^\s*<([A-Za-z][\w-]*)(?:\s[^<>]*)?>.*</\1>\s*$", re.DOTALL)


def format_en_us(n: int) -> str:
    """``n.toLocaleString('en-US')`` for integers: 30000 → '30,000'."""
    return f"{n:,}"


def hint_bucket(previous_chars: int, target_chars: int = TARGET_CHARS) -> tuple[float, int, str]:
    """(ratio, rounded percent, bucket) with stagewise's edges: none, lt60, 60to85, gte85."""
    return budget_bucket(previous_chars, target_chars)


def budget_hint(previous_chars: int, target_chars: int = TARGET_CHARS) -> str:
    """The length guidance for one of the four buckets (our wording, stagewise's thresholds)."""
    _, pct, bucket = hint_bucket(previous_chars, target_chars)
    target = f"Length budget: aim for about {format_en_us(target_chars)} characters."
    prev = f"The previous briefing is {format_en_us(previous_chars)} characters ({pct}% of the budget)"
    if bucket == "none":
        return target
    if bucket == "lt60":
        return (
            f"{target} {prev}, well within the budget: carry it over in full, add the new material, "
            "and do NOT shorten it."
        )
    if bucket == "60to85":
        return (
            f"{target} {prev}. There is still room: condense only the oldest sections lightly if you must, "
            "keep every recent detail, and do NOT shorten aggressively."
        )
    return (
        f"{target} {prev}, close to the limit: condense the oldest topics that are fully resolved, "
        "and keep every file path, decision and outcome."
    )


def build_user_message(compact_history: str, previous_chars: int = 0, target_chars: int = TARGET_CHARS) -> str:
    """``<chat-history>`` + transcript + ``</chat-history>``, blank line, budget hint, blank line, instruction."""
    return (
        f"<chat-history>{compact_history}</chat-history>\n\n"
        f"{budget_hint(previous_chars, target_chars)}\n\n{CLOSING_INSTRUCTION}"
    )


def build_messages(compact_history: str, previous_chars: int = 0, target_chars: int = TARGET_CHARS) -> list[dict]:
    """The chat messages a live briefer sends: system prompt, then the user message."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": build_user_message(compact_history, previous_chars, target_chars)},
    ]


def detect_leaks(text: str | None) -> tuple[bool, bool]:
    """(contains ``<previous-chat-history>``, contains any input wrapper tag or is wrapped whole in one)."""
    if not text:
        return False, False
    previous = PREVIOUS_TAG in text
    xml = previous or bool(_WRAPPER_RE.search(text)) or bool(_WHOLE_WRAP_RE.match(text))
    return previous, xml
