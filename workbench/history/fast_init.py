"""A frozen dataclass's ``__init__`` that writes the instance dict, generated from the class's own fields.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__``; the readers make one
``Part`` per content block, one ``Message`` per message and one ``LoggedCall`` and ``CallUsage`` per model call, so
that call per field is a share of a log's load (readfast, 2026-12-04: about 2% of a ``workbench reality`` run's
instructions over ../shared/real_sessions with the readers' other cuts). Generated rather than written out per class,
so the fields stay the one list of what a class holds: the dataclass still defines them, its signature (what mypy
and ``dataclasses.replace`` see), eq, hash, repr and frozenness; only the body that stores them is replaced.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


_MISSING: Any = object()  # an argument not given: its field's default_factory makes a fresh value


def dict_init(cls: type[T]) -> type[T]:
    """Replace ``cls.__init__`` (a keyword-only, frozen dataclass's, with no ``__post_init__``) by one that writes
    ``self.__dict__`` directly: the same parameters, defaults and default factories."""
    if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen):  # type: ignore[attr-defined]
        raise TypeError(f"dict_init: {cls.__name__} is not a frozen dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"dict_init: {cls.__name__} has a __post_init__, which this __init__ would skip")
    namespace: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = [], []
    for f in dataclasses.fields(cls):
        if not f.init or not f.kw_only:
            raise TypeError(f"dict_init: {cls.__name__}.{f.name} must be a keyword-only init field")
        if f.default is not dataclasses.MISSING:
            namespace[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
            body.append(f"    d[{f.name!r}] = {f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"    d[{f.name!r}] = _f_{f.name}() if {f.name} is _MISSING else {f.name}")
        else:
            params.append(f.name)
            body.append(f"    d[{f.name!r}] = {f.name}")
    source = f"def __init__(self, *, {', '.join(params)}):\n    d = self.__dict__\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # noqa: S102 (the source is built from the class's own field names)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = "The dataclass's own parameters, stored into the instance dict (history.fast_init)."
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
