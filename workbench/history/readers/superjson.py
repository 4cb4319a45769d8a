"""Decode superjson envelopes ``{"json": J, "meta": {"values": ..., "v": 1}}`` as stagewise stores them.

Dates stay ISO strings (``toISOString`` output, UTC with a trailing ``Z``): the replay never does date
arithmetic, and strings keep values JSON-equal to what stagewise's estimator stringifies. Keys annotated
``undefined`` are deleted, because ``JSON.stringify`` drops them. Both path syntaxes are read: legacy
(no ``v``) and ``v: 1``. Any other annotation fails loudly, as spec §13.4 asks. No I/O.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.history.errors import HistoryError


def is_envelope(value: Any) -> bool:
    """True for a dict shaped like a superjson envelope (``json`` plus at most ``meta``)."""
    return isinstance(value, dict) and "json" in value and set(value) <= {"json", "meta"}


def decode_superjson_text(text: str | None, *, field: str = "cell") -> Any:
    """Decode one stored cell; SQL NULL (None) stays None."""
    if text is None:
        return None
    try:
        envelope = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HistoryError(f"invalid JSON at char {exc.pos}: {exc.msg}", field=field) from None
    return decode_superjson(envelope, field=field)


def decode_superjson(envelope: Any, *, field: str = "cell") -> Any:
    """Apply an envelope's annotations to its ``json`` value and return the plain value."""
    if not is_envelope(envelope):
        raise HistoryError("not a superjson envelope (expected an object with a 'json' key)", field=field)
    value = envelope["json"]
    meta = envelope.get("meta")
    if meta is None:
        return value
    if not isinstance(meta, dict):
        raise HistoryError(f"superjson 'meta' must be an object, got {type(meta).__name__}", field=field)
    values = meta.get("values")
    if values is None:
        return value
    v1 = meta.get("v") == 1
    box = [value]
    if isinstance(values, list):  # the root value itself was replaced
        _apply_tree(box, [], values, v1=v1, field=field)
    elif isinstance(values, dict):
        for path_text, tree in values.items():
            _apply_tree(box, _parse_path(path_text, v1=v1), tree, v1=v1, field=field)
    else:
        raise HistoryError(f"superjson 'meta.values' must be an object or array, got {type(values).__name__}",
                           field=field)
    return box[0]


def _apply_tree(box: list[Any], path: list[str], tree: Any, *, v1: bool, field: str) -> None:
    # [type] or [type, {subpath: tree}]: children first, then the value itself (superjson's order).
    if not isinstance(tree, list) or not tree:
        raise HistoryError(f"bad superjson annotation {tree!r} at {'.'.join(path)!r}", field=field)
    if len(tree) > 1 and isinstance(tree[1], dict):
        for sub, subtree in tree[1].items():
            _apply_tree(box, path + _parse_path(sub, v1=v1), subtree, v1=v1, field=field)
    _apply(box, path, tree[0], field=field)


def _apply(box: list[Any], path: list[str], kind: Any, *, field: str) -> None:
    shown = ".".join(path) or "<root>"
    if kind not in ("Date", "undefined", "set"):
        raise HistoryError(f"unsupported superjson annotation {kind!r} at path {shown!r}", field=field)
    if kind == "set":  # a Set is stored as its array: nothing to change in a JSON view
        return
    if not path:
        if kind == "undefined":
            box[0] = None
        return
    parent, key = _resolve_parent(box[0], path, field=field)
    if kind == "undefined":
        if isinstance(parent, dict):
            parent.pop(key, None)
        return  # in an array an undefined stays null, exactly as JS prints it
    try:
        value = parent[key]
    except (KeyError, IndexError):
        raise HistoryError(f"superjson path {shown!r} does not exist in the value", field=field) from None
    if value is not None and not isinstance(value, str):  # an invalid Date is stored as null
        raise HistoryError(f"superjson Date at {shown!r} holds {type(value).__name__}, not an ISO string",
                           field=field)


def _resolve_parent(root: Any, path: list[str], *, field: str) -> tuple[Any, Any]:
    """Walk to the container holding the last key.

    A legacy path does not escape its final key, so a dot there looks like a separator: on a miss,
    segments are rejoined with dots until a key matches.
    """
    node = root
    i = 0
    while i < len(path) - 1:
        if isinstance(node, list):
            index = _index(path, i, field=field)
            if not 0 <= index < len(node):
                raise HistoryError(f"superjson path {'.'.join(path)!r} is out of range", field=field)
            node, i = node[index], i + 1
        elif isinstance(node, dict):
            for j in range(i + 1, len(path)):
                key = ".".join(path[i:j])
                if key in node:
                    node, i = node[key], j
                    break
            else:
                return node, ".".join(path[i:])
        else:
            raise HistoryError(f"superjson path {'.'.join(path)!r} does not exist in the value", field=field)
    if isinstance(node, list):
        return node, _index(path, i, field=field)
    if not isinstance(node, dict):
        raise HistoryError(f"superjson path {'.'.join(path)!r} does not exist in the value", field=field)
    return node, path[i]


def _index(path: list[str], i: int, *, field: str) -> int:
    try:
        return int(path[i])
    except ValueError:
        raise HistoryError(f"superjson path {'.'.join(path)!r} indexes an array with {path[i]!r}", field=field) from None


def _parse_path(text: str, *, v1: bool) -> list[str]:
    """Split a superjson path on unescaped dots (``\\.`` is a literal dot; with v1 ``\\\\`` is a backslash)."""
    if "\\" not in text:
        return text.split(".") if text else []
    out: list[str] = []
    segment: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch == "\\" and (nxt == "." or (v1 and nxt == "\\")):
            segment.append(nxt)
            i += 2
            continue
        if ch == ".":
            out.append("".join(segment))
            segment = []
        else:
            segment.append(ch)
        i += 1
    out.append("".join(segment))
    return out
