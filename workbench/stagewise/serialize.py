"""The compact transcript stagewise feeds its summarizer, reproduced byte for byte.

``convertAgentMessagesToCompactMessageHistoryString`` (stagewise.md section 6): user and assistant
messages as ``<user>``/``<assistant>`` blocks, tool parts as one-line markers (``[read: path]``), and a
walk that stops at the newest stored briefing, inlined as ``<previous-chat-history>``. ``host=True``
adds the browser app's markers (shell, lint, ask-user, ...); ``host=False`` is what stagewise's unit
tests and experiment script produce. Chunks are per message so a replay can cache and join them. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from workbench.history.jsjson import UNDEFINED, js_keys, js_number, js_slice, js_string, js_truthy, utf16_len
from workbench.history.model import Message

_XML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&apos;"))


class _JsTypeError(Exception):
    """What stagewise's JS would throw here (e.g. iterating an object); callers fall back."""


def escape_xml(value: Any) -> str:
    """Return stagewise's ``escapeTextForXML(String(value ?? ''))`` (five entities, ``&`` first)."""
    if value is None or value is UNDEFINED:
        return ""
    s = value if isinstance(value, str) else js_string(value)
    for raw, entity in _XML_ESCAPES:
        if raw in s:
            s = s.replace(raw, entity)
    return s


def wrap_previous_briefing(text: str) -> str:
    """Return the block that inlines an earlier briefing; the briefing is deliberately not escaped."""
    return f"<previous-chat-history>{text}</previous-chat-history>"


def _get(obj: Any, key: str) -> Any:
    """JS property read on a JSON value: only objects have our fields; everything else is undefined."""
    if isinstance(obj, dict):
        return obj.get(key, UNDEFINED)
    return UNDEFINED


def _nullish(value: Any) -> bool:
    return value is None or value is UNDEFINED


def _coalesce(*values: Any) -> Any:
    """JS ``a ?? b ?? c``."""
    for v in values[:-1]:
        if not _nullish(v):
            return v
    return values[-1]


def _template(value: Any) -> str:
    """JS template-literal interpolation: like String(), so undefined prints ``undefined``."""
    return js_string(value)


def _iterate(value: Any) -> Iterable[Any]:
    """JS ``for (const x of value ?? [])``: arrays and strings iterate, anything else throws."""
    if _nullish(value):
        return ()
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, str):
        return list(value)  # code points, as for-of over a string
    raise _JsTypeError("not iterable")


