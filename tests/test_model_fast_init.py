"""The __init__ that ``history.fast_init.dict_init`` gives Part, Message, CallUsage and LoggedCall (it writes the
instance dict, for load speed) keeps the dataclass semantics: keyword-only, defaults, frozen, eq, hash, repr, replace."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.history.fast_init import dict_init
from workbench.history.model import Message, Part
from workbench.history.session_log import CallUsage, LoggedCall


def test_part_and_message_keep_dataclass_semantics() -> None:
    p = Part(data={"type": "text", "text": "hi"})
    assert p == Part(data={"type": "text", "text": "hi"}) and hash(p) == hash(Part(data={"type": "text", "text": "hi"}))
    assert repr(p) == "Part(data={'type': 'text', 'text': 'hi'})"
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.data = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        Part({"type": "text"})  # type: ignore[call-arg]
    m = Message(id="a", role="user", parts=(p,))
    assert m.metadata is None and m.extra == {} and m.extra is not Message(id="a", role="user", parts=None).extra
    assert Message(id="a", role="user", parts=(p,), extra=None).extra is None  # type: ignore[arg-type]
    assert m == Message(id="a", role="user", parts=(p,), metadata=None, extra={})
    assert hash(m) == hash(Message(id="a", role="user", parts=(p,)))
    assert repr(m) == f"Message(id='a', role='user', parts=({p!r},), metadata=None, extra={{}})"
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.role = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Message("a", "user", None)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Message(id="a", role="user")  # type: ignore[call-arg]
    r = dataclasses.replace(m, metadata={"k": 1})
    assert r.metadata == {"k": 1} and r.parts == m.parts and [f.name for f in dataclasses.fields(r)] == [
        "id", "role", "parts", "metadata", "extra"]


def test_call_usage_and_logged_call_keep_dataclass_semantics() -> None:
    u = CallUsage(input_tokens=3, output_tokens=2)
    assert (u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens, u.logged_total) == (0, 0, 0, None)
    assert u == CallUsage(input_tokens=3, output_tokens=2) and u != CallUsage(input_tokens=3)
    assert hash(u) == hash((3, 0, 0, 2, 0, None))
    assert repr(u) == ("CallUsage(input_tokens=3, cache_read_tokens=0, cache_write_tokens=0, output_tokens=2, "
                       "reasoning_tokens=0, logged_total=None)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        u.input_tokens = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        CallUsage(3)  # type: ignore[call-arg]
    c = LoggedCall(index=1, source_line=None, usage=u)
    assert c == LoggedCall(index=1, source_line=None, usage=u, model=None, cumulative=None)
    assert hash(c) == hash((1, None, u, None, None)) and {c, dataclasses.replace(c)} == {c}
    assert repr(c) == f"LoggedCall(index=1, source_line=None, usage={u!r}, model=None, cumulative=None)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.index = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        LoggedCall(index=1, usage=u)  # type: ignore[call-arg]


def test_dict_init_is_generated_from_the_fields_and_refuses_what_it_cannot_keep() -> None:
    @dict_init
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Box:
        a: int
        b: str = "x"
        c: list[int] = dataclasses.field(default_factory=list)

    one, two = Box(a=1), Box(a=1)
    assert (one.a, one.b, one.c) == (1, "x", []) and one.c is not two.c and one == two
    assert Box(a=2, b="y", c=[3]) == Box(a=2, b="y", c=[3]) and Box(a=2, c=None).c is None  # type: ignore[arg-type]
    assert Box.__init__.__qualname__.endswith("Box.__init__")
    with pytest.raises(TypeError):
        Box(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Box(a=1, d=2)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 3  # type: ignore[misc]

    @dataclasses.dataclass(kw_only=True)
    class Loose:
        a: int

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True)
    class Positional:
        a: int

    for cls in (Loose, Checked, Positional):
        with pytest.raises(TypeError, match="dict_init"):
            dict_init(cls)
