"""Sweeps on an existing dask.distributed cluster: connect to its scheduler, ship the histories, hand out the tasks.

The workers need the workbench installed (the same version, with the ``dask`` extra), not the histories: each
history file's bytes are read here, named by their SHA-256, and placed on every worker once (``scatter`` with
``broadcast``), before any task. A task then names the history by that hash (``sweep.ShippedHistory``) and
takes the bytes from its worker's memory; the worker loads the history the first time and keeps it and its
token counts (``sweep._history_of``), so a history costs one transfer and one load per worker however many
knob sets it meets, and a later sweep on the same workers loads nothing again. Files that must be read from
their path (a SQLite store, an OpenCode storage folder) are passed as paths: those workers need the file at the
same place. ``dask.distributed`` is imported only here, and only when a cluster is asked for.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.explore.sweep import ShippedHistory

CONNECT_TIMEOUT_S = 10.0
KEY_PREFIX = "workbench-history-"  # + the SHA-256 of the file's bytes: the key the bytes have on the cluster


@dataclass(frozen=True)
class Shipment:
    """What ``Cluster.ship`` sent: how many files, their bytes, to how many workers, and what went as paths."""

    files: int
    bytes: int
    workers: int
    as_paths: tuple[str, ...]
    seconds: float

    def describe(self) -> str:
        """One line for the command's stderr."""
        from workbench.history.words import counted

        line = (f"shipped {counted(self.files, 'history', 'histories')} ({self.bytes / 1e6:,.1f} MB) to "
                f"{counted(self.workers, 'worker')} in {self.seconds:.1f}s, once each by content hash")
        if self.as_paths:
            line += f"; {len(self.as_paths)} sent as paths (the workers must see them: {', '.join(self.as_paths[:3])})"
        return line


@dataclass
class Cluster:
    """A connected dask client and the ``concurrent.futures`` executor ``sweep`` and ``tune`` take."""

    client: Any
    executor: Executor
    address: str

    @property
    def threads(self) -> int:
        """Task slots on the cluster (worker threads): what the sweep sizes its chunks for."""
        return max(1, sum(self.client.nthreads().values()))

    @property
    def workers(self) -> int:
        return len(self.client.nthreads())

    def ship(self, paths: Sequence[str | os.PathLike[str]]) -> tuple[list[ShippedHistory | str], Shipment]:
        """Each file's bytes on every worker, once per distinct content; the sources to sweep, in ``paths``' order.

        A file that cannot be read here, or that is read from its path (SQLite, OpenCode storage), stays a path:
        the worker reports it as the local sweep would, or reads it where the cluster shares the file."""
        import time

        t0 = time.perf_counter()
        sources: list[ShippedHistory | str] = []
        payload: dict[str, bytes] = {}
        as_paths: list[str] = []
        for p in paths:
            path = os.fspath(p)
            data = _read_shippable(Path(path))
            if data is None:
                sources.append(path)
                as_paths.append(path)
                continue
            digest = hashlib.sha256(data).hexdigest()
            payload.setdefault(KEY_PREFIX + digest, data)
            sources.append(ShippedHistory(path=path, digest=digest))
        futures = self.client.scatter(payload, broadcast=True, hash=False) if payload else {}
        shipped = [s if isinstance(s, str) else ShippedHistory(s.path, s.digest, futures[KEY_PREFIX + s.digest])
                   for s in sources]
        return shipped, Shipment(files=len(payload), bytes=sum(map(len, payload.values())), workers=self.workers,
                                 as_paths=tuple(as_paths), seconds=time.perf_counter() - t0)


def _read_shippable(path: Path) -> bytes | None:
    """The file's bytes when a worker can load the history from them (``load_history_bytes``), else None."""
    from workbench.history.errors import HistoryError
    from workbench.history.readers import check_history_file
    from workbench.history.readers.opencode_store import is_storage_session_file

    try:
        check_history_file(path)
        if is_storage_session_file(path):  # its messages are in other files beside it
            return None
        data = path.read_bytes()
    except (HistoryError, OSError):
        return None
    return None if data.startswith(b"SQLite format 3\x00") else data


@contextmanager
def connect(address: str, *, timeout: float = CONNECT_TIMEOUT_S) -> Iterator[Cluster]:
    """A client of the scheduler at ``address`` (``tcp://host:8786``), closed on the way out. Leaving by an error,
    Ctrl-C included, cancels every task this client still has on the cluster first."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("a cluster needs dask.distributed: pip install 'compaction-workbench[dask]'") from None
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the dask scheduler at {address}: {exc}") from None
    executor = client.get_executor(pure=False)  # tasks are never the same twice: no hashing of their arguments
    try:
        yield Cluster(client=client, executor=executor, address=address)
    except BaseException:
        executor.shutdown(wait=False)  # cancels what is queued or running
        raise
    finally:
        client.close()
