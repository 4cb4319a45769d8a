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


def test_digest_ignores_interning_and_tells_types_apart() -> None:
    """marshal's version 2 writes values only: an interned key hashes as a built one; 1, 1.0 and True differ."""
    import sys

    key = "".join(["pa", "th"])
    assert key is not sys.intern("path")
    a = _message("x", output={sys.intern("path"): 1})
    b = _message("x", output={key: 1})
    assert a.digest == b.digest
    digests = {_message("x", output=v).digest for v in (1, 1.0, True, "1", [1], (1,), None)}
    assert len(digests) == 7


def test_digest_of_values_marshal_refuses() -> None:
    """Subclasses and other objects are hashed through pickle, never mistaken for the plain value."""
    from workbench.history.jsjson import UNDEFINED

    class Text(str):
        pass

    plain, sub, undefined = (_message("x", output=v) for v in ("UNDEFINED", Text("UNDEFINED"), UNDEFINED))
    assert len({plain.digest, sub.digest, undefined.digest}) == 3
    assert undefined.digest == _message("x", output=UNDEFINED).digest


def test_a_copy_with_other_metadata_digests_as_a_message_built_so() -> None:
    """with_metadata shares the parts' hash with the copy: its digest is that of the same message built anew."""
    a = _message("hello", output={"x": "output"})
    copy = a.with_metadata(usage={"input_tokens": 3}, createdAt=None)
    fresh = Message(id=a.id, role=a.role, parts=a.parts, metadata={"usage": {"input_tokens": 3}})
    assert copy == fresh and copy.digest == fresh.digest
    assert copy.digest != a.digest


def test_a_part_is_counted_on_its_own_with_none_of_the_sessions_log() -> None:
    from workbench.history.session_log import SessionLog

    msgs = tuple(_message(f"m{i}") for i in range(3))
    whole = History(id="s", messages=msgs, source_format="claude_code", source_path="/logs/s.jsonl",
                    meta={"agent": "claude_code"}, log=SessionLog(agent="claude_code", version="2.1.17"))
    part = whole.part("@1", msgs[1:])
    assert (part.id, part.messages, part.source_format, part.source_path) == ("s@1", msgs[1:], "claude_code",
                                                                             "/logs/s.jsonl")
    assert part.log is None and part.meta == {} and whole.log is not None
    assert whole.part("@all").messages == msgs and whole.part("@l", list(msgs[:1])).messages == msgs[:1]
