"""JavaScript string and JSON semantics, reproduced in Python for exact stagewise parity.

stagewise measures everything in UTF-16 code units and with ``JSON.stringify``; Python counts code
points and prints JSON differently (spaces, ``1.0``, raw lone surrogates). These helpers close the
gap. Pure functions, no I/O. The fast paths lean on the C ``json`` encoder; a Python walk only runs
when the fast output could differ from JavaScript (floats, huge ints, integer-like keys, UNDEFINED).
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any


class _Undefined:
    """JavaScript ``undefined``: dropped from objects, ``null`` in arrays, no output at top level."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Any = _Undefined()

_ENCODE_STR = json.encoder.encode_basestring
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# A surrogate that is not half of a well-formed pair; JS writes these as \\udXXX.
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_MAX_SAFE = 2**53
_DIGITS = frozenset("0123456789")
_ARRAY_INDEX_MAX = 2**32 - 2


class _NotPlainJson(Exception):
    pass


def _reject(_obj: Any) -> Any:
    raise _NotPlainJson


def _plain(value: Any) -> bool:
    """Whether the C encoder already writes ``value`` as JavaScript does.

    It differs only on floats (``1.0``, ``Infinity``), integers beyond 2**53, and integer-like keys
    (JS enumerates them first, ascending); anything unusual (subclasses) goes to the exact walk too.
    This looks at containers and scalars, never inside strings, so big tool outputs cost nothing.
    """
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        t = type(v)
        if t is dict:
            for k, x in v.items():
                if type(k) is not str or (k and k[0] in _DIGITS):
                    return False
                if type(x) is not str:
                    push(x)
        elif t is list or t is tuple:
            for x in v:
                if type(x) is not str:
                    push(x)
        elif t is int:
            if not -_MAX_SAFE <= v <= _MAX_SAFE:
                return False
        elif not (v is None or t is bool or t is str):
            return False
    return True


_FAST_TYPES = (str, dict, list)
_ENCODE_STRICT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True, default=_reject).encode


def _compact_header() -> int | None:
    """The bytes ``sys.getsizeof`` counts for a non-ASCII str besides its characters (CPython's compact strings:
    header + (length + 1) x the width of its widest character, 1, 2 or 4 bytes); None where that does not hold."""
    header = sys.getsizeof("\xe9") - 2
    return header if sys.getsizeof("\u0115") - 4 == header == sys.getsizeof("\U0001f600") - 8 else None


_COMPACT_HEADER = _compact_header()


def utf16_len(s: str) -> int:
    """Return JavaScript ``s.length``: astral characters count 2, lone surrogates 1.

    A str whose characters all fit in 2 bytes (CPython stores it so, which its size tells: ``_compact_header``)
    has no astral character, so its length is JavaScript's; a str that may have one is counted by the UTF-16
    encoder, in C (3x a regex count of astral characters on real tool outputs). A str stored otherwise (larger)
    only takes the encoder too.
    """
    if s.isascii():
        return len(s)
    if _COMPACT_HEADER is not None and sys.getsizeof(s) <= _COMPACT_HEADER + 2 * (len(s) + 1):
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def _utf8_utf16_len(data: bytes) -> int:
    """JavaScript length of the text whose UTF-8 encoding is ``data``."""
    if data.isascii():
        return len(data)
    return utf16_len(data.decode("utf-8"))


def js_slice(s: str, n: int) -> str:
    """Return JavaScript ``s.slice(0, n)``; may end in a lone high surrogate, exactly like JS."""
    if n <= 0:
        return ""
    head = s[:n]
    if head.isascii() or not _ASTRAL.search(head):
        return head
    out: list[str] = []
    units = 0
    for ch in s:
        cp = ord(ch)
        width = 2 if cp > 0xFFFF else 1
        if units + width > n:
            if width == 2 and units < n:
                out.append(chr(0xD800 + ((cp - 0x10000) >> 10)))
            break
        out.append(ch)
        units += width
        if units == n:
            break
    return "".join(out)


