"""The history model: frozen messages in the AI SDK v6 UIMessage shape that stagewise stores.

Every reader converts its format into these values; the estimator and the serializer read them.
A Part keeps its original JSON object (key order included) so that stagewise's
``JSON.stringify(part).length`` is reproduced exactly. Values are pure: no I/O here.
"""

from __future__ import annotations

import hashlib
import io
import json
import marshal
import pickle
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workbench.history.fast_init import dict_init
from workbench.history.session_log import CallUsage, SessionLog

if TYPE_CHECKING:
    from workbench.history.images import ImageRef

from workbench.history.warnings import LoadWarning

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

_UNREAD: Any = object()

PartKind = Literal["text", "reasoning", "tool", "tool-result", "file", "step-start", "other"]


def _digest_bytes(obj: Any) -> bytes:
    """A content hash of a JSON-like value: equal values (same types, same key order) hash equal.

    Only in-memory caches use it, so the bytes hashed need not be stable across versions. marshal's
    version 2 (no references, no interning flags) writes the value itself, not which objects are
    shared, and is the fastest serializer of plain values; anything it refuses (subclasses, other
    objects) goes to pickle in fast mode (no memo either), then to JSON text. Each kind of bytes is
    tagged, so the three never collide. SHA-256 (16 bytes of it) runs on the CPU's SHA instructions
    where it has them: ~1.8x blake2b. Every message of a new history is hashed once, so this shows.
    """
    try:
        data = marshal.dumps(obj, 2)
        tag = b"m"
    except ValueError:
        try:
            buf = io.BytesIO()
            pickler = pickle.Pickler(buf, protocol=5)
            pickler.fast = True
            pickler.dump(obj)
            data = buf.getvalue()
            tag = b"p"
        except Exception:  # noqa: BLE001 - a value pickle refuses: hash its JSON text instead
            text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False, default=str)
            data = text.encode("utf-8", "surrogatepass")
            tag = b"j"
    h = hashlib.sha256(tag)
    h.update(data)
    return h.digest()[:16]


def _digest(obj: Any) -> str:
    return _digest_bytes(obj).hex()


def tool_name_of(data: dict[str, Any]) -> str | None:
    """``Part.tool_name`` of a part's JSON object: for loops that read the objects directly (``bill.track_tasks``
    asks for every assistant part of every window)."""
    name = data.get("toolName")
    if isinstance(name, str):
        return name
    t = data.get("type")
    if isinstance(t, str) and t.startswith("tool-") and t != "tool-result":
        return t[5:]
    return None


@dict_init
@dataclass(frozen=True, kw_only=True, eq=False)
class Part:
    """One message part, kept as its original JSON object.

    ``data`` is the part exactly as the source had it (a dict for every real part; any other
    JSON value is kept so that stagewise's tolerance of junk parts can be reproduced).
    Treat it as read-only: parts are shared between runs and caches.
    """

    data: Any

    # -- identity -------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Part) and self.data == other.data

    def __hash__(self) -> int:
        return hash(_digest(self.data))

    # -- typed views ----------------------------------------------------------------------
    @property
    def type(self) -> str:
        return str(self.data.get("type", "")) if isinstance(self.data, dict) else ""

    @property
    def kind(self) -> PartKind:
        t = self.type
        if t == "text":
            return "text"
        if t == "reasoning":
            return "reasoning"
        if t == "tool-result":
            return "tool-result"
        if t == "dynamic-tool" or t.startswith("tool-"):
            return "tool"
        if t == "file":
            return "file"
        if t == "step-start":
            return "step-start"
        return "other"

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default) if isinstance(self.data, dict) else default

    @property
    def text(self) -> str | None:
        value = self.get("text")
        return value if isinstance(value, str) else None

    @property
    def tool_name(self) -> str | None:
        """The tool's name: ``toolName`` for dynamic tools and results, else from ``tool-<name>``."""
        return tool_name_of(self.data) if isinstance(self.data, dict) else None

    @property
    def tool_call_id(self) -> str | None:
        value = self.get("toolCallId")
        return value if isinstance(value, str) else None

    @property
    def state(self) -> str | None:
        value = self.get("state")
        return value if isinstance(value, str) else None

    @property
    def input(self) -> Any:
        return self.get("input")

    @property
    def output(self) -> Any:
        return self.get("output")

    @property
    def error_text(self) -> str | None:
        value = self.get("errorText")
        return value if isinstance(value, str) else None

    def to_dict(self) -> Any:
        return self.data


