"""The 14 real transcripts in ``../shared/real_histories``: paths, or skip (fail under CI) when missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import shared_dir


def real_history_paths() -> list[Path]:
    """Sorted ``*.jsonl`` of shared/real_histories; skips the test with the reason when absent (fails under CI)."""
    folder = shared_dir() / "real_histories"
    paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not paths:
        reason = f"real histories not found in {folder} (set WORKBENCH_SHARED to the shared folder)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return paths
