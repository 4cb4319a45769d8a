"""Calibrate the simulated size model against briefings that really happened.

A *pair* is (what the briefer was asked → how long its answer was): previous briefing chars and
bucket, chars of newly folded transcript, target, actual output chars. Pairs come from the live
briefer's disk cache (every cached answer stores its request features), from replays with text
briefers, or from a stagewise history that carries real briefings. The fit:

    y = new_chars_ratio × new_chars + carry[bucket] × previous_chars      (non-negative least squares,
                                                                            on pairs below the cap)
    overshoot = the ratio of a plateau of the longest answers, else max(knob, longest answer / target)
    min chars = the size of a plateau of the shortest answers, else no higher than the data allow

and it is judged on held-out pairs (MAPE, R², mean absolute error), next to the default knobs' error
on the same pairs so that the improvement is visible. Pure: no I/O beyond the cache object passed in.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.briefing.simulated import CARRY, OPAQUE_SIZE_RATIO, SimulatedBriefer, model_chars
from workbench.knobs import KNOB_SPECS, Knobs

if TYPE_CHECKING:
    from workbench.briefing.cache import BriefingCache
    from workbench.history.model import History
    from workbench.replay import Run

BUCKETS = ("lt60", "60to85", "gte85")
NEAR_CAP_RATIO = 0.8  # answers this close to the target tell us where the model stops growing


@dataclass(frozen=True, kw_only=True)
class Pair:
    """One observed briefing: the request's size features and the answer's length (UTF-16 units)."""

    previous_chars: int
    bucket: str
    new_chars: int
    target_chars: int
    actual_chars: int
    model: str = ""
    source: str = ""

    def key(self) -> str:
        text = f"{self.previous_chars}|{self.bucket}|{self.new_chars}|{self.target_chars}|{self.actual_chars}|{self.model}"
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class SizeModel:
    """Parameters of the size model (``workbench.briefing.simulated``)."""

    new_chars_ratio: float
    overshoot_ratio: float
    min_chars: int
    carry: Mapping[str, float] = field(default_factory=lambda: dict(CARRY))

    @classmethod
    def from_knobs(cls, knobs: Knobs, carry: Mapping[str, float] = CARRY) -> SizeModel:
        return cls(new_chars_ratio=knobs.sim_new_chars_ratio, overshoot_ratio=knobs.sim_overshoot_ratio,
                   min_chars=knobs.sim_min_chars, carry=dict(carry))

    def predict(self, pair: Pair) -> int:
        return model_chars(
            previous_chars=pair.previous_chars, bucket=pair.bucket, new_chars=pair.new_chars,
            target_chars=pair.target_chars, new_chars_ratio=self.new_chars_ratio,
            overshoot_ratio=self.overshoot_ratio, min_chars=self.min_chars, carry=self.carry,
        )


@dataclass(frozen=True, kw_only=True)
class FitError:
    """How well a size model predicts briefing length on some pairs."""

    n: int
    mape: float  # mean |predicted − actual| / actual
    r2: float  # 1 − SS_res / SS_tot (nan with fewer than 2 distinct actual sizes)
    mae_chars: float


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """A fitted size model, its held-out error, and the default knobs' error on the same pairs."""

    model: SizeModel
    n_train: int
    n_test: int
    in_sample: bool  # too few pairs to hold any out: the error is measured on the training pairs
    test: FitError
    baseline: FitError

    def knobs(self, base: Knobs | None = None) -> Knobs:
        """``base`` with the fitted sim_* knobs (clipped to their ranges)."""
        base = base or Knobs()
        return base.replace(
            sim_new_chars_ratio=_clip_knob("sim_new_chars_ratio", self.model.new_chars_ratio),
            sim_overshoot_ratio=_clip_knob("sim_overshoot_ratio", self.model.overshoot_ratio),
            sim_min_chars=int(_clip_knob("sim_min_chars", self.model.min_chars)),
        )

    def briefer(self) -> SimulatedBriefer:
        """A simulated briefer with the fitted carry factors (use with :meth:`knobs`)."""
        return SimulatedBriefer(carry=tuple(sorted(self.model.carry.items())))

    def summary(self) -> str:
        m = self.model
        carry = ", ".join(f"{b} {m.carry.get(b, CARRY[b]):.2f}" for b in BUCKETS)
        where = "in-sample (too few pairs to hold out)" if self.in_sample else f"{self.n_test} held-out pairs"
        return (
            f"fitted on {self.n_train} pairs: new_chars_ratio {m.new_chars_ratio:.3f}, carry [{carry}], "
            f"overshoot {m.overshoot_ratio:.2f}, min {m.min_chars:,} chars\n"
            f"error on {where}: MAPE {self.test.mape:.1%}, R² {self.test.r2:.3f}, MAE {self.test.mae_chars:,.0f} chars"
            f" (default knobs: MAPE {self.baseline.mape:.1%}, R² {self.baseline.r2:.3f})"
        )


