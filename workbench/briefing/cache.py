"""A disk cache of live briefings, so that re-running a replay costs no provider request.

Key = sha256 of canonical JSON of (model, messages, sampling parameters, prompt version). Credentials
never enter a key or a value: API keys, api_base and headers are refused by name before hashing.
The directory comes from the constructor, else ``WORKBENCH_CACHE_DIR``, else
``~/.cache/compaction-workbench``. diskcache is imported only when a cache is opened.

Faults never cost an answer: when the disk cache cannot be opened, read or written (read-only
filesystem, a path under a regular file, a full disk) the cache says so once (``problem``, and the
``on_problem`` callback) and keeps the answers in a fallback folder of this user's under the system's
temporary folder, named by the cache's path (:func:`fallback_dir`): a rerun with the same cache reads
them there and pays for nothing. If the fallback fails too, the run goes on in memory; what was paid
for always stays in the results. Concurrent runs sharing a cache do not pay twice for one prompt: the first claims it
with an in-flight marker (:meth:`BriefingCache.claim`), the others wait for its answer. A marker
expires after the cascade's own time bound and is taken over at once when its holder process is
gone, so a crashed holder cannot block anyone.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.counting.registry import default_cache_dir

DEFAULT_SIZE_LIMIT_BYTES = 1 << 30  # 1 GiB
SUBDIR = "briefings"
INFLIGHT = "inflight:"  # key prefix of in-flight markers (never a sha256 hex key)
POLL_S = 0.1

# Request fields that identify a completion. Anything else (api_key, api_base, headers, timeouts,
# retries) either carries a secret or does not change the answer, so it never reaches the key.
SAMPLING_FIELDS = ("temperature", "max_tokens", "top_p", "seed", "stop", "reasoning_effort")
_SECRET_HINTS = ("key", "secret", "token", "auth", "header", "password", "api_base", "base_url", "credential")


def _looks_secret(name: str) -> bool:
    lowered = name.lower()
    if lowered in ("max_tokens", "max_output_tokens", "max_completion_tokens"):
        return False
    return any(hint in lowered for hint in _SECRET_HINTS)


def endpoint_id(api_base: str | None) -> str:
    """The endpoint's scheme, host and path, without any user:password part (None: the provider's own)."""
    if not api_base:
        return ""
    from urllib.parse import urlsplit

    parts = urlsplit(api_base)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def cache_key(
    model: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    prompt_version: str,
    *,
    api_base: str | None = None,
) -> str:
    """sha256 of canonical JSON of what determines the answer; raises if a credential slips in.

    The endpoint counts (a local or proxy server's answer must not be served for the real provider),
    but only as scheme, host and path: credentials in the URL never reach the key.
    """
    bad = sorted(k for k in params if _looks_secret(k) or k not in SAMPLING_FIELDS)
    if bad:
        raise ValueError(f"cache key parameters must be sampling parameters ({', '.join(SAMPLING_FIELDS)}), got {bad}")
    payload = {
        "model": model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "params": {k: params[k] for k in sorted(params)},
        "prompt_version": prompt_version,
    }
    if api_base:
        payload["endpoint"] = endpoint_id(api_base)
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class CacheStats:
    """What is in the cache and how well it served (hits/misses persist across processes)."""

    directory: str
    entries: int
    size_bytes: int
    size_limit_bytes: int
    hits: int
    misses: int

    @property
    def hit_ratio(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


def _faults() -> tuple[type[BaseException], ...]:
    """What a disk cache raises when the disk, not the caller, is at fault."""
    out: list[type[BaseException]] = [OSError, sqlite3.Error]
    try:
        import diskcache

        out.append(diskcache.Timeout)
    except ImportError:  # pragma: no cover - diskcache is a dependency
        pass
    return tuple(out)


def fallback_dir(directory: str | os.PathLike[str]) -> Path:
    """Where the answers go when the cache at ``directory`` cannot take them: this user's folder under the system's
    temporary folder (``$TMPDIR``), one per cache path, so a rerun with the same cache finds them."""
    name = hashlib.sha256(os.path.abspath(os.fspath(directory)).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"compaction-workbench-{_uid()}" / "briefings-fallback" / name


def _uid() -> int:
    return int(getattr(os, "getuid", lambda: 0)())


def _private_root(folder: Path, *, create: bool) -> bool:
    """Whether ``folder`` (the per-user root under the shared temporary folder) is ours alone: created with mode
    0700 if asked, refused when another user owns it or others may write into it (they could plant answers)."""
    if create:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return False
    try:
        info = folder.lstat()
    except OSError:
        return False
    mine = not hasattr(os, "getuid") or info.st_uid == _uid()
    return stat.S_ISDIR(info.st_mode) and mine and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class BriefingCache:
    """Briefing answers on disk, keyed by :func:`cache_key`; values are plain JSON-able dicts."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, size_limit_bytes: int | None = None,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.size_limit_bytes = size_limit_bytes or DEFAULT_SIZE_LIMIT_BYTES
        self.hits = 0  # this instance's own counters
        self.misses = 0
        self.problem: str | None = None  # the first disk fault; from then on answers go to the fallback folder
        self.on_problem = on_problem
        self.fallback_directory = fallback_dir(self.directory)
        self._memory: dict[str, str] = {}
        self._cache: Any = None
        self._fallback: Any = None  # the fallback folder's diskcache, once opened
        self._fallback_failed = False

    def _open(self) -> Any:
        if self._cache is None:
            import diskcache

            self._cache = diskcache.Cache(str(self.directory / SUBDIR), size_limit=self.size_limit_bytes)
            self._cache.stats(enable=True)
        return self._cache

    def _disk(self) -> Any:
        """The diskcache answers go to: the cache's own, else (after a fault) the fallback's, else None (memory)."""
        if self.problem is None:
            try:
                return self._open()
            except _faults() as exc:
                self._fail(exc, "open")
        return self._open_fallback(create=True)

    def _open_fallback(self, *, create: bool) -> Any:
        """The fallback folder's diskcache (None when it failed, or when it does not exist and ``create`` is off)."""
        if self._fallback is None and not self._fallback_failed:
            folder = self.fallback_directory
            if not create and not folder.is_dir():
                return None
            if not _private_root(folder.parents[1], create=create):
                self._fallback_failed = True
                return None
            try:
                import diskcache

                self._fallback = diskcache.Cache(str(folder), size_limit=self.size_limit_bytes)
            except _faults():
                self._fallback_failed = True
        return self._fallback

    def _stores(self) -> list[Any]:
        """Where answers are read from: the store answers go to, then the fallback folder of an earlier faulty run."""
        disk = self._disk()
        out = [] if disk is None else [disk]
        if disk is not None and disk is not self._fallback:
            earlier = self._open_fallback(create=False)
            if earlier is not None:
                out.append(earlier)
        return out

    def _fail(self, exc: BaseException, action: str, store: Any = None) -> None:
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        if store is not None and store is self._fallback:  # the fallback itself failed: memory from now on
            self._fallback, self._fallback_failed = None, True
            _close(store)
            if self.on_problem is not None:
                self.on_problem(f"briefing cache fallback {self.fallback_directory}: cannot {action} ({detail}); the "
                                "run goes on with answers kept in memory")
            return
        cache, self._cache = self._cache, None
        if cache is not None:
            _close(cache)
        if self.problem is None:
            where = ("the run goes on with the cache off (answers kept in memory)"
                     if self._open_fallback(create=True) is None else
                     f"answers go to {self.fallback_directory} instead, where a rerun with this cache reads them")
            self.problem = f"briefing cache {self.directory}: cannot {action} ({detail}); {where}"
            if self.on_problem is not None:
                self.on_problem(self.problem)

    def _has(self, key: str) -> bool:
        """Whether ``key`` is stored (disk or memory); membership touches no hit/miss counter."""
        for disk in self._stores():
            try:
                if key in disk:
                    return True
            except _faults() as exc:
                self._fail(exc, "read", disk)
        return key in self._memory

    def _read(self, key: str) -> Any:
        """The stored value for ``key`` (disk, else memory); diskcache counts its hit or miss."""
        for disk in self._stores():
            try:
                value = disk.get(key)
            except _faults() as exc:
                self._fail(exc, "read", disk)
            else:
                if value is not None:
                    return value
        return self._memory.get(key)

    @staticmethod
    def _decode(value: Any) -> dict[str, Any]:
        return json.loads(value) if isinstance(value, str) else dict(value)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for ``key``, or None; counts a hit or a miss."""
        value = self._read(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return self._decode(value)

    def peek(self, keys: list[str]) -> tuple[str, dict[str, Any]] | None:
        """The first of ``keys`` that is stored, with its answer (a hit); a miss is counted nowhere."""
        for key in keys:
            if self._has(key):
                value = self.get(key)
                if value is not None:
                    return key, value
        return None

    def lookup(self, keys: list[str]) -> tuple[str, dict[str, Any]] | None:
        """The first of ``keys`` that is stored, with its answer; one hit or one miss is counted in all."""
        found = self.peek(keys)
        if found is None and keys:
            self.get(keys[0])  # record the miss once
        return found

    def set(self, key: str, value: Mapping[str, Any]) -> None:
        """Store a JSON-able answer (kept as JSON text, so the files hold no pickled objects)."""
        text = json.dumps(dict(value), ensure_ascii=False)
        self._memory[key] = text  # kept for this run whatever the disk does
        for _ in range(2):  # the cache's own, and after its fault the fallback
            disk = self._disk()
            if disk is None:
                return
            try:
                disk.set(key, text)
                return
            except _faults() as exc:
                self._fail(exc, "write", disk)

    # -- in-flight markers: one payer per prompt across processes ---------------------------------
    def claim(self, key: str, ttl_s: float) -> bool:
        """Mark ``key`` as being paid for by this process for at most ``ttl_s``; False when another live
        holder has it. A marker whose holder process is gone is taken over."""
        disk = self._disk()
        if disk is None:
            return True
        marker = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "at": time.time()})
        try:
            if disk.add(INFLIGHT + key, marker, expire=ttl_s):
                return True
            holder = disk.get(INFLIGHT + key)
            if holder is None or _holder_gone(holder):
                disk.delete(INFLIGHT + key)
                return bool(disk.add(INFLIGHT + key, marker, expire=ttl_s))
            return False
        except _faults() as exc:
            self._fail(exc, "write", disk)
            return True

    def release(self, key: str) -> None:
        """Drop this process's in-flight marker for ``key`` (an answer, or a failure, is in)."""
        disk = self._cache if self.problem is None else self._fallback
        if disk is None:
            return
        faults: tuple[type[BaseException], ...] = (*_faults(), ValueError)
        try:
            holder = disk.get(INFLIGHT + key)
            if holder is not None and json.loads(holder).get("pid") == os.getpid():
                disk.delete(INFLIGHT + key)
        except faults as exc:
            self._fail(exc, "write", disk)

    def wait_for(self, keys: list[str], claim_key: str, ttl_s: float) -> tuple[str, dict[str, Any]] | None:
        """Wait while another process pays for this prompt: its answer when it lands (a hit), or None when
        the holder gave up, died or ran past ``ttl_s`` (the caller then claims and asks itself)."""
        deadline = time.monotonic() + ttl_s
        while time.monotonic() < deadline:
            found = self.peek(keys)
            if found is not None:
                return found
            if self.claim(claim_key, ttl_s):
                found = self.peek(keys)  # it may have landed just before the marker went
                if found is not None:
                    self.release(claim_key)
                    return found
                return None
            time.sleep(POLL_S)
        return None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._has(key)

    def __len__(self) -> int:
        return sum(1 for _ in self._keys())

    def _keys(self) -> list[str]:
        cache = self._open()
        return [k for k in cache.iterkeys() if isinstance(k, str) and not k.startswith(INFLIGHT)]

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every (key, answer) pair, e.g. for calibration."""
        cache = self._open()
        for key in self._keys():
            value = cache.get(key)
            if value is not None:
                yield key, json.loads(value) if isinstance(value, str) else dict(value)

    def stats(self) -> CacheStats:
        cache = self._open()
        hits, misses = cache.stats()
        return CacheStats(
            directory=str(self.directory),
            entries=len(self._keys()),
            size_bytes=int(cache.volume()),
            size_limit_bytes=self.size_limit_bytes,
            hits=int(hits),
            misses=int(misses),
        )

    def clear(self) -> int:
        """Remove every entry and reset the counters; returns how many entries went."""
        cache = self._open()
        removed = int(cache.clear())
        cache.stats(enable=True, reset=True)
        self.hits = self.misses = 0
        return removed

    def close(self) -> None:
        for disk in (self._cache, self._fallback):
            if disk is not None:
                _close(disk)
        self._cache = self._fallback = None

    def __enter__(self) -> BriefingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close(disk: Any) -> None:
    try:
        disk.close()
    except _faults():
        pass


def _holder_gone(marker: Any) -> bool:
    """Whether an in-flight marker's process is gone (same host only; elsewhere the expiry decides)."""
    try:
        info = json.loads(marker)
        pid, host = int(info["pid"]), str(info["host"])
    except (ValueError, KeyError, TypeError):
        return True
    if host != socket.gethostname():
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False
