"""The Read tool's attachment texts as Claude Code's restore re-attaches them, and their UTF-16 lengths.

``counting.restore`` builds a text where its count needs it (a tokenizer counter; a range read, whose reminder
notice is cut from the text); the estimate counts a UTF-16 length, which ``*_len`` gives without building the
text (``tests/test_restore_lengths.py`` checks each against the built text). The texts: 2.1.25 cli.js, the attachment-to-message switch; the line numbers as the transcript's
Read results show them. Pure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workbench.history.jsjson import utf16_len

_NUMBER = r" *\d+(?:\u2192|\t)"  # the Read tool's "   445→" (older builds: a tab)
LINE_NUMBER = re.compile("^" + _NUMBER, re.M)
_NUMBER_AT = re.compile(_NUMBER)
_NUMBER_AFTER_BREAK = re.compile("\n" + _NUMBER)
REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)
_READ_CALL = "Called the Read tool with the following input: "
_READ_RESULT = "Result of calling the Read tool: "


def part_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v["text"] for v in value if isinstance(v, dict) and isinstance(v.get("text"), str))
    return ""


def without_reminders(text: str) -> str:
    """``REMINDER.sub("", text)`` (the restore's texts; the extractive briefer's reading of a user's own words), with
    each match looked for at its tag (``str.find``) instead of the regex trying every position of a file's text (7
    of the 18 ms of a restore over ../shared/real_sessions).

    A match starts at the whitespace run right before an opening tag (``\\s`` is ``str.isspace``): from any
    earlier position ``\\s*`` cannot reach the tag. Without a closing tag after it, no later match exists.
    """
    at = text.find("<system-reminder>")
    if at < 0:
        return text
    out: list[str] = []
    done = 0
    while at >= 0:
        start = at
        while start > done and text[start - 1].isspace():
            start -= 1
        found = REMINDER.match(text, start)
        if found is None:
            break
        out.append(text[done:start])
        done = found.end()
        at = text.find("<system-reminder>", done)
    out.append(text[done:])
    return "".join(out)


def without_line_numbers(text: str) -> str:
    r"""``LINE_NUMBER.sub("", text)``: a match at the start, then each one after a ``\n`` found by the regex's literal
    prefix search instead of ``^`` tried at every position of a file's text (7.7 -> 4.2 ms over the restores of
    ../shared/real_sessions). A match holds no line break, so each line holds at most one, at its start."""
    first = _NUMBER_AT.match(text)
    if first is not None:
        text = text[first.end():]
    return _NUMBER_AFTER_BREAK.sub("\n", text)


def read_attachment(path: str, body: str) -> str:
    """The Read tool's call and result as the restore attaches them."""
    return _READ_CALL + json.dumps({"file_path": path}) + "\n" + _READ_RESULT + body


def numbered(content: str) -> str:
    """``content`` as the Read tool shows it: each line after its number, right-aligned in 6 columns."""
    return "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(content.split("\n"), start=1))


_MAY_GO = b" 0123456789\t"  # the ASCII characters a line number's match may hold


def bare_floor(text: str) -> int:
    r"""A floor of the UTF-16 length of ``LINE_NUMBER.sub("", text)``, counted in C, without the substitution.

    Each match is spaces, ``\d`` digits and one arrow or tab; ``\d`` takes Unicode digits, which are not ASCII,
    like the arrow. So at most the spaces, ASCII digits, tabs and non-ASCII characters go (the other ASCII
    characters stay); what stays is at least as long in UTF-16 code units as in code points."""
    return len(text.encode("ascii", "ignore").translate(None, _MAY_GO))


def read_attachment_len(path: str) -> int:
    """UTF-16 length of ``read_attachment(path, "")``."""
    return utf16_len(read_attachment(path, ""))


def part_text_len(value: Any) -> int:
    """UTF-16 length of ``part_text(value)``, without joining the texts."""
    if isinstance(value, str):
        return utf16_len(value)
    if isinstance(value, list):
        return sum(utf16_len(v["text"]) for v in value if isinstance(v, dict) and isinstance(v.get("text"), str))
    return 0


def numbered_len(content: str) -> int:
    """UTF-16 length of ``numbered(content)``: the content's, plus per line its number right-aligned in 6
    columns (more for a number of more digits) and the arrow, one code unit."""
    lines = content.count("\n") + 1
    extra = 7 * lines
    low = 1_000_000  # the first number of 7 digits
    while lines >= low:
        extra += lines - low + 1  # each number from ``low`` on takes one more column
        low *= 10
    return utf16_len(content) + extra

