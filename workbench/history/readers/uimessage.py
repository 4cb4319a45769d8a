"""stagewise's own message array (AI SDK v6 UIMessages) to Messages, losslessly.

stagewise tolerates null entries, missing or null ``parts`` and junk parts, and its estimator and
serializer react to each of those; so does this reader, which keeps every such quirk visible.
No I/O: the caller parses the JSON.
"""

from __future__ import annotations

from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import Message, Part

_OWN_KEYS = ("id", "role", "parts", "metadata")


def message_from_uimessage(item: dict[str, Any]) -> Message:
    """Build one Message from a UIMessage object, keeping odd values so ``to_dict`` gives it back.

    ``parts: null`` (or any non-array) becomes ``parts=None`` with the raw value kept in ``extra``;
    a missing ``parts`` key becomes ``parts=None`` alone. ``metadata: null`` is kept the same way.
    A missing ``id``/``role`` becomes ``""`` (stagewise treats both as falsy); other scalar ids stay as-is.
    An id that is an object or array, or a role that is not text, is refused here: every later step
    hashes ids and reads roles as text, so such a message would load and then crash a replay.
    """
    msg_id = item.get("id", "")
    if isinstance(msg_id, (dict, list)):
        raise HistoryError(f"must be a string, got {'object' if isinstance(msg_id, dict) else 'array'}", field="id")
    role = item.get("role", "")
    extra: dict[str, Any] = {}
    if role is None:
        role, extra["role"] = "", None  # read as no role, written back as null
    if not isinstance(role, str):
        raise HistoryError(f"must be a string, got {type(role).__name__}", field="role")
    parts: tuple[Part, ...] | None = None
    if "parts" in item:
        raw = item["parts"]
        if isinstance(raw, list):
            parts = tuple(Part(data=p) for p in raw)
        else:
            extra["parts"] = raw
    metadata = item.get("metadata")
    if "metadata" in item and metadata is None:
        extra["metadata"] = None
    for key, value in item.items():
        if key not in _OWN_KEYS:
            extra[key] = value
    return Message(id=msg_id, role=role, parts=parts, metadata=metadata, extra=extra)


def messages_from_uimessage_list(items: list[Any], *, source: str) -> list[Message | None]:
    """Read a stagewise history array; null (and other JS-falsy) entries stay None, in place."""
    if not isinstance(items, list):
        raise HistoryError(f"expected an array of messages, got {type(items).__name__}", source=source)
    out: list[Message | None] = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            out.append(message_from_uimessage(item))
        elif item is None or item is False or item == 0 or item == "":
            out.append(None)  # stagewise skips falsy entries everywhere
        else:
            raise HistoryError(f"expected a message object, got {type(item).__name__}", source=source, where=f"[{i}]")
    return out
