"""counting.restore drops the <system-reminder> notices from a file's text exactly as its regex would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.counting.attachments import REMINDER, without_reminders

PIECES = ["<system-reminder>", "</system-reminder>", " ", "\n", "\t", "a", "b", "\u00a0", "\u2028", "<system-",
          "reminder>", "x\n  ", "</system-reminder"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16).map("".join))
def test_reminders_are_cut_as_the_regex_cuts_them(text: str) -> None:
    assert without_reminders(text) == REMINDER.sub("", text)


def test_a_read_result_keeps_its_lines_and_loses_the_notice() -> None:
    text = "     1\u2192a\n     2\u2192b\n\n<system-reminder>\nWhenever you read a file...\n</system-reminder>\n"
    assert without_reminders(text) == "     1\u2192a\n     2\u2192b"
    assert without_reminders("no notice") == "no notice"
    assert without_reminders("open <system-reminder> never closed") == "open <system-reminder> never closed"
