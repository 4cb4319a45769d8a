"""A disk cache of live briefings, so that re-running a replay costs no provider request.

Key = sha256 of canonical JSON of (model, messages, sampling parameters, prompt version). Credentials
never enter a key or a value: API keys, api_base and headers are refused by name before hashing.
The directory comes from the constructor, else ``WORKBENCH_CACHE_DIR``, else
``~/.cache/compaction-workbench``. diskcache is imported only when a cache is opened.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_DIR = "WORKBENCH_CACHE_DIR"
DEFAULT_DIR = Path("~/.cache/compaction-workbench")
DEFAULT_SIZE_LIMIT_BYTES = 1 << 30  # 1 GiB
SUBDIR = "briefings"

# Request fields that identify a completion. Anything else (api_key, api_base, headers, timeouts,
# retries) either carries a secret or does not change the answer, so it never reaches the key.
SAMPLING_FIELDS = ("temperature", "max_tokens", "top_p", "seed", "stop", "reasoning_effort")
_SECRET_HINTS = ("key", "secret", "token", "auth", "header", "password", "api_base", "base_url", "credential")


def default_cache_dir() -> Path:
    """``WORKBENCH_CACHE_DIR`` if set, else ``~/.cache/compaction-workbench`` (not created here)."""
    env = os.environ.get(ENV_DIR)
    return Path(env).expanduser() if env else DEFAULT_DIR.expanduser()


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


class BriefingCache:
    """Briefing answers on disk, keyed by :func:`cache_key`; values are plain JSON-able dicts."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, size_limit_bytes: int | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.size_limit_bytes = size_limit_bytes or DEFAULT_SIZE_LIMIT_BYTES
        self.hits = 0  # this instance's own counters
        self.misses = 0
        self._cache: Any = None

    def _open(self) -> Any:
        if self._cache is None:
            import diskcache

            self._cache = diskcache.Cache(str(self.directory / SUBDIR), size_limit=self.size_limit_bytes)
            self._cache.stats(enable=True)
        return self._cache

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for ``key``, or None; counts a hit or a miss."""
        value = self._open().get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(value) if isinstance(value, str) else dict(value)

    def lookup(self, keys: list[str]) -> tuple[str, dict[str, Any]] | None:
        """The first of ``keys`` that is stored, with its answer; one hit or one miss is counted in all."""
        cache = self._open()
        for key in keys:
            if key in cache:  # membership does not touch diskcache's hit/miss counters
                value = self.get(key)
                if value is not None:
                    return key, value
        if keys:
            self.get(keys[0])  # record the miss once
        return None

    def set(self, key: str, value: Mapping[str, Any]) -> None:
        """Store a JSON-able answer (kept as JSON text, so the files hold no pickled objects)."""
        self._open().set(key, json.dumps(dict(value), ensure_ascii=False))

    def __contains__(self, key: object) -> bool:
        return key in self._open()

    def __len__(self) -> int:
        return len(self._open())

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every (key, answer) pair, e.g. for calibration."""
        cache = self._open()
        for key in list(cache.iterkeys()):
            value = cache.get(key)
            if value is not None:
                yield key, json.loads(value) if isinstance(value, str) else dict(value)

    def stats(self) -> CacheStats:
        cache = self._open()
        hits, misses = cache.stats()
        return CacheStats(
            directory=str(self.directory),
            entries=len(cache),
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
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> BriefingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
