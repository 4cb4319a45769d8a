"""``counting.structure.Structure`` takes ``history.fast_init.dict_init``'s __init__ (one per message of a log): the
dataclass semantics stay, keyword-only, defaults, frozen, eq, hash, repr, replace."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.counting.structure import Structure


def test_structure_keeps_dataclass_semantics() -> None:
    s = Structure(tool_calls=1, user_turn=0, reasoning_blocks=2, encrypted_chars=300, replaced_text="r")
    assert s.unbilled_text == ""
    assert s == Structure(tool_calls=1, user_turn=0, reasoning_blocks=2, encrypted_chars=300, replaced_text="r",
                          unbilled_text="")
    assert s != dataclasses.replace(s, unbilled_text="plan")
    assert hash(s) == hash((1, 0, 2, 300, "r", ""))
    assert repr(s) == ("Structure(tool_calls=1, user_turn=0, reasoning_blocks=2, encrypted_chars=300, "
                       "replaced_text='r', unbilled_text='')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.tool_calls = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Structure(1, 0, 2, 300, "r")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Structure(tool_calls=1, user_turn=0, reasoning_blocks=2, encrypted_chars=300)  # type: ignore[call-arg]
    assert [f.name for f in dataclasses.fields(s)] == ["tool_calls", "user_turn", "reasoning_blocks",
                                                       "encrypted_chars", "replaced_text", "unbilled_text"]