def js_number(x: float | int) -> str:
    """Format a number as JavaScript ``String(x)`` does (``1``, ``0.1``, ``1e+21``, ``5e-7``)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -_MAX_SAFE <= x <= _MAX_SAFE:
            return str(x)
        try:
            x = float(x)  # JS holds every number as a double
        except OverflowError:
            x = math.inf if x > 0 else -math.inf
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mant, _, exp_s = r.partition("e")
    exp = int(exp_s) if exp_s else 0
    int_part, _, frac = mant.partition(".")
    raw = int_part + frac
    stripped = raw.lstrip("0")
    n = len(int_part) - (len(raw) - len(stripped)) + exp  # value = 0.DIGITS x 10^n
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    e_s = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + e_s
    return sign + digits[0] + "." + digits[1:] + "e" + e_s


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) <= _ARRAY_INDEX_MAX


def js_keys(d: dict[Any, Any]) -> list[Any]:
    """Return a dict's keys in JavaScript property order: array-index keys ascending, then the rest."""
    idx = [k for k in d if isinstance(k, str) and _is_array_index(k)]
    if not idx:
        return list(d)
    idx.sort(key=int)
    seen = set(idx)
    return idx + [k for k in d if k not in seen]


def _has_surrogate(s: str) -> bool:
    if s.isascii():
        return False
    try:
        s.encode("utf-8")  # fails exactly when a surrogate code point is present; faster than a regex
    except UnicodeEncodeError:
        return True
    return False


def _escape_lone_surrogates(out: str) -> str:
    if _has_surrogate(out):
        out = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def _quote(s: str) -> str:
    return _escape_lone_surrogates(_ENCODE_STR(s))


def _key_str(k: Any) -> str:
    if isinstance(k, str):
        return k
    if k is None:
        return "null"
    if isinstance(k, (bool, int, float)):
        return js_number(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


def _slow(value: Any) -> str | None:
    """Walk the value in Python; exact but slower, used only when the fast path may differ."""
    if value is None:
        return "null"
    if value is UNDEFINED:
        return None
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (int, float)):
        out = js_number(value)
        return "null" if out[-1] in "Ny" else out  # NaN, Infinity and -Infinity become null
    if isinstance(value, dict):
        items = []
        keys = {_key_str(k): k for k in value}
        for ks in js_keys(keys):
            v = _slow(value[keys[ks]])
            if v is not None:
                items.append(_quote(ks) + ":" + v)
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join("null" if (v := _slow(x)) is None else v for x in value) + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def js_stringify(value: Any) -> str | None:
    """Return JavaScript ``JSON.stringify(value)``; None where JS returns ``undefined``.

    Raises TypeError for values JSON cannot hold (JS would throw or call toJSON; callers that
    mirror stagewise's ``safeStringifyLength`` count such a value as 0).

    >>> js_stringify({"a": [1.0, 5e-7, "\\u2028"], "b": None})
    '{"a":[1,5e-7,"\\u2028"],"b":null}'
    """
    if isinstance(value, str):
        return _quote(value)
    if not isinstance(value, (dict, list, tuple)):
        return _slow(value)  # a scalar: the Python walk is one step
    try:
        out: str = _ENCODE_STRICT(value)  # first: it also rejects cycles, which the check below would not end on
    except (_NotPlainJson, ValueError):
        return _slow(value)
    if not _plain(value):
        return _slow(value)
    return _escape_lone_surrogates(out)


def _fast_dumps() -> Any:
    """orjson's encoder when installed: ~2.5x the C json encoder on tool outputs."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; the json encoder is the fallback
        return None
    return orjson.dumps


_DUMPS = _fast_dumps()


def js_stringify_len(value: Any) -> int:
    """Return ``JSON.stringify(value).length``, or 0 where stagewise's ``safeStringifyLength`` would.

    For a plain value (``_plain``: no floats, no integers past 2**53, no integer-like keys) orjson writes what
    JavaScript writes, as UTF-8 (the same escapes; checked char by char in tests/test_jsjson.py), so its
    length is measured without building the text. Anything orjson refuses (lone surrogates, cycles, deep
    nesting, other types) takes the exact path below.
    """
    if _DUMPS is not None and type(value) in _FAST_TYPES:
        try:
            out = _DUMPS(value)
        except TypeError:  # orjson.JSONEncodeError
            pass
        else:
            if type(value) is str or _plain(value):
                return _utf8_utf16_len(out)
    try:
        out = js_stringify(value)
    except (TypeError, RecursionError):
        return 0
    return 0 if out is None else utf16_len(out)


def js_truthy(value: Any) -> bool:
    """Return JavaScript truthiness: ``[]`` and ``{}`` are true; ``''``, ``0``, NaN, null are false."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if isinstance(value, (str, int)):
        return bool(value)
    if isinstance(value, float):
        return value == value and value != 0
    return True


def js_string(value: Any) -> str:
    """Return JavaScript ``String(value)`` (arrays join with ``,``, objects are ``[object Object]``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, (bool, int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None or v is UNDEFINED else js_string(v) for v in value)
    return "[object Object]"