def _entries(value: Any) -> list[tuple[str, Any]]:
    """JS ``Object.entries(value)``."""
    if isinstance(value, dict):
        return [(k, value[k]) for k in js_keys(value)]
    if isinstance(value, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(value)]
    if isinstance(value, str):
        units = value.encode("utf-16-le", "surrogatepass")
        return [(str(i), units[2 * i : 2 * i + 2].decode("utf-16-le", "surrogatepass")) for i in range(len(units) // 2)]
    return []


# ── browser host markers (registered only in the running app) ──────────────────────────────

HostSerializer = Callable[[Any, Any, "str | None"], Any]


def _shell_session(inp: Any, out: Any, err: str | None) -> str:
    sid = escape_xml(_coalesce(_get(out, "session_id"), "?"))
    cwd = escape_xml(_coalesce(_get(inp, "cwd"), ""))
    return f"[shell: new session {sid} in {cwd}{err or ''}]"


def _shell_command(inp: Any, out: Any, err: str | None) -> str:
    label = escape_xml(js_slice(js_string(_coalesce(_get(inp, "explanation"), _get(inp, "command"), "")), 80))
    if err:
        return f"[shell: {label}{err}]"
    if js_truthy(out):
        exit_code = _get(out, "exit_code")
        if js_truthy(_get(out, "timed_out")):
            return f"[shell: {label} → timed out]"
        if isinstance(exit_code, (int, float)) and not isinstance(exit_code, bool):
            if exit_code != 0:
                return f"[shell: {label} → exit {js_number(exit_code)}]"
            return f"[shell: {label} → ✓]"
    return f"[shell: {label}]"


def _sandbox(inp: Any, out: Any, err: str | None) -> str:
    label = escape_xml(js_slice(js_string(_coalesce(_get(inp, "explanation"), "")), 80))
    return f"[sandbox: {label}{err or ''}]"


def _lint(inp: Any, out: Any, err: str | None) -> str:
    raw = _get(inp, "paths")
    paths = escape_xml(", ".join("" if _nullish(p) else js_string(p) for p in raw) if isinstance(raw, list) else raw)
    if err:
        return f"[lint: {paths}{err}]"
    summary = _get(out, "summary")
    if js_truthy(summary):
        total = _get(summary, "totalIssues")
        if total == 0 and isinstance(total, (int, float)) and not isinstance(total, bool):
            return f"[lint: {paths} → clean]"
        errors, warnings = _template(_get(summary, "errors")), _template(_get(summary, "warnings"))
        return f"[lint: {paths} → {errors} errors, {warnings} warnings]"
    return f"[lint: {paths}]"


def _docs_search(inp: Any, out: Any, err: str | None) -> str:
    return f"[docs-search: {escape_xml(_get(inp, 'name'))}{err or ''}]"


def _docs_read(inp: Any, out: Any, err: str | None) -> str:
    return f"[docs-read: {escape_xml(_get(inp, 'libraryId'))} → {escape_xml(_get(inp, 'topic'))}{err or ''}]"


def _ask_answers(out: Any, inp: Any) -> str:
    title = _coalesce(_get(inp, "title"), "form")
    if js_truthy(_get(out, "cancelled")) or not js_truthy(_get(out, "completed")):
        reason = _coalesce(_get(out, "cancelReason"), "cancelled")
        return f"[asked user: {escape_xml(title)} → {escape_xml(reason)}]"
    labels: dict[str, Any] = {}
    for step in _iterate(_get(inp, "steps")):
        for field in _iterate(_get(step, "fields")):
            qid = _get(field, "questionId")
            if js_truthy(qid) and isinstance(qid, str):  # a Map keyed by non-strings never matches a string id
                labels[qid] = _coalesce(_get(field, "label"), qid)
    answers = _coalesce(_get(out, "answers"), {})
    pairs = "; ".join(f"{escape_xml(labels.get(qid, qid))}: {escape_xml(val)}" for qid, val in _entries(answers))
    return f"[asked user: {escape_xml(title)} → {pairs}]"


def _ask_user(inp: Any, out: Any, err: str | None) -> str:
    if err:
        return f"[asked user: {escape_xml(_coalesce(_get(inp, 'title'), 'form'))}{err}]"
    if js_truthy(out):
        return _ask_answers(out, inp)
    return f"[asked user: {escape_xml(_coalesce(_get(inp, 'title'), 'form'))}]"


def _watcher(inp: Any, out: Any, err: str | None) -> str:
    title = escape_xml(_coalesce(_get(inp, "title"), "watcher"))
    if err:
        return f"[watcher creation failed: {title}{err}]"
    if not js_truthy(out):
        return f"[watcher requested: {title}]"
    return f"[watcher created: {title} → session {escape_xml(_get(out, 'session_id'))}]"


BROWSER_HOST_SERIALIZERS: dict[str, HostSerializer] = {
    "createShellSession": _shell_session,
    "executeShellCommand": _shell_command,
    "executeSandboxJs": _sandbox,
    "getLintingDiagnostics": _lint,
    "listLibraryDocs": _docs_search,
    "searchInLibraryDocs": _docs_read,
    "askUserQuestions": _ask_user,
    "createWatcherSession": _watcher,
}


def _host_marker(name: str, inp: Any, out: Any, err: str | None) -> str | None:
    """Look a tool up the way a plain JS object registry does, prototype members included."""
    fn = BROWSER_HOST_SERIALIZERS.get(name)
    if fn is None:
        # Object.prototype.toString called with this=undefined; every other inherited member
        # (valueOf, hasOwnProperty, __proto__, ...) throws or returns a non-string: generic marker.
        return "[object Undefined]" if name == "toString" else None
    try:
        rendered = fn(inp, out, err)
    except _JsTypeError:
        return None
    return rendered if isinstance(rendered, str) and rendered else None


# ── core markers ───────────────────────────────────────────────────────────────────────────


def _error_suffix(part: dict[str, Any]) -> str | None:
    if "state" not in part:
        return None
    state = part["state"]
    if state == "output-error":
        msg = part.get("errorText") if "errorText" in part else False
        if not js_truthy(msg):
            msg = "unknown error"
        first = js_string(msg).split("\n", 1)[0]
        return f" ✗ {escape_xml(js_slice(first, 80))}"
    if state == "output-denied":
        return " ✗ denied"
    return None


def _tool_marker(part: dict[str, Any], host: bool) -> str | None:
    if "input" not in part or not js_truthy(part["input"]):
        return None
    err = _error_suffix(part)
    inp = part["input"]
    out = part.get("output", UNDEFINED) if part.get("state") == "output-available" else UNDEFINED
    t = part.get("type", UNDEFINED)
    if t == "tool-read":
        path = escape_xml(_get(inp, "path"))
        return f"[read: {path}{err}]" if err else f"[read: {path}]"
    if t == "tool-multiEdit":
        path = escape_xml(_get(inp, "path"))
        if err:
            return f"[edited: {path}{err}]"
        edits = _get(inp, "edits")
        n = len(edits) if isinstance(edits, list) else "?"
        return f"[edited: {path} ({n} edits)]"
    if t == "tool-write":
        path = escape_xml(_get(inp, "path"))
        if err:
            return f"[wrote: {path}{err}]"
        msg = _get(out, "message")
        if isinstance(msg, str) and "created" in msg:
            return f"[created: {path}]"
        return f"[wrote: {path}]"
    if t == "tool-copy":
        action = "moved" if js_truthy(_get(inp, "move")) else "copied"
        src, dst = escape_xml(_get(inp, "input_path")), escape_xml(_get(inp, "output_path"))
        return f"[{action}: {src} → {dst}{err or ''}]"
    if t == "tool-delete":
        return f"[deleted: {escape_xml(_get(inp, 'path'))}{err or ''}]"
    if t == "tool-grepSearch":
        query = escape_xml(_get(inp, "query"))
        if err:
            return f'[searched: "{query}"{err}]'
        pattern = _get(inp, "include_file_pattern")
        where = f" in {escape_xml(pattern)}" if js_truthy(pattern) else ""
        return f'[searched: "{query}"{where}]'
    if t == "tool-glob":
        return f"[glob: {escape_xml(_get(inp, 'pattern'))}{err or ''}]"
    if not isinstance(t, str):
        raise _JsTypeError("part.type.startsWith is not a function")
    if not t.startswith("tool-"):
        return None
    if host:
        rendered = _host_marker(t[5:], inp, out, err)
        if rendered is not None:
            return rendered
    return f"[{t}{err or ''}]"


def serialize_part(part: Any, *, host: bool = True) -> str | None:
    """Return one assistant part as stagewise's ``safeSerializePart`` does; None when it is dropped."""
    if isinstance(part, dict):
        if part.get("type") == "text":
            return escape_xml(part.get("text"))
        try:
            return _tool_marker(part, host)
        except _JsTypeError:
            t = part.get("type")
            return f"[{t if isinstance(t, str) else 'unknown'}: serialization-error]"
    if isinstance(part, (list, tuple)):
        return None  # an array has no `input` key
    # null.type and `'input' in "x"` throw inside safeSerializePart's try.
    return "[unknown: serialization-error]"


# ── user annotations ───────────────────────────────────────────────────────────────────────


def _join(labels: list[Any]) -> str:
    return ", ".join(js_string(v) for v in labels)


def _attachment_label(a: Any) -> Any:
    name = _get(a, "originalFileName")
    if not _nullish(name):
        return name
    path = _get(a, "path")
    if _nullish(path):
        return "file"
    if not isinstance(path, str):
        raise _JsTypeError("a.path.split is not a function")
    return path.split("/")[-1]


def _mention_label(m: Any) -> Any:
    kind = _get(m, "providerType")
    if kind == "file":
        return _coalesce(_get(m, "mountedPath"), _get(m, "fileName"), "file")
    if kind == "tab":
        return _coalesce(_get(m, "title"), "tab")
    if kind == "workspace":
        return _coalesce(_get(m, "name"), "workspace")
    return _coalesce(kind, "unknown")


def user_annotations(metadata: Any) -> list[str]:
    """Return the ``[attached: ...]`` and ``[mentioned: ...]`` lines (not XML-escaped, as at HEAD)."""
    out: list[str] = []
    if not isinstance(metadata, dict):
        return out
    try:
        attachments = metadata.get("attachments")
        if isinstance(attachments, list) and attachments:
            out.append(f"[attached: {_join([_attachment_label(a) for a in attachments if not _nullish(a)])}]")
        mentions = metadata.get("mentions")
        if isinstance(mentions, list) and mentions:
            out.append(f"[mentioned: {_join([_mention_label(m) for m in mentions if not _nullish(m)])}]")
    except _JsTypeError:
        pass  # stagewise keeps whatever annotations were built before the throw
    return out


# ── messages and histories ─────────────────────────────────────────────────────────────────


def serialize_message(msg: Message | None, *, host: bool = True) -> str | None:
    """Return the ``<user>``/``<assistant>`` chunk a message contributes; None for other roles.

    The ``<previous-chat-history>`` block of a briefing-carrying message is not included: see
    ``serialize_compact_history`` and ``wrap_previous_briefing``.
    """
    if not msg:
        return None
    role = msg.role
    if role == "assistant":
        chunks = [s for p in msg.parts or () if (s := serialize_part(p.data, host=host)) is not None]
        return f"<assistant>{chr(10).join(chunks)}</assistant>"
    if role == "user":
        lines = user_annotations(msg.metadata)
        for p in msg.parts or ():
            d = p.data
            if isinstance(d, dict) and d.get("type") == "text":
                lines.append(escape_xml(d.get("text")))
        return f"<user>{chr(10).join(lines)}</user>"
    return None


def _briefing_of(msg: Message | None) -> Any:
    """The message's ``metadata.compressedHistory`` if truthy (the serializer's stop signal)."""
    if not msg or not isinstance(msg.metadata, dict):
        return None
    value = msg.metadata.get("compressedHistory")
    return value if js_truthy(value) else None


def serialized_from_index(messages: Sequence[Message | None]) -> int:
    """Return the index of the message where the backward walk stops at a briefing, else 0."""
    for i in range(len(messages) - 1, -1, -1):
        if _briefing_of(messages[i]) is not None:
            return i
    return 0


def previous_briefing_chars(messages: Sequence[Message | None]) -> int:
    """Return the UTF-16 length of the last truthy briefing in ``messages`` (0 if none)."""
    for i in range(len(messages) - 1, -1, -1):
        value = _briefing_of(messages[i])
        if value is not None:
            if isinstance(value, str):
                return utf16_len(value)
            return len(value) if isinstance(value, list) else 0
    return 0


def serialize_compact_history(messages: Sequence[Message | None], *, host: bool = True) -> str:
    """Return ``convertAgentMessagesToCompactMessageHistoryString(messages, host?)``."""
    chunks: list[str] = []
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if not msg:
            continue
        chunk = serialize_message(msg, host=host)
        if chunk is not None:
            chunks.append(chunk)
        briefing = _briefing_of(msg)
        if briefing is not None:
            chunks.append(wrap_previous_briefing(js_string(briefing)))
            break
    chunks.reverse()
    return "\n".join(chunks)