def _clip_knob(name: str, value: float) -> float:
    spec = KNOB_SPECS[name]
    lo = spec.low if spec.low is not None else value
    hi = spec.high if spec.high is not None else value
    return float(min(max(value, lo), hi))


# -- where pairs come from ------------------------------------------------------------------------
def pair_from_features(features: Mapping[str, Any], actual_chars: int, *, model: str = "", source: str = "") -> Pair:
    """A pair from the request features the live briefer stores with each answer."""
    regenerate = bool(features.get("regenerate"))
    new = features["compact_history_chars"] if regenerate else features["new_material_chars"]
    return Pair(
        previous_chars=0 if regenerate else int(features["previous_chars"]),
        bucket="none" if regenerate else str(features["bucket"]),
        new_chars=int(new),
        target_chars=int(features["target_chars"]),
        actual_chars=int(actual_chars),
        model=model,
        source=source,
    )


def pairs_from_cache(cache: BriefingCache) -> list[Pair]:
    """Every cached live answer that carries its request features."""
    out = []
    for key, value in cache.items():
        features = value.get("request")
        if isinstance(features, dict) and isinstance(value.get("chars"), int):
            out.append(pair_from_features(features, value["chars"], model=str(value.get("model", "")), source=key[:12]))
    return out


def pairs_from_runs(runs: Iterable[Run]) -> list[Pair]:
    """Pairs from replays whose briefer wrote text (live or otherwise), one per landed compression."""
    out = []
    for run in runs:
        for c in run.compressions:
            if c.status != "landed" or not c.summarize or c.record.text is None:
                continue
            features = {
                "previous_chars": c.previous_chars, "bucket": c.bucket, "new_material_chars": c.new_material_chars,
                "compact_history_chars": c.compact_history_chars, "target_chars": run.knobs.target_briefing_chars,
                "regenerate": False,
            }
            out.append(pair_from_features(features, c.briefing_chars, model=c.record.model, source=run.history_id))
    return out


def pairs_from_history(history: History, *, target_chars: int = 30_000, host: bool = True) -> list[Pair]:
    """Pairs from a stagewise history that carries real briefings (one per compression point)."""
    from workbench.briefing.prompt import hint_bucket
    from workbench.history.jsjson import utf16_len
    from workbench.stagewise.serialize import serialize_message

    msgs = history.messages
    points = [i for i, m in enumerate(msgs) if m and m.briefing]
    out = []
    prev: int | None = None
    for b in points:
        start = prev if prev is not None else 0
        chunks = [c for c in (serialize_message(m, host=host) for m in msgs[start:b]) if c is not None]
        new_chars = sum(utf16_len(c) for c in chunks) + max(0, len(chunks) - 1)
        prev_chars = utf16_len(msgs[prev].briefing or "") if prev is not None else 0
        _, _, bucket = hint_bucket(prev_chars, target_chars)
        out.append(Pair(previous_chars=prev_chars, bucket=bucket, new_chars=new_chars, target_chars=target_chars,
                        actual_chars=utf16_len(msgs[b].briefing or ""), model="stagewise", source=f"{history.id}@{b}"))
        prev = b
    return out


