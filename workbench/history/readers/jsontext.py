"""JSON and JSONL text to Python values, with every failure located by file, line and column.

Readers work on records ``(line, where, value)``: ``line`` is the JSONL line number (None inside a
JSON document) and ``where`` names the item inside a document (``messages[3]``). Keeping both lets
one converter report ``chat.jsonl:17: ...`` or ``chat.json: messages[3]: ...``. No I/O.
"""

from __future__ import annotations

import functools
import gc
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

from workbench.history.errors import HistoryError
from workbench.history.warnings import LoadWarning

Record = tuple[int | None, str | None, Any]
T = TypeVar("T")
P = ParamSpec("P")


def gc_paused(fn: Callable[P, T]) -> Callable[P, T]:
    """Run ``fn`` with the cyclic GC off: building 100k messages otherwise triggers collections that
    rescan every object made so far, which doubles load time. Nothing here creates cycles."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


# Deeper JSON is refused before parsing: Python's decoder, pickle and every recursive walker of the
# engine would otherwise hit the interpreter's recursion limit (1,000 frames) somewhere later. Real
# histories nest a few dozen levels at most.
MAX_JSON_DEPTH = 200
_STRING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET_RE = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (brackets inside strings do not count).

    Linear: strings and everything but brackets are removed by two regex passes, then a running sum.
    """
    skeleton = _NOT_BRACKET_RE.sub("", _STRING_RE.sub("", text))
    if not skeleton:
        return 0
    import numpy as np

    codes = np.frombuffer(skeleton.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == 91) | (codes == 123), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max())


def check_depth(text: str, *, source: str, line: int | None = None, field: str | None = None) -> None:
    """Raise a located HistoryError when ``text`` nests deeper than MAX_JSON_DEPTH (cheap when it cannot)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise HistoryError(f"JSON nested {depth:,} levels deep (the limit is {MAX_JSON_DEPTH})", source=source,
                           line=line, field=field)


def strip_bom(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def history_id(source: str) -> str:
    """A history's id from its file name: ``runs/chat.jsonl`` -> ``chat``; ``<text>`` -> ``history``."""
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    if not name or name.startswith("<"):
        return "history"
    if name.endswith(".gz") and len(name) > 3:  # chat.jsonl.gz is chat, like chat.jsonl
        name = name[:-3]
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return "history" if not stem.strip(".") else stem  # an upload named ".." names no file


def source_path(source: str) -> str | None:
    """The source as a path, or None for made-up names such as ``<text>``."""
    return None if source.startswith("<") else source


def json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """The decoder's message, saying so when the text simply stops early (a cut-off download or copy)."""
    if not text[exc.pos :].strip():
        return f"invalid JSON: {exc.msg} (the text ends early: truncated?)"
    return f"invalid JSON: {exc.msg}"


