"""JavaScript string and JSON semantics: UTF-16 lengths, slices, numbers and JSON.stringify output."""

from __future__ import annotations

import json
import math
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.history.jsjson import UNDEFINED, js_number, js_slice, js_string, js_stringify, js_truthy, utf16_len

# Every code point, lone surrogates included (hypothesis leaves out category Cs by default).
any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
any_text = st.text(any_char, max_size=40)
ascii_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=30)
# Keys that are never array indices, so JS keeps them in insertion order just like Python.
plain_keys = st.text(st.sampled_from(string.ascii_letters + "_-. "), min_size=1, max_size=8).map(lambda k: "k" + k)
safe_ints = st.integers(min_value=-(2**53), max_value=2**53)


def _utf16(s: str) -> bytes:
    return s.encode("utf-16-le", "surrogatepass")


def _json(leaves: st.SearchStrategy[object], keys: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    return st.recursive(
        leaves,
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(keys, kids, max_size=4),
        max_leaves=12,
    )


@pytest.mark.slow
@given(_json(st.none() | st.booleans() | safe_ints | ascii_text, plain_keys))
def test_stringify_matches_compact_json_dumps_on_ascii(value: object) -> None:
    """Without floats, non-ASCII or index-like keys, JSON.stringify is json.dumps with no spaces."""
    assert js_stringify(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.slow
@settings(max_examples=200)
@given(
    _json(
        st.none() | st.booleans() | safe_ints | any_text | st.floats(allow_nan=False, allow_infinity=False),
        any_text,
    )
)
def test_stringify_round_trips(value: object) -> None:
    """Whatever we print parses back to the same value, lone surrogates and floats included."""
    out = js_stringify(value)
    assert out is not None
    assert json.loads(out, parse_int=float) == value  # JS numbers are doubles: 48813338574583260 is 4.88e16


@given(any_text)
def test_utf16_len_counts_code_units(s: str) -> None:
    """Astral characters count 2 and lone surrogates 1, like String.length."""
    assert utf16_len(s) == len(_utf16(s)) // 2


@pytest.mark.parametrize("s", ["caf\xe9", "\u0115" * 3, "a\u4e2d", "\ud800x", "x\udfff", "\ud83d\ude00", "\U0001f600",
                               "\xe9\U0001f600", ("\u4e2d" * 500)[1:], ("\U0001f600" + "\u4e2d" * 9)[1:]])
def test_utf16_len_by_storage_width(s: str) -> None:
    """Each width CPython stores a str in (1, 2, 4 bytes a character; a slice of a wide str is narrowed): the
    size check counts only a str that cannot hold an astral character."""
    assert utf16_len(s) == len(_utf16(s)) // 2


@given(any_text, st.integers(min_value=-2, max_value=45))
def test_js_slice_takes_code_units(s: str, n: int) -> None:
    """slice(0, n) keeps the first n UTF-16 units, even when that splits a surrogate pair."""
    assert _utf16(js_slice(s, n)) == _utf16(s)[: 2 * max(n, 0)]


def test_js_slice_leaves_a_lone_high_surrogate() -> None:
    """Cutting an emoji in half leaves its high surrogate, which JSON then escapes."""
    cut = js_slice("e" * 79 + "😀!", 80)
    assert cut == "e" * 79 + "\ud83d"
    assert js_stringify(cut) == '"' + "e" * 79 + '\\ud83d"'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (100.0, "100"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (1 / 3, "0.3333333333333333"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (5e-7, "5e-7"),
        (1.5e-7, "1.5e-7"),
        (123e-20, "1.23e-18"),
        (1e16, "10000000000000000"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (-2.5, "-2.5"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (10**22 + 1, "1e+22"),
        (math.nan, "NaN"),
        (-math.inf, "-Infinity"),
    ],
    ids=repr,
)
def test_js_number(value: float, expected: str) -> None:
    """Numbers print the way JavaScript's Number.prototype.toString does."""
    assert js_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
        ('\b\f\n\r\t"\\', '"\\b\\f\\n\\r\\t\\"\\\\"'),
        ("\x7f é € 😀", '"\x7f é € 😀"'),
        ("\u2028\u2029", '"\u2028\u2029"'),
        ("\ud800", '"\\ud800"'),
        ("\udc00\ud800", '"\\udc00\\ud800"'),
        ("\ud83d\ude00", '"\ud83d\ude00"'),  # two code points that form a valid pair stay raw, as in JS
        ([1.0, 2.5, 1e21, math.nan, math.inf], "[1,2.5,1e+21,null,null]"),
        ({"b": 1, "2": 2, "01": 3, "1": 4}, '{"1":4,"2":2,"b":1,"01":3}'),
        ({"4294967295": 1, "4294967294": 2}, '{"4294967294":2,"4294967295":1}'),
        ({"b": 1, "²": 2, "٣": 3, "1": 4}, '{"1":4,"b":1,"²":2,"٣":3}'),  # only ASCII digits make an index
        ({"a": UNDEFINED, "b": [UNDEFINED, None]}, '{"b":[null,null]}'),
        ((1, "x"), '[1,"x"]'),
        (True, "true"),
        (None, "null"),
    ],
    ids=repr,
)
def test_js_stringify_table(value: object, expected: str) -> None:
    """Escapes, numbers, key order and undefined follow JSON.stringify."""
    assert js_stringify(value) == expected


def test_js_stringify_top_level_undefined_and_unknown_types() -> None:
    """Top-level undefined gives no output; a value JSON cannot hold raises TypeError."""
    assert js_stringify(UNDEFINED) is None
    with pytest.raises(TypeError):
        js_stringify({"when": object()})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([1, [2, [3, None]], None, True, {}], "1,2,3,,,true,[object Object]"),
        ({"a": 1}, "[object Object]"),
        (None, "null"),
        (UNDEFINED, "undefined"),
        (False, "false"),
        (2.0, "2"),
        ("s", "s"),
    ],
    ids=repr,
)
def test_js_string(value: object, expected: str) -> None:
    """String(value): arrays join with commas, null elements vanish, booleans are lower-case."""
    assert js_string(value) == expected


