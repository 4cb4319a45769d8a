"""How much memory parsing a JSON or JSONL file would take, known before parsing it: the size limit bounds memory.

A history is mostly text, which parses to about its own size; a file of numbers, empty containers or tiny
objects parses to 10 to 30 times its size (a 200 MB array of numbers took 2.9 GB only to be refused as no
history). ``check_parse_cost`` counts a file's commas and braces (one fast pass; outside strings, with numpy
over small slices, when that is over) and refuses a file whose values would take more than a few times its
size; ``check_array_shape`` refuses a large array whose first item is no message. Pure; no I/O.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from workbench.history.errors import HistoryError

# What the values parsed from a file may take, estimated before parsing: at most this multiple of the file's size
# (and never refused under MIN_PARSE_BUDGET). The estimate puts the shipped samples and every real log of
# ../shared (real_sessions, real_sessions_large, real_histories) at 1.8-2.4 times theirs.
MAX_PARSE_FACTOR = 6
MIN_PARSE_BUDGET = 64 << 20
_VALUE_BYTES = 40  # a number or short string (28-50 bytes in CPython) and its slot in a list or dict
_OBJECT_BYTES = 200  # a small dict (184 bytes and up in CPython 3.11) with its first member
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b",{")
_COUNT_SLICE_BYTES = 1 << 20  # the fast count's slices, with numpy
_SLICE_BYTES = 1 << 16  # the exact count's slices: its arrays take ~60 times this
_ARRAY_START_RE = re.compile(r"\s*\[\s*(.)", re.DOTALL)
_SHAPE_CHECK_CHARS = 1 << 20
_FIRST_ITEM = {"[": "arrays", '"': "strings", "t": "booleans", "f": "booleans", "n": "nulls"}


def parse_cost(data: bytes, *, exact: bool = False, stop_above: int | None = None) -> int:
    """An estimate in bytes of what the Python values parsed from JSON or JSONL ``data`` take besides their text:
    every value after a container's first follows a comma, every object opens with a brace. Without ``exact``,
    commas and braces inside strings count too (one fast pass, an upper bound); with it, only those outside strings
    (numpy over slices of ``data``: memory stays a few MB whatever the file), stopping once over ``stop_above``.
    """
    if not exact:
        return _fast_cost(data)
    import numpy as np

    total, inside, start, size = 0, False, 0, len(data)
    while start < size:
        end = min(size, start + _SLICE_BYTES)
        while end < size and data[end - 1] == 0x5C:  # never split a run of backslashes
            end += 1
        cost, inside = _slice_cost(np.frombuffer(data, np.uint8, count=end - start, offset=start), inside)
        total += cost
        if stop_above is not None and total > stop_above:
            break
        start = end
    return total


def _fast_cost(data: bytes) -> int:
    """``parse_cost`` without ``exact``. numpy counts ~3x as fast as ``bytes.translate`` (a slice's mask at a time),
    but only a process that has it already gains: importing it takes more time and ~30 MB (a file refused here
    must not cost a reader that much: tests/test_hostile_logs.py)."""
    np = sys.modules.get("numpy")
    if np is None:
        skeleton = data.translate(None, _NOT_STRUCTURE)
        braces = skeleton.count(b"{")
        return (len(skeleton) - braces) * _VALUE_BYTES + braces * _OBJECT_BYTES
    commas = braces = 0
    for start in range(0, len(data), _COUNT_SLICE_BYTES):
        a = np.frombuffer(data, np.uint8, count=min(_COUNT_SLICE_BYTES, len(data) - start), offset=start)
        commas += int(np.count_nonzero(a == 0x2C))
        braces += int(np.count_nonzero(a == 0x7B))
    return commas * _VALUE_BYTES + braces * _OBJECT_BYTES


def _slice_cost(a: Any, inside: bool) -> tuple[int, bool]:
    """(``parse_cost`` of the commas and braces outside strings in bytes ``a``, whether its end is inside a string).

    A quote opens or closes a string unless an odd run of backslashes precedes it; strings never span lines, so
    each line starts outside one (a damaged line cannot hide the structure of the lines after it). ``inside`` says
    whether ``a`` starts inside a string (carried from the slice before, which ended mid-line). Linear: running
    maxima and sums, no search.
    """
    import numpy as np

    at = np.arange(len(a), dtype=np.int64)
    last_plain = np.maximum.accumulate(np.where(a != 0x5C, at, -1))  # the byte before a slice is never a backslash
    run = np.zeros(len(a), dtype=np.int64)  # backslashes right before each byte
    run[1:] = at[:-1] - last_plain[:-1]
    delimiter = (a == 0x22) & (run % 2 == 0)
    before = np.zeros(len(a) + 1, dtype=np.int64)  # delimiters before each byte
    np.cumsum(delimiter, out=before[1:])
    line_start = np.maximum.accumulate(np.where(a == 0x0A, at + 1, 0))  # 0: no newline before it in this slice
    opened = before[:-1] - before[line_start]
    in_string = (opened % 2 == 1) ^ (inside & (line_start == 0))
    outside = ~in_string
    commas = int(np.count_nonzero((a == 0x2C) & outside))
    braces = int(np.count_nonzero((a == 0x7B) & outside))
    last = int(line_start[-1]) if len(a) else 0
    ends_inside = bool((before[-1] - before[last]) % 2) ^ (inside and last == 0)
    return commas * _VALUE_BYTES + braces * _OBJECT_BYTES, ends_inside


def parse_budget(size: int) -> int:
    """What parsing a file of ``size`` bytes may take (``parse_cost``'s unit)."""
    return max(MIN_PARSE_BUDGET, MAX_PARSE_FACTOR * size)


def too_costly(cost: int, size: int, *, source: str) -> HistoryError:
    return HistoryError(f"not a history: its {size:,} bytes are mostly numbers, empty containers or tiny objects, "
                        f"which would take over {cost >> 20:,} MiB to parse (a history is mostly text; the bound is "
                        f"{MAX_PARSE_FACTOR} times the file's size)", source=source)


def check_parse_cost(data: bytes, *, source: str) -> None:
    """Refuse ``data`` before parsing it when its values would take more than ``parse_budget`` of its size: the size
    limit then bounds memory too. The fast count decides nearly always; the exact one only when it is over."""
    budget = parse_budget(len(data))
    if parse_cost(data) <= budget:
        return
    cost = parse_cost(data, exact=True, stop_above=budget)
    if cost > budget:
        raise too_costly(cost, len(data), source=source)


def check_array_shape(text: str, *, source: str) -> None:
    """Refuse a large document that opens an array whose first item is not an object before parsing it: every
    history format is an object or an array of message objects (an array of 25 M numbers would be parsed only to
    say so). A small one is parsed first, so its syntax or nesting error is the one reported."""
    if len(text) < _SHAPE_CHECK_CHARS:
        return
    found = _ARRAY_START_RE.match(text)
    if found is None or found.group(1) in "{]":
        return
    what = _FIRST_ITEM.get(found.group(1), "numbers")
    raise HistoryError(f"unknown history format (tried stagewise, openai, anthropic; found an array of {what}, where "
                       "a history holds message objects)", source=source)