def load_json(text: str, *, source: str) -> Any:
    """Parse a whole JSON document; an empty text or a syntax error raises a located HistoryError."""
    text = strip_bom(text)
    if not text.strip():
        raise HistoryError("empty file", source=source)
    check_depth(text, source=source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise HistoryError(json_problem(exc, text), source=source, line=exc.lineno, column=exc.colno) from None


def _fast_codec() -> tuple[Callable[[str | bytes | memoryview], Any], Callable[[Any], bytes]] | None:
    """orjson's loads and dumps when installed: agent logs are large and it parses them in well under half the
    time json takes."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; the stdlib parser is the fallback
        return None
    return orjson.loads, orjson.dumps


_FAST = _fast_codec()


def loads_line(line: str) -> Any:
    """One JSON value, exactly as ``json.loads`` reads it, faster where that is safe.

    Where orjson reads differently the line goes to json: anything it refuses that json reads (NaN, Infinity,
    lone surrogates like "\ud800"), and an integer outside 64 bits, which it turns into a float. Such a float
    is at least 9.2e18, so orjson writes it back with an ``e+`` exponent: a line whose value writes back with
    none holds no such float (a line with an ``e+`` in its text goes to json too, which is merely slower).
    """
    if _FAST is not None:
        loads, dumps = _FAST
        try:
            value = loads(line)
        except ValueError:
            return json.loads(line)
        if b"e+" not in dumps(value):
            return value
    return json.loads(line)


def jsonl_records(text: str, *, source: str, warnings: list[LoadWarning] | None = None,
                  corrupt: list[HistoryError] | None = None) -> list[Record]:
    """Parse one JSON value per line (blank lines skipped, numbering kept).

    With a ``warnings`` list, a last line that is cut off (no newline after it, or JSON that simply
    stops: an agent still writing the file) is left out with a warning naming it, when earlier lines
    parsed; any other bad line, or a cut-off line with nothing before it, raises. With a ``corrupt`` list,
    a line that is not one JSON value is left out and its located error added there, for the caller to
    raise or turn into a warning once the format is known (``corrupt_line_warnings``).
    """
    text = strip_bom(text)
    loads = loads_line
    out: list[Record] = []
    append = out.append
    # split on "\n" only: str.splitlines would also cut at U+2028 inside JSON strings
    lines = text.split("\n")
    last = len(lines)
    while last > 0 and (not lines[last - 1] or lines[last - 1].isspace()):
        last -= 1
    for number, line in enumerate(lines, 1):
        if not line or line.isspace():
            continue
        check_depth(line, source=source, line=number)
        try:
            append((number, None, loads(line)))
        except json.JSONDecodeError as exc:
            problem = json_problem(exc, line)
            if warnings is not None and number == last and out and (number == len(lines) or "ends early" in problem):
                warnings.append(cut_off_warning(source, number, problem))
                break
            error = HistoryError(problem, source=source, line=number, column=exc.colno)
            if corrupt is None:
                raise error from None
            corrupt.append(error)
    if not out:
        if corrupt:
            raise corrupt[0]
        raise HistoryError("empty file", source=source)
    return out


# Formats whose files are logs an agent appends to as it runs: a kill mid-write, or two writers, leave a damaged
# line (two records glued on one line, half a record) that need not spoil the thousands around it.
AGENT_LOG_FORMATS = frozenset({"claude_code", "codex", "copilot_cli", "gemini_cli", "pi"})
# More damaged places than this share of the good lines (and than MIN_CORRUPT_LINES): not a damaged log but no log.
MAX_CORRUPT_SHARE = 0.25
MIN_CORRUPT_LINES = 3


def damaged_sites(corrupt: list[HistoryError]) -> int:
    """How many places the damage is at, counting a run of adjacent bad lines as one less than its length (at least
    one): a record split over two lines leaves two bad lines from one kill, so a short log is not refused for one
    split record, while a long run of garbage still counts nearly line by line."""
    lines = sorted(e.line for e in corrupt if e.line is not None)
    sites = len(corrupt) - len(lines)
    run = 0
    for i, n in enumerate(lines):
        run = run + 1 if i and n == lines[i - 1] + 1 else 1
        if run != 2:  # the second line of a run is the split record's other half
            sites += 1
    return sites


def corrupt_line_warnings(kind: str, corrupt: list[HistoryError], good: int) -> list[LoadWarning]:
    """Warnings for the lines ``jsonl_records`` left out of a ``kind`` file that held ``good`` good lines.

    An agent log's damaged lines are skipped with a warning each; in any other format, or when the places they are
    at (``damaged_sites``) are more than ``MAX_CORRUPT_SHARE`` of the good lines (and than ``MIN_CORRUPT_LINES``),
    the first one's error is raised.
    """
    if not corrupt:
        return []
    if kind not in AGENT_LOG_FORMATS or damaged_sites(corrupt) > max(MIN_CORRUPT_LINES, int(good * MAX_CORRUPT_SHARE)):
        raise corrupt[0]
    out = []
    for error in corrupt:
        glued = " (two records glued on one line?)" if error.problem.startswith("invalid JSON: Extra data") else ""
        out.append(LoadWarning(source=error.source or "<text>", line=error.line,
                               message=f"line skipped: {error.problem}{glued}; the rest of the log is read"))
    return out


def cut_off_warning(source: str, number: int, problem: str) -> LoadWarning:
    return LoadWarning(source=source, line=number,
                       message=f"last line left out: it is cut off ({problem}; is an agent still writing the file?)")
_UTF8_BOM = b"\xef\xbb\xbf"
_NOT_SPACE_RE = re.compile(rb"\S")
_HUGE = 2.0**63


def _scan(value: Any) -> tuple[bool, int]:
    """(whether ``value`` holds a float of magnitude 2**63 or more or not finite, how deep its lists and objects
    nest: ``json_depth`` of its text, ``{}`` 1, a scalar 0).

    orjson reads an integer outside 64 bits (below -2**63, from 2**64 on) as such a float, where json keeps the
    int; a float literal that large is rare, and json reads it the same. One walk, a level at a time, visits
    the containers and skips the strings (most of an agent log's bytes): cheaper than scanning the text for
    runs of digits or counting its brackets.
    """
    # the builtins as locals, and strings (most values of a log: 109k of 187k in ../shared/real_sessions) let
    # through first: ~7% less time for this walk (3 runs of it over those logs' values)
    _dict, _list, _str, _float = dict, list, str, float
    if type(value) is not _dict and type(value) is not _list:
        return type(value) is _float and not -_HUGE < value < _HUGE, 0
    huge = False
    depth = 0
    level = [value]
    while level:
        depth += 1
        below = []
        for v in level:
            for x in v.values() if type(v) is _dict else v:
                t = type(x)
                if t is _str:
                    continue
                if t is _dict or t is _list:
                    below.append(x)
                elif t is _float and not -_HUGE < x < _HUGE:
                    huge = True
        level = below
    return huge, depth


def jsonl_bytes_records(data: bytes) -> list[Record] | None:
    """``jsonl_records`` of the UTF-8 text ``data`` holds, parsed from the bytes; None where only the text can tell.

    orjson reads UTF-8 bytes itself (and refuses invalid UTF-8), so an agent log need not be decoded into one
    big string first: a third of its reading time. Every value is ``loads_line``'s, so the records are the text
    path's. None when a line fails here (the text path then raises its located error, UTF-8 problems first,
    leaves a cut-off last line out with a warning, or reads what orjson refuses: NaN, lone surrogates, blank
    lines of non-ASCII spaces), when a line has brackets enough that ``check_depth`` may refuse it, or when
    fewer than two lines hold a value (one line may be a whole JSON document, which the text path tells apart).
    """
    if _FAST is None:
        return None
    loads = _FAST[0]
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    first_end = data.find(b"\n")
    if first_end < 0 or _NOT_SPACE_RE.search(data, first_end) is None:
        return None  # one line: maybe a whole JSON document, which the text path tells apart (no parse here)
    out: list[Record] = []
    append = out.append
    # Lines as views of ``data`` (orjson reads a memoryview in place): no copy of every line, as split would make.
    # UTF-8 never has the byte 0x0A inside a character, so the lines are split(b"\n")'s, numbered the same.
    view, find, size = memoryview(data), data.find, len(data)
    start, number = 0, 0
    while start <= size:
        end = find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        if end > start:
            try:
                value = loads(view[start:end])
            except ValueError:
                if data[start:end].isspace():  # a blank line (orjson refuses those): skipped, as split's were
                    start = end + 1
                    continue
                return None
            huge, depth = _scan(value)
            if depth > MAX_JSON_DEPTH:  # check_depth's rule: the text path refuses the line, located
                return None
            if huge:  # maybe an integer past 64 bits, which orjson reads as a float: json's value
                value = json.loads(data[start:end].decode("utf-8"))
            append((number, None, value))
        start = end + 1
    return out if len(out) >= 2 else None


def array_records(items: Iterable[Any], *, name: str = "messages") -> list[Record]:
    """Records for the items of a JSON array, named ``messages[i]`` in errors."""
    return [(None, f"{name}[{i}]", item) for i, item in enumerate(items)]


def locate(exc: HistoryError, record: Record, *, source: str) -> HistoryError:
    """The error with the record's file, line and item filled in."""
    return exc.located(source=source, line=record[0], where=record[1])


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages such as 'must be a string, got int'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def require_object(value: Any, *, what: str = "a message object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise HistoryError(f"expected {what}, got {type_name(value)}")
    return value


def optional_str(obj: dict[str, Any], key: str, *, field: str | None = None) -> str | None:
    """``obj[key]`` when it is a string, None when absent or null; anything else is an error."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise HistoryError(f"must be a string, got {type_name(value)}", field=field or key)