# -- fitting and judging --------------------------------------------------------------------------
def _nnls(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with coefficients ≥ 0: drop the most negative column and refit until none is."""
    active = list(range(a.shape[1]))
    coef = np.zeros(a.shape[1])
    while active:
        sol, *_ = np.linalg.lstsq(a[:, active], y, rcond=None)
        if (sol >= 0).all():
            coef[active] = sol
            break
        active.pop(int(np.argmin(sol)))
    return coef


def fit_size_model(pairs: Sequence[Pair], *, defaults: Knobs | None = None) -> SizeModel:
    """Fit new_chars_ratio, per-bucket carry, overshoot and min chars to observed pairs."""
    if not pairs:
        raise ValueError("calibration needs at least one pair (a cached live run or a history with briefings)")
    base = SizeModel.from_knobs(defaults or Knobs())
    coef, present = _linear_fit(pairs)
    # A plateau: the largest answers sit together at one ratio of the target while the linear part
    # would make them longer. That ratio is the overshoot; without a plateau the cap must merely
    # stay above everything observed.
    ratios = np.array([p.actual_chars / p.target_chars for p in pairs])
    top = float(ratios.max())
    at_top = [p for p, r in zip(pairs, ratios, strict=True) if r >= 0.98 * top]
    wants_more = [p for p in at_top if _linear(coef, present, p) > 1.05 * p.actual_chars]
    if top >= NEAR_CAP_RATIO and len(wants_more) >= 2:
        overshoot = top
        below = [p for p in pairs if p not in at_top]
        if len(below) >= 2:
            coef, present = _linear_fit(below)
    else:
        overshoot = max(base.overshoot_ratio, top)
    carry = dict(base.carry)
    for j, b in enumerate(present, start=1):
        carry[b] = float(min(coef[j], 1.5))
    # Likewise at the bottom: a floor shows as small answers that the linear part would make smaller.
    bottom = min(p.actual_chars for p in pairs)
    at_bottom = [p for p in pairs if p.actual_chars <= 1.02 * bottom]
    if len([p for p in at_bottom if _linear(coef, present, p) < 0.95 * p.actual_chars]) >= 2:
        min_chars = bottom
    else:
        min_chars = min(base.min_chars, bottom, int(min(_linear(coef, present, p) for p in pairs)))
    return SizeModel(new_chars_ratio=float(coef[0]), overshoot_ratio=float(overshoot), min_chars=max(0, min_chars),
                     carry=carry)


def _features(p: Pair, present: Sequence[str]) -> list[float]:
    return [float(p.new_chars)] + [float(p.previous_chars) if p.bucket == b else 0.0 for b in present]


def _linear_fit(pairs: Sequence[Pair]) -> tuple[np.ndarray, list[str]]:
    present = [b for b in BUCKETS if any(p.bucket == b and p.previous_chars for p in pairs)]
    a = np.array([_features(p, present) for p in pairs], dtype=float)
    y = np.array([p.actual_chars for p in pairs], dtype=float)
    return _nnls(a, y), present


def _linear(coef: np.ndarray, present: Sequence[str], p: Pair) -> float:
    return float(np.dot(coef, _features(p, present)))


def evaluate(model: SizeModel, pairs: Sequence[Pair]) -> FitError:
    """MAPE, R² and mean absolute error of ``model`` on ``pairs``."""
    if not pairs:
        return FitError(n=0, mape=math.nan, r2=math.nan, mae_chars=math.nan)
    y = np.array([p.actual_chars for p in pairs], dtype=float)
    yhat = np.array([model.predict(p) for p in pairs], dtype=float)
    err = np.abs(yhat - y)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(((yhat - y) ** 2).sum()) / ss_tot if ss_tot > 0 else math.nan
    return FitError(n=len(pairs), mape=float((err / np.maximum(y, 1.0)).mean()), r2=r2, mae_chars=float(err.mean()))


def split_pairs(pairs: Sequence[Pair], test_fraction: float = 0.3) -> tuple[list[Pair], list[Pair]]:
    """A deterministic train/test split by each pair's content hash (same pairs → same split)."""
    if not 0 <= test_fraction < 1:
        raise ValueError(f"test_fraction must be in [0, 1), got {test_fraction!r}")
    ordered = sorted(pairs, key=Pair.key)
    n_test = int(round(len(ordered) * test_fraction))
    if len(ordered) - n_test < 2:
        return list(ordered), []
    return ordered[n_test:], ordered[:n_test]


def calibrate(pairs: Sequence[Pair], *, test_fraction: float = 0.3, defaults: Knobs | None = None) -> Calibration:
    """Fit on a training share of ``pairs`` and report the error on the rest (in-sample when too few)."""
    defaults = defaults or Knobs()
    train, test = split_pairs(pairs, test_fraction)
    model = fit_size_model(train, defaults=defaults)
    judged = test or train
    return Calibration(
        model=model,
        n_train=len(train),
        n_test=len(test),
        in_sample=not test,
        test=evaluate(model, judged),
        baseline=evaluate(SizeModel.from_knobs(defaults), judged),
    )


# -- the agents' own briefings, from their logs (analysis.real_logs.after_compaction) -----------------------------------------
@dataclass(frozen=True, kw_only=True)
class AfterFit:
    """The size model and the constant restore fitted to an agent's logged compactions.

    ``restore_tokens`` is ``compaction_restore_tokens``: what the first call after a compaction carries beyond
    the briefing and what the replay works out (hidden prefix, restored files, pinned and kept messages), as a
    median over the compactions fitted."""

    model: SizeModel
    restore_tokens: int
    compactions: int
    pairs: int

    def knobs(self, base: Knobs) -> Knobs:
        """``base`` with the fitted sim_* knobs and restore (clipped to their ranges)."""
        out = Calibration(model=self.model, n_train=self.pairs, n_test=0, in_sample=True,
                          test=FitError(n=0, mape=math.nan, r2=math.nan, mae_chars=math.nan),
                          baseline=FitError(n=0, mape=math.nan, r2=math.nan, mae_chars=math.nan)).knobs(base)
        return out.replace(compaction_restore_tokens=int(_clip_knob("compaction_restore_tokens", self.restore_tokens)))


def _best_size_model(pairs: Sequence[Pair], base: Knobs) -> SizeModel:
    """The size model with the smallest mean absolute error on ``pairs``: the least-squares fit, or a floor
    (``min_chars``) with a ratio above it, on a grid of the pairs' own quantiles.

    An agent's summary need not grow with what it folds (Claude Code's summaries of ../shared/real_sessions_large
    are 4,000-25,000 chars whatever the length of the conversation, correlation 0.27): a linear fit through zero
    then misses every summary, while a floor holds the typical one."""
    fitted = fit_size_model(pairs, defaults=base)
    y = np.array([p.actual_chars for p in pairs], dtype=float)
    x = np.array([max(1, p.new_chars) for p in pairs], dtype=float)
    candidates = [fitted]
    for c in np.percentile(y, [10, 25, 40, 50, 60, 75, 90]):
        for r in [0.0, *np.percentile(y / x, [25, 50, 75])]:
            candidates.append(SizeModel(new_chars_ratio=float(r), overshoot_ratio=fitted.overshoot_ratio,
                                        min_chars=int(round(c)), carry=fitted.carry))
    return min(candidates, key=lambda m: evaluate(m, pairs).mae_chars)


def pairs_from_afters(afters: Iterable[Any], *, source: str = "") -> list[Pair]:
    """One pair per logged compaction whose briefing length is known (``AfterCompaction.actual_chars``)."""
    return [pair_from_features(a.features, a.actual_chars, model="agent", source=f"{source}@{a.index}")
            for a in afters if a.actual_chars is not None and a.features]


def after_tokens(after: Any, model: SizeModel, restore_tokens: int) -> int | None:
    """The context at the first call after a compaction with ``model`` and ``restore_tokens`` instead of the
    knobs ``after`` was predicted with: the size model's briefing, as ``SimulatedBriefer`` sizes it."""
    if after.rest_tokens is None or not after.features:
        return None
    pair = pair_from_features(after.features, 0)
    chars = model.predict(pair)
    if after.opaque:
        chars = int(round(chars * OPAQUE_SIZE_RATIO))
    return int(after.rest_tokens - after.restore_knob + restore_tokens + math.ceil(chars / after.chars_per_token))


# How many compactions a fitted constant restore counts as against the rules alone (0: what counting.restore works
# out is all Claude Code re-attaches). Where the rules restore no whole file, they meet the bill: 8 of the 9 such
# Claude Code compactions of real_sessions_large whose hidden prefix is the log's own are within 24-301 tokens of
# what the call after them billed (the summary at chars / 4), while what they leave where files are restored varies
# by thousands, and by user. So the median of n compactions is weighed n / (n + 10): one user's few compactions
# (the 3 of real_sessions_large's Claude Code logs outside entireio/cli) no longer set a constant 4,600 tokens
# above what the other 68 leave. Only where the restore is worked out by rules (``restore_files`` > 0: Claude Code);
# Codex re-attaches nothing the rules size, and its constant is all the prediction leaves.
RESTORE_PRIOR_COMPACTIONS = 10


def fit_after(afters: Sequence[Any], base: Knobs) -> AfterFit:
    """Fit the size model to the agents' briefing lengths (its defaults from ``base``), then the constant restore
    to what the first call after each compaction billed: the median of what the rest of the prediction leaves,
    held towards 0 (the rules alone) when few compactions tell it (``RESTORE_PRIOR_COMPACTIONS``)."""
    pairs = pairs_from_afters(afters)
    model = _best_size_model(pairs, base) if pairs else SizeModel.from_knobs(base)
    residuals = []
    # What the rest of the prediction leaves is the restore only where the hidden prefix is the log's own: a log
    # that starts mid-session has a fitted one, whose error lands here too (Claude Code in real_sessions_large,
    # with usage: a median of 990 tokens left where the prefix is the log's own, 58 compactions; 5,571 where it
    # is fitted, 13).
    own = [a for a in afters if getattr(a, "own_prefix", False)]
    for a in own or afters:
        if a.logged_tokens is None:
            continue
        predicted = after_tokens(a, model, 0)
        if predicted is not None:
            residuals.append(a.logged_tokens - predicted)
    n = len(residuals)
    prior = RESTORE_PRIOR_COMPACTIONS if base.restore_files > 0 else 0
    restore = float(np.median(residuals)) * n / (n + prior) if residuals else float(base.compaction_restore_tokens)
    return AfterFit(model=model, restore_tokens=max(0, int(round(restore))), compactions=len(residuals),
                    pairs=len(pairs))
