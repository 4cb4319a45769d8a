"""``counting.tokens._holds_image`` answers what the replay asked before it, the pre-check below and then the walk
(``_may_hold_image(m) and m.images()``), walking only where an image can be."""

from __future__ import annotations

import itertools

from workbench.counting.tokens import _IMAGE_PART_TYPES, CountCache, _holds_image
from workbench.history.model import History, Message, Part

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
PARTS = [
    {"type": "text", "text": "hi"},
    {"type": "tool-result", "toolCallId": "a", "toolName": "Read", "output": "plain → text"},
    {"type": "tool-result", "toolCallId": "b", "toolName": "Read", "output": [{"type": "text", "text": "x"}]},
    {"type": "tool-result", "toolCallId": "c", "toolName": "Read",
     "output": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG[22:]}}]},
    {"type": "tool-Read", "toolCallId": "d", "state": "input-available", "input": {"file_path": "/a"}},
    {"type": "tool-View", "toolCallId": "e", "input": {"img": {"type": "image_url", "image_url": {"url": PNG}}}},
    {"type": "file", "mediaType": "image/png", "url": PNG},
    {"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,aGk="},
    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
    {"type": "dynamic-tool", "toolName": "t", "input": {}, "output": "done"},
    [{"type": "input_image", "image_url": PNG}],
    "junk",
]


def _may_hold_image(msg: Message) -> bool:
    """The pre-check the replay used before ``_holds_image``: only parts that can carry an image payload walked."""
    for part in msg.parts or ():
        data = part.data
        if isinstance(data, dict) and (data.get("type") in _IMAGE_PART_TYPES or "output" in data):
            return True
    return False


def test_holds_image_is_the_precheck_and_the_walk() -> None:
    seen = set()
    for n in range(3):
        for combo in itertools.product(range(len(PARTS)), repeat=n):
            m = Message(id="m", role="tool", parts=tuple(Part(data=PARTS[i]) for i in combo))
            want = bool(_may_hold_image(m) and m.images())
            fresh = Message(id="m", role="tool", parts=m.parts)  # images() is remembered on the message
            assert _holds_image(fresh) == want, combo
            seen.add(want)
    assert seen == {True, False}


def test_image_messages_by_identity_and_by_content_agree() -> None:
    msgs = tuple(Message(id=f"m{i}", role="tool", parts=(Part(data=PARTS[i]),)) for i in range(len(PARTS)))
    history = History(id="h", messages=msgs, source_format="test", source_path=None, meta={}, log=None)
    by_id = CountCache(by_identity=True).counts_for(history).image_messages()
    by_content = CountCache().counts_for(history).image_messages()
    assert by_id.tolist() == by_content.tolist() == [i for i, m in enumerate(msgs) if _may_hold_image(m) and m.images()]
    assert by_id.dtype == by_content.dtype