def text_part(text: str) -> Part:
    return Part(data={"type": "text", "text": text})


def tool_call_part(
    name: str,
    call_id: str,
    input: Any,
    *,
    state: str = "input-available",
    output: Any = None,
    error_text: str | None = None,
) -> Part:
    """A static AI SDK tool part (``tool-<name>``); like the AI SDK it carries no toolName key."""
    data: dict[str, Any] = {"type": f"tool-{name}", "toolCallId": call_id, "state": state, "input": input}
    if state == "output-available" and output is not None:
        data["output"] = output
    if state == "output-error":
        data["errorText"] = error_text or ""
    return Part(data=data)


def tool_result_part(name: str | None, call_id: str | None, output: Any, *, is_error: bool = False) -> Part:
    """A tool result that arrived as its own message (OpenAI ``tool`` role, Anthropic tool_result)."""
    data: dict[str, Any] = {"type": "tool-result"}
    if call_id is not None:
        data["toolCallId"] = call_id
    if name is not None:
        data["toolName"] = name
    data["output"] = output
    if is_error:
        data["isError"] = True
    return Part(data=data)



# What a Message remembers of its parts alone (``text``, ``images``): a copy with other metadata keeps it.
_PARTS_MEMOS = ("_text", "_images")


@dict_init
@dataclass(frozen=True, kw_only=True, eq=False)
class Message:
    """One message. ``parts`` is None when the source had no parts array (stagewise tolerates it).

    ``metadata`` is stagewise's metadata object (createdAt, compressedHistory, attachments, mentions,
    envState, ...) or None. ``extra`` keeps any other top-level keys so writers lose nothing.
    """

    id: str
    role: str
    parts: tuple[Part, ...] | None
    metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Message)
            and self.id == other.id
            and self.role == other.role
            and self.parts == other.parts
            and self.metadata == other.metadata
            and self.extra == other.extra
        )

    def __hash__(self) -> int:
        return hash((self.id, self.role, self.digest))

    @property
    def digest(self) -> str:
        """A content hash, used to cache token counts and serializations per message."""
        cached = self.__dict__.get("_digest")
        if cached is None:
            parts = None if self.parts is None else [p.data for p in self.parts]
            cached = _digest((self.id, self.role, parts, self.metadata, self.extra))  # the fields __eq__ compares
            object.__setattr__(self, "_digest", cached)
        return cached

    # -- metadata views -------------------------------------------------------------------
    def meta(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default) if isinstance(self.metadata, dict) else default

    @property
    def briefing(self) -> str | None:
        """The briefing stored on this message (stagewise ``metadata.compressedHistory``)."""
        value = self.meta("compressedHistory")
        return value if isinstance(value, str) else None

    @property
    def text(self) -> str:
        """All text parts joined: what a human reads as this message's words.

        Remembered (frozen parts): the pins, turns and bills of every replayed window read it per message."""
        cached = self.__dict__.get("_text")
        if cached is not None:
            return cached
        # p.kind == "text" and p.text, inlined: a JSON type is "text" exactly when str() of it is
        texts = []
        for p in self.parts or ():
            data = p.data
            if isinstance(data, dict) and data.get("type") == "text":
                value = data.get("text")
                texts.append(value if isinstance(value, str) and value else "")
        cached = "\n".join(texts)
        object.__setattr__(self, "_text", cached)
        return cached

    def tool_parts(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts or () if p.kind in ("tool", "tool-result"))

    @property
    def usage(self) -> CallUsage | None:
        """The provider's billed usage of the model call that wrote this message, where the log has it.

        Remembered (a frozen value of frozen metadata): every replay of a log window reads it per message.
        """
        cached = self.__dict__.get("_usage", _UNREAD)
        if cached is _UNREAD:
            cached = CallUsage.from_logged(self.meta("usage"))
            object.__setattr__(self, "_usage", cached)
        return cached

    @property
    def logged_context(self) -> int | None:
        """The agent's own logged measure of the whole context right after this message, where it logged one
        (Codex's estimate of the context it rebuilt after a compaction)."""
        value = self.meta("loggedContextTokens")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def logged_tokens(self) -> int | None:
        """The agent's own count of this one message, where its log records it: Copilot CLI counts a Claude
        model's answer as the output tokens the call reported (``loggedTokens``; @github/copilot 1.0.40 app.js
        ``PB``), hidden thinking included."""
        value = self.meta("loggedTokens")
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    @property
    def source_line(self) -> int | None:
        """The line of the agent's log this message came from (Claude Code, Codex), when known."""
        value = self.meta("sourceLine")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def images(self) -> tuple[ImageRef, ...]:
        """The images in this message (file parts, image blocks, images inside tool outputs); cached."""
        cached = self.__dict__.get("_images")
        if cached is None:
            from workbench.history.images import message_images

            cached = message_images(self)
            object.__setattr__(self, "_images", cached)
        return cached

    def with_metadata(self, **changes: Any) -> Message:
        """A copy with metadata keys set (a value of None removes the key)."""
        meta = dict(self.metadata or {})
        for key, value in changes.items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        extra = {k: v for k, v in self.extra.items() if k != "metadata"}  # a kept `metadata: null` would win
        copy = Message(id=self.id, role=self.role, parts=self.parts, metadata=meta or None, extra=extra)
        for memo in _PARTS_MEMOS:  # read from the parts alone, which the copy shares: not worked out again
            if memo in self.__dict__:
                object.__setattr__(copy, memo, self.__dict__[memo])
        return copy

    def to_dict(self) -> dict[str, Any]:
        """The UIMessage object: the canonical on-disk form (one per JSONL line)."""
        out: dict[str, Any] = {"id": self.id, "role": self.role}
        if self.parts is not None:
            out["parts"] = [p.data for p in self.parts]
        if self.metadata is not None:
            out["metadata"] = self.metadata
        out.update(self.extra)
        return out


