"""Knobs as YAML: a bounded loader, load and dump, ``--set`` assignments, errors that name file, line and key.

A knobs file is a flat mapping of ~60 scalars, so the loader refuses before building anything what no
such file needs (aliases, deep nesting, huge files, duplicate or non-text keys); an unknown knob gets a
"did you mean". No I/O: YAML goes in and out as text (``decode_knobs_file`` takes the bytes a face read).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from workbench.history.warnings import cut, shown
from workbench.knobs.values import Knobs, did_you_mean, knob_names, knobs_from_dict

YAML_VERSION = 1
# Limits of a knobs file: it is a flat mapping of ~60 scalars, so anything far bigger is a mistake or
# an attack (a 2 KB alias bomb expands to gigabytes; 1M keys take a minute): refused before building.
MAX_YAML_CHARS = 1_000_000
MAX_YAML_NODES = 5_000
MAX_YAML_DEPTH = 20


def parse_knob_assignment(text: str) -> tuple[str, Any]:
    """Parse ``name=value`` from the command line; the value is read as YAML (numbers, booleans, text)."""
    if "=" not in text:
        raise ValueError(f"--set {text!r}: expected knob=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    try:
        value = safe_yaml(raw, source="--set") if raw.strip() else ""
    except (yaml.YAMLError, ValueError):
        value = raw
    return key, value


def dump_knobs(knobs: Knobs) -> str:
    """YAML text with a version field and keys in dataclass order."""
    body = {"version": YAML_VERSION, **dataclasses.asdict(knobs)}
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


class _KnobsLoader(yaml.SafeLoader):
    """SafeLoader that refuses, before building anything, what no knobs file needs: aliases (so an alias
    bomb cannot expand), nesting past MAX_YAML_DEPTH (no RecursionError), more than MAX_YAML_NODES nodes,
    keys that are not text, and duplicate keys (PyYAML lets the last one win silently)."""

    def __init__(self, stream: str, source: str) -> None:
        super().__init__(stream)
        self.source = source
        self.nodes = 0
        self.depth = 0

    def _where(self, mark: Any) -> str:
        return f"{self.source}:{mark.line + 1}" if mark is not None else self.source

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ValueError(f"{self._where(event.start_mark)}: aliases (*{cut(str(event.anchor), 40)}) are not "
                             "allowed in a knobs file")
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise ValueError(f"{self._where(self.peek_event().start_mark)}: more than {MAX_YAML_NODES:,} YAML "
                             "values: a knobs file is a flat mapping of knobs")
        self.depth += 1
        try:
            if self.depth > MAX_YAML_DEPTH:
                raise ValueError(f"{self._where(self.peek_event().start_mark)}: nested more than "
                                 f"{MAX_YAML_DEPTH} levels deep: a knob's value is a number, text or true/false")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            line = key_node.start_mark.line + 1
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise ValueError(f"{self.source}:{line}: knob names must be text, got {shown(key, 40)}")
            if key in seen:
                raise ValueError(f"{self.source}:{line}: duplicate knob {shown(key, 40)} (also on line {seen[key]}): "
                                 "give each knob once")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


    def construct_yaml_int(self, node: Any) -> Any:
        # Python refuses to read an integer of more than 4,300 digits (a ValueError naming no line); no knob
        # holds one, so a long one is refused here, where its line is known.
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_YAML_INT_DIGITS:
            raise ValueError(f"{self._where(node.start_mark)}: a {digits:,}-digit number: no knob takes one")
        return super().construct_yaml_int(node)


_KnobsLoader.add_constructor("tag:yaml.org,2002:int", _KnobsLoader.construct_yaml_int)
MAX_YAML_INT_DIGITS = 4_000  # under Python's 4,300, so the range check names the value


def safe_yaml(text: str, *, source: str = "<yaml>") -> Any:
    """Parse YAML with the knobs file's limits (see ``_KnobsLoader``); limit errors are ValueErrors naming the line."""
    if len(text) > MAX_YAML_CHARS:
        raise ValueError(f"{source}: {len(text):,} characters, over the {MAX_YAML_CHARS:,} of a knobs file")
    loader = _KnobsLoader(text, source)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def decode_knobs_file(data: bytes, *, source: str) -> str:
    """A knobs file's bytes as text; not UTF-8 is an error naming the file and line (UTF-16 is said so)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        raise ValueError(f"{source}:1: not UTF-8 text: looks like UTF-16 or UTF-32; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{source}:{line}: not UTF-8 text (byte {exc.start})") from None


def key_line(text: str, key: str) -> int | None:
    """The line where ``key`` is set in a knobs YAML text (top-level ``key:``), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.split(":", 1)[0].strip().strip("'\"") == key:
            return number
    return None


def read_knobs_yaml(text: str, *, source: str = "<yaml>") -> dict[str, Any]:
    """The knobs a YAML text names, checked: errors name the source, the line and the key.

    A key given twice, an unknown knob ("did you mean ..."), a wrong version or an invalid value is refused;
    ``version`` is dropped. Knobs the text does not name are simply absent, so callers decide what they keep.
    The text goes through ``safe_yaml``: aliases, deep nesting, huge files and non-text keys are refused
    before anything is built.
    """
    try:
        data = safe_yaml(text, source=source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{where}: invalid YAML: {cut(str(problem), 200)}") from None
    except RecursionError:
        raise ValueError(f"{source}: nested too deeply") from None
    if data is None:
        raise ValueError(f"{source}: empty YAML, expected a mapping of knobs")
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of knobs, got {type(data).__name__}")
    data = dict(data)
    version = data.pop("version", YAML_VERSION)
    if version != YAML_VERSION:
        raise ValueError(f"{source}: unsupported version {shown(version)} (this workbench reads version "
                         f"{YAML_VERSION})")
    known = set(knob_names())
    for key in data:
        if key not in known:
            raise ValueError(f"{_where(text, str(key), source)}: unknown knob {shown(key, 60)}"
                             f"{did_you_mean(str(key)[:100])}")
    try:
        knobs_from_dict(data, source=source)
    except ValueError as exc:
        message = str(exc)
        detail = message[len(source) + 2 :] if message.startswith(source + ": ") else message
        raise ValueError(f"{_where(text, detail.split(' ', 1)[0], source)}: {detail}") from None
    return data


def _where(text: str, key: str, source: str) -> str:
    """``source:line`` of the line that sets ``key``, or just ``source``."""
    line = key_line(text, key)
    return f"{source}:{line}" if line is not None else source


def load_knobs(text: str, *, source: str = "<yaml>", base: Knobs | None = None) -> Knobs:
    """Parse knobs YAML (``dump_knobs`` writes all of them); errors name the source, the line and the key.

    A partial YAML changes only the knobs it names: the others come from ``base`` (the defaults when None).
    """
    return knobs_from_dict(read_knobs_yaml(text, source=source), base=base, source=source)