@pytest.mark.parametrize(
    ("value", "truthy"),
    [([], True), ({}, True), ("", False), ("0", True), (0, False), (0.0, False), (math.nan, False), (None, False)],
    ids=repr,
)
def test_js_truthy(value: object, truthy: bool) -> None:
    """[] and {} are truthy in JavaScript; '' and 0 and NaN are not."""
    assert js_truthy(value) is truthy


@pytest.mark.slow
@settings(max_examples=300)
@given(
    _json(
        st.none() | st.booleans() | st.integers() | any_text | st.floats(),
        st.one_of(any_text, st.integers(min_value=0, max_value=2**33).map(str), st.sampled_from(["0", "01", "1a"])),
    )
)
def test_stringify_fast_path_agrees_with_the_exact_walk(value: object) -> None:
    """The C-encoder shortcut is taken only where it prints exactly what the Python walk prints."""
    from workbench.history.jsjson import _slow

    assert js_stringify(value) == _slow(value)


def _stringify_len_by_text(value: object) -> int:
    """``JSON.stringify(value).length`` from the printed text (0 where safeStringifyLength gives 0)."""
    try:
        out = js_stringify(value)
    except (TypeError, RecursionError):
        return 0
    return 0 if out is None else utf16_len(out)


@pytest.mark.slow
@settings(max_examples=300)
@given(
    _json(
        st.none() | st.booleans() | st.integers() | any_text | st.floats(),
        st.one_of(any_text, st.integers(min_value=0, max_value=2**33).map(str), st.sampled_from(["0", "01", "1a"])),
    )
)
def test_stringify_len_matches_the_printed_text(value: object) -> None:
    """The length measured from orjson's bytes is the length of what JSON.stringify prints."""
    from workbench.history.jsjson import js_stringify_len

    assert js_stringify_len(value) == _stringify_len_by_text(value)


@pytest.mark.slow
def test_stringify_len_of_every_code_point() -> None:
    """orjson escapes exactly what JSON.stringify escapes: every code point, in a string, a list and a key."""
    from workbench.history.jsjson import js_stringify_len

    points = [*range(0, 0xD800), *range(0xDC00, 0xDC10), *range(0xE000, 0x10000), 0x10000, 0x1F600, 0x10FFFF]
    for cp in points:
        s = chr(cp) * 2 + "a"
        for value in (s, [s, 1], {s: [s, None, True]}):
            assert js_stringify_len(value) == _stringify_len_by_text(value), hex(cp)


def test_stringify_len_where_orjson_refuses() -> None:
    """Lone surrogates, deep nesting, cycles and non-string keys take the exact path."""
    from workbench.history.jsjson import js_stringify_len

    deep: list[object] = []
    node = deep
    for _ in range(300):  # orjson stops at 254 levels
        child: list[object] = []
        node.append(child)
        node = child
    cyclic: list[object] = []
    cyclic.append(cyclic)
    cases: list[object] = [{"a": "x\ud800y"}, deep, {1: "a", "b": 2}, {"k": 2**64}, [1.0, 5e-7], {"0": 1, "a": 2}]
    for value in cases:
        assert js_stringify_len(value) == _stringify_len_by_text(value)
    assert js_stringify_len(cyclic) == 0  # JS throws on a cycle; safeStringifyLength counts 0