@dataclass(frozen=True, kw_only=True, eq=False)
class History:
    """A whole recorded conversation, in order, with where it came from.

    ``log`` holds what an agent's own session log adds (billed usage per call, version, model, logged
    compactions with their real summaries); None for plain transcripts. ``warnings`` are what the reader
    accepted but a person should see (a cut-off last line, records it skipped), each naming file, line and
    field; they take no part in equality or the digest.
    """

    id: str
    messages: tuple[Message, ...]
    source_format: str = "canonical"
    source_path: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    log: SessionLog | None = None
    warnings: tuple[LoadWarning, ...] = ()

    def __len__(self) -> int:
        return len(self.messages)

    def part(self, tag: str, messages: tuple[Message, ...] | list[Message] | None = None) -> History:
        """Messages of this history (all of them by default) counted on their own, as the estimate counts a
        window: id ``{id}{tag}``, the same source, and no log or meta, so that none of the session's usage or
        logged compactions applies to them."""
        return History(id=f"{self.id}{tag}", messages=tuple(self.messages if messages is None else messages),
                       source_format=self.source_format, source_path=self.source_path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, History) and self.id == other.id and self.messages == other.messages

    def __hash__(self) -> int:
        return hash((self.id, self.digest))

    @property
    def digest(self) -> str:
        cached = self.__dict__.get("_digest")
        if cached is None:
            h = hashlib.blake2b(digest_size=16)
            for m in self.messages:
                h.update(m.digest.encode())
            cached = h.hexdigest()
            object.__setattr__(self, "_digest", cached)
        return cached

    def without_briefings(self) -> History:
        """The same conversation with every stored briefing removed (for a counterfactual replay).

        Remembered on the history: every replay asks, and scanning 100k messages each time shows.
        """
        cached = self.__dict__.get("_without_briefings")
        if cached is None:
            if not any(isinstance(md := m.metadata, dict) and isinstance(md.get("compressedHistory"), str)
                       for m in self.messages):  # m.briefing is not None, inlined: every replay asks
                cached = True  # "itself": a reference to self would need the cyclic GC (True survives pickling)
            else:
                msgs = tuple(m.with_metadata(compressedHistory=None) if m.briefing is not None else m
                             for m in self.messages)
                cached = History(id=self.id, messages=msgs, source_format=self.source_format,
                                 source_path=self.source_path, meta=self.meta, log=self.log,
                                 warnings=self.warnings)
            object.__setattr__(self, "_without_briefings", cached)
        return cached if isinstance(cached, History) else self

    def briefing_indices(self) -> tuple[int, ...]:
        """Indices of messages that carry a real briefing (stagewise compression points)."""
        return tuple(i for i, m in enumerate(self.messages) if m.briefing is not None)
