"""The histories a study runs on: the samples the repository generates, plus real transcripts when present.

The repository holds no third-party transcripts. ``../shared/real_histories`` (beside a checkout, or
``$WORKBENCH_SHARED``) has fourteen real ones from six agents, ``../shared/real_sessions`` eleven agent logs; when
they are missing a study still runs on the generated samples (``sample_histories/``, rebuilt by ``workbench
samples``), a reality check on the generated Claude Code log. Reads directory listings only; loading is the caller's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from workbench.history.words import counted

SHARED_VAR = "WORKBENCH_SHARED"
QUICK_SAMPLES = ("short.jsonl", "tool_heavy.jsonl")  # long.jsonl (2,200 messages) takes minutes with probes
SAMPLE_LOGS = ("claude_code.jsonl",)  # the generated agent log (history/samples/generate_claude_code.py)


def sample_dirs() -> list[Path]:
    """The shipped sample folders: ``sample_histories/`` of a source checkout, ``workbench/samples``."""
    out = [Path(__file__).resolve().parents[3] / "sample_histories"]
    packaged = resources.files("workbench") / "samples"
    if packaged.is_dir():
        out.append(Path(str(packaged)))
    return [d for d in out if d.is_dir()]


def shared_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$WORKBENCH_SHARED``, else the ``shared`` folder beside the repository checkout."""
    env = os.environ if environ is None else environ
    value = env.get(SHARED_VAR)
    return Path(value) if value else Path(__file__).resolve().parents[4] / "shared"


def real_history_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The real transcripts of ``shared/real_histories`` (sorted), or [] when the folder is not there."""
    folder = shared_dir(environ) / "real_histories"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def real_session_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The real Claude Code and Codex session logs of ``shared/real_sessions`` (sorted), or [] when absent."""
    folder = shared_dir(environ) / "real_sessions"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def sample_paths(names: Sequence[str] = QUICK_SAMPLES) -> list[Path]:
    """The generated samples by file name, from the first sample folder that has them."""
    for folder in sample_dirs():
        found = [folder / n for n in names if (folder / n).is_file()]
        if found:
            return found
    return []


@dataclass(frozen=True)
class Study:
    """Which files a study reads and a sentence saying so (printed by the notebooks)."""

    paths: tuple[Path, ...]
    samples: int
    real: int
    what: tuple[str, str] = ("history", "histories")  # what the files are, one and several
    real_what: str = "real transcript"

    def describe(self) -> str:
        parts = [counted(self.samples, "generated sample")] if self.samples or not self.real else []
        if self.real:
            parts.append(f"{counted(self.real, self.real_what)} from {self.paths[-1].parent}")
        missing = "" if self.real else f" (no {self.real_what}s: set WORKBENCH_SHARED to the shared folder to add them)"
        return f"{counted(len(self.paths), *self.what)}: {' + '.join(parts)}{missing}"


def study_histories(environ: Mapping[str, str] | None = None, *, samples: Sequence[str] = QUICK_SAMPLES) -> Study:
    """The generated samples, then every real transcript that is present."""
    gen, real = sample_paths(samples), real_history_paths(environ)
    return Study(paths=(*gen, *real), samples=len(gen), real=len(real))


def session_logs(environ: Mapping[str, str] | None = None) -> Study:
    """The real Claude Code and Codex logs of ``shared/real_sessions``, else the generated Claude Code log
    (``sample_histories/claude_code.jsonl``: usage per call and one logged compaction), so a reality check runs."""
    real = real_session_paths(environ)
    gen = [] if real else sample_paths(SAMPLE_LOGS)
    return Study(paths=(*gen, *real), samples=len(gen), real=len(real), what=("agent log", "agent logs"),
                 real_what="real session log")
