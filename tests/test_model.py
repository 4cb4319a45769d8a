"""The history model's identity helpers: content digests and the remembered briefing-free copy."""

from __future__ import annotations

import json
import pickle

from workbench.history.model import History, Message, Part, text_part


def _message(text: str, **data: object) -> Message:
    parts = (text_part(text), Part(data={"type": "tool-read", "toolCallId": "t1", "input": {"path": "a.ts"}, **data}))
    return Message(id="m1", role="assistant", parts=parts, metadata={"createdAt": "2030-01-01T00:00:00.000Z"})


def test_digest_depends_on_content_not_on_object_sharing() -> None:
    """Equal messages hash equal whether or not their strings are shared objects; any change shows."""
    shared = "".join(["out", "put"])
    a = _message("hello", output={"x": shared, "y": shared})
    b = _message("hello", output=json.loads('{"x": "output", "y": "output"}'))
    assert a == b and a.digest == b.digest
    assert _message("hello!", output={"x": "output", "y": "output"}).digest != a.digest
    assert _message("hello", output={"x": "output", "y": "output", "z": 1}).digest != a.digest
    assert _message("hello", output={"y": "output", "x": "output"}).digest != a.digest  # key order is content
    assert pickle.loads(pickle.dumps(a)).digest == a.digest


def test_without_briefings_is_remembered_and_survives_pickling() -> None:
    """The briefing-free copy is built once; a history without briefings is its own copy, also after pickling."""
    plain = History(id="h", messages=(_message("a"),))
    assert plain.without_briefings() is plain
    copy = pickle.loads(pickle.dumps(plain))
    assert copy.without_briefings() is copy
    briefed = History(id="h", messages=(_message("a").with_metadata(compressedHistory="so far"),))
    stripped = briefed.without_briefings()
    assert stripped is briefed.without_briefings()
    assert stripped.messages[0].briefing is None and briefed.messages[0].briefing == "so far"
    assert pickle.loads(pickle.dumps(briefed)).without_briefings() == stripped
