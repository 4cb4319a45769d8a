"""Token counting: stagewise's chars/4 estimate and offline tiktoken encodings, counted once per message.

Counting is the slow part of a replay, knobs are the fast part: per message we store what does not
depend on any knob (stagewise content chars, tokenizer counts) keyed by the message's content hash,
and turn it into tokens for given knobs with one vectorized step. tiktoken's encodings load from the
files litellm ships (``TIKTOKEN_CACHE_DIR`` is pointed there unless the user set it), so no download.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from workbench.counting.encodings import (
    TOKENIZER_OVERHEAD_TOKENS,
    _token_lengths,
    _utf8_safe,
    get_encoding,
    render_for_tokenizer,
)
from workbench.history.jsjson import utf16_len
from workbench.history.model import History, Message
from workbench.stagewise.estimate import content_chars, metadata_chars, parts_chars
from workbench.stagewise.serialize import serialize_message

# tiktoken encodes a batch on this many threads (it releases the GIL); more than the cores only adds switching.
ENCODE_THREADS = max(1, min(os.cpu_count() or 1, 8))
_ENCODE_CHUNK = 64  # messages per encoding job: small enough to start the threads early


Key = str | int  # a content digest, or (CountCache.by_identity) the id of an object the cache holds


@dataclass
class CountCache:
    """Per-message counts keyed by content hash; shared by every replay of the same messages.

    ``by_identity`` keys them by the message objects instead (their parts, where a count reads only the
    parts), and count tables by the History object: no content digest is computed. It suits one run over
    loaded histories whose replays share message objects (the windows of a log replay are slices of the
    log's messages, and a ``with_metadata`` copy shares its parts); equal messages loaded twice are counted
    twice. The cache holds every object it keyed, so an id is never reused while it lives: keep it for
    one run, not for a long app session.
    """

    chars: dict[Key, int] = field(default_factory=dict)
    part_chars: dict[Key, int | float] = field(default_factory=dict)  # the parts' share of ``chars``, by ``parts_key``
    encoded: dict[str, dict[Key, int]] = field(default_factory=dict)
    tables: dict[Key, HistoryCounts] = field(default_factory=dict)
    serialized: dict[Key, str | None] = field(default_factory=dict)  # only what a briefer asked to read
    chunk_chars: dict[Key, int] = field(default_factory=dict)  # UTF-16 length of each chunk, -1 for none
    text_counts: dict[Key, tuple[int, int]] = field(default_factory=dict)  # the agent's text estimate's inputs
    parts_values: dict[Any, dict[Key, Any]] = field(default_factory=dict)  # ``per_parts``'s stores, by name
    structures: dict[tuple[Key, str], Any] = field(default_factory=dict)  # by_identity: ``counting.structure``'s
    restore_counts: dict[tuple[str, float], dict[Any, int]] = field(default_factory=dict)  # counting.restore's texts
    restore_walks: dict[tuple[Any, ...], list[Any]] = field(default_factory=dict)  # counting.restore's walks of logs
    max_tables: int = 64
    by_identity: bool = False
    _held: dict[int, object] = field(default_factory=dict, repr=False)

    def clear(self) -> None:
        """Forget every count. Each count table refers back to this cache, so a cache let go while the cyclic GC is
        paused (``workbench reality`` pauses it) would keep its tables, and the histories they count, until the GC
        runs again; cleared, they are freed as soon as nothing else holds them."""
        for f in fields(self):  # every store is a dict field: one added later is cleared too
            store = getattr(self, f.name)
            if isinstance(store, dict):
                store.clear()

    def key(self, msg: Message) -> Key:
        """The key of a message's counts: its content digest, or (``by_identity``) the object itself."""
        if not self.by_identity:
            return msg.digest
        k = id(msg)
        self._held.setdefault(k, msg)
        return k

    def parts_key(self, msg: Message) -> Key:
        """The key of a count that reads only the message's parts: ``key``, or (``by_identity``) the parts
        tuple, which ``with_metadata`` copies share."""
        if not self.by_identity:
            return msg.digest
        parts = msg.parts
        k = id(parts)
        self._held.setdefault(k, parts)
        return k

    def per_parts(self, name: Any, messages: Sequence[Message], compute: Callable[[list[int]], Sequence[Any]]) -> list[Any]:
        """(``by_identity``) A value per message that reads its parts alone, kept per parts tuple under ``name``:
        ``compute(indices)`` gives those of the messages whose parts have none yet (never None). A window's
        messages share their parts with the whole log's (a ``with_metadata`` copy too), so each is worked out once."""
        store = self.parts_values.setdefault(name, {})
        found = [store.get(id(m.parts)) for m in messages]
        if None in found:
            todo = [i for i, v in enumerate(found) if v is None]
            held = self._held
            for i, value in zip(todo, compute(todo), strict=True):
                parts = messages[i].parts
                held.setdefault(id(parts), parts)
                found[i] = store[id(parts)] = value
        return found

    def counts_for(self, history: History) -> HistoryCounts:
        """The (cached) count table of a history."""
        key: Key
        if self.by_identity:
            key = id(history)
            self._held.setdefault(key, history)
        else:
            # A table's arrays read its history's log too (the billed counter counts a log with usage by its bill):
            # the same messages with and without a billed log (a window of a log replayed without usage) get two.
            log = history.log
            key = history.digest + ("+billed" if log is not None and log.calls else "")
        table = self.tables.get(key)
        if table is None:
            table = HistoryCounts(history=history, cache=self)
            if len(self.tables) >= self.max_tables:  # keep memory bounded in long app sessions
                self.tables.pop(next(iter(self.tables)))
            self.tables[key] = table
        return table


@dataclass(eq=False)
class HistoryCounts:
    """Knob-independent counts of one history, filled lazily, each kind computed once."""

    history: History
    cache: CountCache
    _chars: np.ndarray | None = None
    _has_parts: np.ndarray | None = None
    _encoded: dict[str, np.ndarray] = field(default_factory=dict)
    _chunk_chars: np.ndarray | None = None
    # Prefix sums of the chunk lengths and of the chunks, over messages [0, _span_done): a span inside it costs two
    # subtractions (a replay asks [0, boundary) at every compaction that regenerates).
    _span_chars: np.ndarray | None = None
    _span_count: np.ndarray | None = None
    _span_done: int = 0
    _estimates: dict[tuple[int, float], np.ndarray] = field(default_factory=dict)
    # Per-history values the replay derives from the messages (check indices, roles): kept with the
    # counts so that a replay with other knobs does not walk 100k messages again to rebuild them.
    derived: dict[Any, Any] = field(default_factory=dict)

    def _fill_chars(self) -> None:
        store, shares = self.cache.chars, self.cache.part_chars
        key_of, parts_key_of = self.cache.key, self.cache.parts_key
        msgs = self.history.messages
        # Python ints, made an array once (a numpy item write per message costs more)
        values: list[int | None]
        if self.cache.by_identity:
            # Keyed by the object: a hit needs no ``key`` call (the cache already holds every message it stored a
            # count of); most messages of a window were counted with the whole log or the window before it.
            values = [store.get(id(msg)) for msg in msgs]
            todo: Any = [i for i, v in enumerate(values) if v is None] if None in values else ()
        else:
            values = [None] * len(msgs)
            todo = range(len(msgs))
        for i in todo:
            msg = msgs[i]
            key = key_of(msg)
            value = store.get(key)
            if value is None:  # these stores are the memo
                parts = msg.parts if msg else None
                c: int | float | None = None
                if parts is not None:
                    # A copy with other metadata (its usage taken off: 8% of the messages a reality run counts)
                    # shares the parts tuple: only its metadata's share is counted again.
                    parts_key = parts_key_of(msg)
                    share = shares.get(parts_key)
                    if share is None:
                        share = shares[parts_key] = parts_chars(parts)
                    c = share + metadata_chars(msg.metadata)
                # JS gives NaN for junk like a numeric `text`; count such a message as 0 chars.
                value = -1 if c is None else (int(c) if c == c else 0)
                store[key] = value
            values[i] = value
        found = np.array(values, dtype=np.int64)
        has = found >= 0
        self._chars, self._has_parts = np.where(has, found, 0), has

    @property
    def content_chars(self) -> np.ndarray:
        """stagewise chars of each message without the per-message overhead (0 where it counts 0)."""
        if self._chars is None:
            self._fill_chars()
        assert self._chars is not None
        return self._chars

    @property
    def has_parts(self) -> np.ndarray:
        if self._has_parts is None:
            self._fill_chars()
        assert self._has_parts is not None
        return self._has_parts

    def estimate(self, *, overhead_chars: int, chars_per_token: float) -> np.ndarray:
        """stagewise's estimate per message: ceil((content + overhead) / chars_per_token), 0 without parts.

        Remembered for the last few knob pairs (read-only arrays): a replay asks twice (trigger and boundary).
        """
        key = (overhead_chars, chars_per_token)
        tokens = self._estimates.get(key)
        if tokens is None:
            total = self.content_chars + overhead_chars
            tokens = np.ceil(total / chars_per_token).astype(np.int64)
            tokens[~self.has_parts] = 0
            tokens.flags.writeable = False
            if len(self._estimates) >= 8:
                self._estimates.pop(next(iter(self._estimates)))
            self._estimates[key] = tokens
        return tokens

    def encoded(self, encoding: str) -> np.ndarray:
        """Tokenizer count per message, plus the chat-format overhead.

        Messages are hashed and rendered here while tiktoken encodes earlier ones on its own threads (it
        releases the GIL), so the Python side mostly hides behind the tokenizer instead of adding to it.
        """
        cached = self._encoded.get(encoding)
        if cached is not None:
            return cached
        store = self.cache.encoded.setdefault(encoding, {})
        msgs = self.history.messages
        keys = [self.cache.key(m) for m in msgs]
        out = np.zeros(len(msgs), dtype=np.int64)
        jobs: list[tuple[list[int], Future[list[int]]]] = []
        pool: ThreadPoolExecutor | None = None
        try:
            for start in range(0, len(msgs), _ENCODE_CHUNK):
                todo: list[int] = []
                texts: list[str] = []
                for i in range(start, min(start + _ENCODE_CHUNK, len(msgs))):
                    value = store.get(keys[i])
                    if value is None:
                        todo.append(i)
                        texts.append(_utf8_safe(render_for_tokenizer(msgs[i])))
                    else:
                        out[i] = value
                if todo:
                    if pool is None:
                        pool = ThreadPoolExecutor(ENCODE_THREADS, thread_name_prefix="tiktoken")
                    jobs.append((todo, pool.submit(_token_lengths, get_encoding(encoding), texts)))
            for todo, job in jobs:
                for i, length in zip(todo, job.result(), strict=True):
                    out[i] = length + TOKENIZER_OVERHEAD_TOKENS
                    store[keys[i]] = int(out[i])
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._encoded[encoding] = out
        return out

    def serialized(self, i: int) -> str | None:
        """stagewise's compact chunk of message i (with host markers), cached by content."""
        msg = self.history.messages[i]
        store = self.cache.serialized
        key = self.cache.key(msg)
        if key in store:
            return store[key]
        chunk = serialize_message(msg, host=True)
        store[key] = chunk
        return chunk

    def serialized_chars(self, i: int) -> int:
        """UTF-16 length of message i's compact chunk, -1 when it contributes none."""
        if self._chunk_chars is None:
            self._chunk_chars = np.full(len(self.history.messages), -2, dtype=np.int64)
        value = int(self._chunk_chars[i])
        if value == -2:
            key = self.cache.key(self.history.messages[i])
            stored = self.cache.chunk_chars.get(key)
            if stored is None:
                stored = self._chunk_length(key, self.history.messages[i])
            value = stored
            self._chunk_chars[i] = value
        return value

    def _fill_serialized_chars(self, lo: int, hi: int) -> np.ndarray:
        """``_chunk_chars[lo:hi]`` with every message in it measured (``serialized_chars`` of each not yet known)."""
        assert self._chunk_chars is not None
        seg = self._chunk_chars[lo:hi]
        todo = np.flatnonzero(seg == -2)
        if len(todo):
            messages, known, key_of = self.history.messages, self.cache.chunk_chars, self.cache.key
            values = []
            for j in (todo + lo).tolist():  # Python ints: one array write at the end, not one per message
                key = key_of(messages[j])
                stored = known.get(key)
                if stored is None:
                    stored = self._chunk_length(key, messages[j])
                values.append(stored)
            seg[todo] = values
        return seg

    def _chunk_length(self, key: Key, msg: Message) -> int:
        """UTF-16 length of a message's compact chunk (-1 for none), remembered under ``key``."""
        # Only the length: keeping every chunk's text (a second copy of the history) is left to
        # ``serialized``, which runs when a briefer really reads the transcript.
        store = self.cache.serialized
        chunk = store[key] if key in store else serialize_message(msg, host=True)
        stored = -1 if chunk is None else utf16_len(chunk)
        self.cache.chunk_chars[key] = stored
        return stored

    def serialized_chars_at(self, indices: np.ndarray) -> np.ndarray:
        """``serialized_chars`` of each message in ``indices`` (an int array), as an array."""
        if self._chunk_chars is None:
            self._chunk_chars = np.full(len(self.history.messages), -2, dtype=np.int64)
        for j in indices[self._chunk_chars[indices] == -2]:
            self.serialized_chars(int(j))
        return self._chunk_chars[indices]

    def serialized_span(self, lo: int, hi: int) -> tuple[int, int]:
        """(sum of chunk UTF-16 lengths, number of chunks) over messages [lo, hi); serializes each once."""
        if hi <= lo:
            return 0, 0
        if self._chunk_chars is None:
            self._chunk_chars = np.full(len(self.history.messages), -2, dtype=np.int64)
        done = self._span_done
        if lo > done:  # a span past the prefix: summed alone (the messages between are not serialized for it)
            seg = self._fill_serialized_chars(lo, hi)
            valid = seg >= 0
            return int(seg.sum(where=valid)), int(np.count_nonzero(valid))
        if hi > done:  # the prefix grows to hi: each message is summed into it once
            if self._span_chars is None:
                n = len(self.history.messages)
                self._span_chars = np.zeros(n + 1, dtype=np.int64)
                self._span_count = np.zeros(n + 1, dtype=np.int64)
            assert self._span_count is not None
            seg = self._fill_serialized_chars(done, hi)
            valid = seg >= 0
            np.cumsum(np.where(valid, seg, 0), out=self._span_chars[done + 1 : hi + 1])
            self._span_chars[done + 1 : hi + 1] += self._span_chars[done]
            np.cumsum(valid, out=self._span_count[done + 1 : hi + 1])
            self._span_count[done + 1 : hi + 1] += self._span_count[done]
            self._span_done = done = hi
        chars, count = self._span_chars, self._span_count
        assert chars is not None and count is not None
        return int(chars[hi] - chars[lo]), int(count[hi] - count[lo])

    def stub_tokens(self, i: int, knobs: Any) -> int:
        """Tokens of message i once its tool outputs are elided, by the trigger counter."""
        from workbench.history.elide import stub_message

        stub = stub_message(self.history.messages[i])
        counter = "estimate" if knobs.trigger_counter == "usage" else knobs.trigger_counter
        tokens = count_message(
            stub, counter, overhead_chars=knobs.overhead_chars_per_message,
            chars_per_token=knobs.chars_per_token, cache=self.cache,
        )
        ratio = getattr(knobs, "token_ratio", 1.0)
        return tokens if ratio == 1.0 else int(round(tokens * ratio))

    def roles(self) -> np.ndarray:
        """Each message's role, as an array of str objects (read-only, shared by every replay)."""
        found = self.derived.get("roles")
        if found is None:
            found = np.array([m.role for m in self.history.messages], dtype=object)
            found.flags.writeable = False
            self.derived["roles"] = found
        return found

    def image_messages(self) -> np.ndarray:
        """Indices of the messages that hold an image (found once per history)."""
        found = self.derived.get("image_messages")
        if found is None:
            msgs = self.history.messages
            if self.cache.by_identity:  # whether a message holds an image reads its parts alone
                flags = self.cache.per_parts("image", msgs, lambda todo: [_holds_image(msgs[i]) for i in todo])
                found = np.flatnonzero(flags).astype(np.int64, copy=False)
            else:
                found = np.fromiter((i for i, m in enumerate(msgs) if _holds_image(m)), dtype=np.int64)
            self.derived["image_messages"] = found
        return found

    def tokens_without_images(self, i: int, counter: str, *, overhead_chars: int, chars_per_token: float) -> int:
        """Tokens of message i by a counter with its image payloads left out (the images are counted apart)."""
        msg = self.history.messages[i]
        if counter == "estimate":
            chars = int(self.content_chars[i])
            if not self.has_parts[i]:
                return 0
            payload = sum(r.payload_chars for r in msg.images())
            return math.ceil(max(0, chars - payload + overhead_chars) / chars_per_token)
        from workbench.history.images import strip_image_payloads

        text = strip_image_payloads(render_for_tokenizer(msg), msg)
        return len(get_encoding(counter).encode_ordinary(_utf8_safe(text))) + TOKENIZER_OVERHEAD_TOKENS

    def tokens(self, counter: str, *, overhead_chars: int, chars_per_token: float) -> np.ndarray:
        """Per-message tokens by the named counter ("estimate" or an encoding name)."""
        if counter == "estimate":
            return self.estimate(overhead_chars=overhead_chars, chars_per_token=chars_per_token)
        return self.encoded(counter)


# The part types that are an image payload themselves (``history.images`` reads each): any other part holds one only
# inside a dict or list (a tool result's output).
_IMAGE_PART_TYPES = ("file", "image", "input_image", "image_url")


def _holds_image(msg: Message) -> bool:
    """Whether ``msg.images()`` finds an image, without the walk where it can find nothing: an image is a part
    whose type is an image's or a dict or list inside one (``history.images``), and a tool result's output is
    mostly a plain string (every tool result passes the pre-check)."""
    asked = walk = False
    for part in msg.parts or ():
        data = part.data
        if isinstance(data, dict):
            if data.get("type") in _IMAGE_PART_TYPES:
                return bool(msg.images())
            asked = asked or "output" in data
            walk = walk or any(isinstance(value, (dict, list)) for value in data.values())
        elif isinstance(data, list):
            walk = True
    return asked and walk and bool(msg.images())


def count_message(
    msg: Message, counter: str, *, overhead_chars: int = 400, chars_per_token: float = 4.0, cache: CountCache | None = None
) -> int:
    """Tokens of one message by a counter, through the cache when one is given."""
    if counter == "estimate":
        if cache is None:
            c = content_chars(msg)
            value = -1 if c is None else (int(c) if c == c else 0)
        else:
            key = cache.key(msg)
            found = cache.chars.get(key)
            if found is None:
                c = content_chars(msg)
                found = cache.chars[key] = -1 if c is None else (int(c) if c == c else 0)
            value = found
        return 0 if value < 0 else math.ceil((value + overhead_chars) / chars_per_token)
    if cache is None:
        return len(get_encoding(counter).encode_ordinary(_utf8_safe(render_for_tokenizer(msg)))) + TOKENIZER_OVERHEAD_TOKENS
    store = cache.encoded.setdefault(counter, {})
    key = cache.key(msg)
    count = store.get(key)
    if count is None:
        count = len(get_encoding(counter).encode_ordinary(_utf8_safe(render_for_tokenizer(msg)))) + TOKENIZER_OVERHEAD_TOKENS
        store[key] = count
    return count
