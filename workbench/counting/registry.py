"""litellm's price registry (``model_prices_and_context_window_backup.json``), read without importing litellm,
and a small disk cache of the entries we look up, so a process start does not parse the whole file.

The file is 3.5 MB; parsing it was ~13 ms of a first ``workbench reality`` run, for the two or three entries
a run uses. The cache (``registry/litellm-<format>.json`` in the workbench cache dir) holds those entries as
``json.loads`` of the whole file gives them, stamped with the file's path, size, mtime_ns, ctime_ns and inode
(what Python itself trusts for a ``.pyc``, plus the two a reinstall cannot keep), the cache format and the
workbench version. A stamp that differs, an unreadable, corrupt or foreign cache, or a name it does not hold
means the whole file is parsed, as before; the names asked for are then written back (atomically: a temporary
file renamed over it). An unwritable cache dir changes nothing but the speed. ``tests/test_registry_cache.py``
compares every cached entry with the full parse.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import __version__

ENV_DIR = "WORKBENCH_CACHE_DIR"
DEFAULT_DIR = Path("~/.cache/compaction-workbench")
CACHE_FORMAT = 1
_HUGE = 2.0**63


def default_cache_dir() -> Path:
    """``WORKBENCH_CACHE_DIR`` if set, else ``~/.cache/compaction-workbench`` (not created here)."""
    env = os.environ.get(ENV_DIR)
    return Path(env).expanduser() if env else DEFAULT_DIR.expanduser()


@functools.cache
def registry_path() -> Path | None:
    """The registry file inside the installed litellm package (None without litellm)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"


def full_registry(exact: bool = False) -> dict[str, Any]:
    """The registry as ``json.loads`` of the file reads it. orjson reads the 3.5 MB in two thirds of the time and
    gives json's values, except that an integer past 64 bits becomes a float of 2**63 or more: ``exact_entry``
    takes such an entry from ``full_registry(exact=True)``."""
    return _parsed(exact)[1]


@functools.cache
def _parsed(exact: bool) -> tuple[tuple[Any, ...] | None, dict[str, Any]]:
    """(the file's stamp, unchanged while it was read, else None; the registry)."""
    path = registry_path()
    if path is None:
        return None, {}
    before = _stamp(path)
    try:
        raw = path.read_bytes()
    except OSError:
        return None, {}
    stamp = before if _stamp(path) == before else None
    data = None
    if not exact:
        try:
            import orjson

            data = orjson.loads(raw)  # refuses what json reads differently (NaN, lone surrogates, a BOM)
        except (ImportError, ValueError):
            data = None
    if data is None:
        data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        return stamp, {}
    data.pop("sample_spec", None)
    return stamp, data


def exact_entry(name: str) -> Any:
    """The registry's entry for ``name`` (None: absent), as ``json.loads`` of the whole file gives it."""
    return _exact(name)[0]


def _exact(name: str) -> tuple[Any, bool, tuple[Any, ...] | None]:
    """(entry, present, the stamp of the file it was parsed from)."""
    stamp, data = _parsed(False)
    entry = data.get(name)
    if isinstance(entry, dict) and any(type(v) is float and not -_HUGE < v < _HUGE for v in entry.values()):
        exact_stamp, exact = _parsed(True)
        return exact.get(name), name in exact, exact_stamp if exact_stamp == stamp else None
    return entry, name in data, stamp


def _stamp(path: Path) -> tuple[Any, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass
class _Disk:
    """The cache file of one cache dir, as this process has read (and extended) it."""

    file: Path
    stamp: tuple[Any, ...]
    entries: dict[str, list[Any]] = field(default_factory=dict)  # name -> [entry] (present) or [] (absent)

    def save(self) -> None:
        data = {"format": CACHE_FORMAT, "workbench": __version__, "registry": list(self.stamp), "entries": self.entries}
        tmp = None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.file.name + ".", suffix=".tmp", dir=self.file.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                # dumps, not dump: json.dump writes through the pure-Python encoder, dumps the C one; the same text
                fh.write(json.dumps(data))  # ensure_ascii: lone surrogates survive; NaN is written as json reads it
            os.replace(tmp, self.file)
            tmp = None
        except (OSError, ValueError):
            pass  # an unwritable cache dir: the next process parses the file again
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


_disks: dict[tuple[str | None, Path], _Disk | None] = {}


def _disk() -> _Disk | None:
    """The cache of this process's cache dir (the registry file stat-ed once per process, as it is parsed once)."""
    path = registry_path()
    if path is None:
        return None
    key = (os.environ.get(ENV_DIR), path)
    if key in _disks:
        return _disks[key]
    stamp = _stamp(path)
    disk = None
    if stamp is not None:
        file = default_cache_dir() / "registry" / f"litellm-{CACHE_FORMAT}.json"
        disk = _Disk(file, stamp, _read(file, stamp))
    _disks[key] = disk
    return disk


def _read(file: Path, stamp: tuple[Any, ...]) -> dict[str, list[Any]]:
    """The cached entries if the cache is ours and made from this very registry file, else none."""
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not (isinstance(data, dict) and data.get("format") == CACHE_FORMAT and data.get("workbench") == __version__
            and data.get("registry") == list(stamp) and isinstance(data.get("entries"), dict)):
        return {}
    entries = data["entries"]
    if not all(isinstance(v, list) and len(v) <= 1 for v in entries.values()):
        return {}
    return entries


def registry_entry(name: str) -> Any:
    """The registry's entry for ``name`` (None: absent), exactly as ``exact_entry`` gives it; from the disk cache
    when that holds it (the whole file is then not parsed in this process)."""
    disk = _disk()
    if disk is None:
        return exact_entry(name)
    found = disk.entries.get(name)
    if found is not None:
        return found[0] if found else None
    entry, present, parsed_from = _exact(name)
    if parsed_from == disk.stamp:  # never a cache of one file stamped as another (the file changed meanwhile)
        disk.entries[name] = [entry] if present else []
        disk.save()
    return entry


@functools.cache
def registry_source() -> str:
    """Where prices come from, for a face to say so: litellm's registry file and the litellm version it ships with."""
    from importlib import metadata

    try:
        version = metadata.version("litellm")
    except metadata.PackageNotFoundError:
        return "no price registry (litellm is not installed): every price is 0"
    return f"litellm {version}'s price registry (model_prices_and_context_window_backup.json)"
