"""Held-out checks of what ``workbench reality`` predicts: each session predicted by fits that never saw it.

Three predictions are checked against the logs (``analysis.real_logs.reality.follow_log``): where each automatic
compaction falls (without usage: the estimate alone), the context right after each logged compaction (``predicted_tokens_after``, against the billed input + cache reads + writes of the first call
after it) and the session's bill (in bill units). For every session, the models are fitted on other sessions
of its agent only, leaving out the session itself (``fold="session"``) or every session of its repository
(``fold="repository"``, another person's work): the counting knobs (``analysis.real_logs.calibration.fit_agent``, when the
usage is ignored), the size model and restore (``briefer_calibration.fit_after``, on the other sessions'
compactions) and the bill model (``analysis.real_logs.bill.fit_bill_model``, on the other sessions of its version family
when there are two or more, else of its agent). Fits are made on the ``train`` group (the large set) only.
Pure: histories in, values out; many replays, so it sits above the analyses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.analysis.real_logs.bill import (
    FAMILY_MIN_LOGS,
    Bill,
    BillModel,
    bill_family,
    fit_bill_model,
    fit_bill_models,
    with_agent_carry,
)
from workbench.analysis.real_logs.calibration import fit_agent
from workbench.analysis.real_logs.estimate_fit import own_prefix as measured_own_prefix
from workbench.analysis.real_logs.reality import SessionReality, follow_log
from workbench.counting.tokens import CountCache
from workbench.explore.briefer_calibration import AfterFit, fit_after
from workbench.history.model import History
from workbench.knobs import Knobs, clamp_knob

PREFIX_FROM = "growth"  # the counting fit (analysis.real_logs.calibration.fit_agent): on the billed growth
AFTER_TOLERANCE = 0.10
BILL_TOLERANCE = 0.10


@dataclass(frozen=True, kw_only=True)
class Session:
    """One log, with its replay under the shipped settings and the log's usage (what the fits read)."""

    history: History
    file: str
    repo: str
    group: str  # "large" (fitted on) or "small"
    reality: SessionReality

    @property
    def agent(self) -> str:
        return self.reality.agent or "unknown"

    @property
    def family(self) -> str:
        return bill_family(self.reality.agent, self.reality.version)

    @property
    def mid_session(self) -> bool:
        log = self.history.log
        return bool(log is not None and log.extra.get("starts_mid_session"))


@dataclass(frozen=True, kw_only=True)
class Held:
    """One session predicted by a fold's fits."""

    file: str
    repo: str
    group: str
    agent: str
    family: str
    usage: bool
    fold: str  # session | repository
    mid_session: bool
    reality: SessionReality | None  # None when no other session was there to fit on
    trained_on: int = 0

    @property
    def bill_error(self) -> float | None:
        return None if self.reality is None else self.reality.bill_error

    @property
    def after_errors(self) -> list[float]:
        """Predicted over logged context after each compaction, minus one, where both are known."""
        if self.reality is None:
            return []
        return [e for c in self.reality.compactions if (e := c.after_error) is not None]


@dataclass
class Folds:
    """The sessions and what the folds' fits keep between them (fits are memoised by their training set)."""

    sessions: list[Session]
    cache: CountCache
    rows_of: dict[int, Any] = field(default_factory=dict)
    _counting: dict[frozenset[str], Any] = field(default_factory=dict)
    _after: dict[frozenset[str], AfterFit] = field(default_factory=dict)
    _bill: dict[tuple[frozenset[str], str, BillModel | None], BillModel] = field(default_factory=dict)

    def train(self, test: Session, fold: str) -> list[Session]:
        """The sessions a fold fits ``test``'s models on: the large set's of its agent, less it (or its repo)."""
        return [s for s in self.sessions if s.group == "large" and s.agent == test.agent
                and (s.file != test.file if fold == "session" else s.repo != test.repo)]

    def knobs(self, test: Session, train: list[Session], *, usage: bool, own_prefix: bool = False) -> Knobs:
        """``test``'s settings with the fold's counting knobs (without usage) and its size model and restore; with
        ``own_prefix``, the hidden prefix ``test``'s own first call measures (a diagnostic: the prefix known)."""
        key = frozenset(s.file for s in train)
        own = agent_settings(test.history, dollars=False)
        knobs = own.knobs
        if not usage:
            fit = self._counting.get(key)
            if fit is None:
                fit = self._counting[key] = fit_agent([s.history for s in train], cache=self.cache,
                                                      rows_of=self.rows_of, prefix_from=PREFIX_FROM)
            knobs = fit.knobs_for(knobs)
            measured = measured_own_prefix(test.history, fit.token_ratio, fit.structure, self.cache) if own_prefix \
                else None
            if measured is not None:
                knobs = knobs.replace(hidden_prefix_tokens=int(clamp_knob("hidden_prefix_tokens", measured)))
        after = self._after.get(key)
        if after is None:
            after = self._after[key] = fit_after([a for s in train for a in s.reality.afters], knobs)
        return after.knobs(knobs)

    def bill_model(self, test: Session, train: list[Session]) -> BillModel:
        """The fold's bill model: on the sessions of ``test``'s version family, or of its agent when fewer than 2;
        its carry share always on its agent's (``with_agent_carry``), and so is a share its family's calls do not
        measure (``fit_bill_model``'s ``prior``)."""
        pooled = self._fit_bill(train, test.agent, test.agent)
        family = [s for s in train if s.family == test.family]
        if len(family) < FAMILY_MIN_LOGS:
            return pooled
        return with_agent_carry(self._fit_bill(family, test.agent, test.family, pooled), pooled)

    def _fit_bill(self, use: list[Session], agent: str, name: str, prior: BillModel | None = None) -> BillModel:
        key = (frozenset(s.file for s in use), name, prior)
        found = self._bill.get(key)
        if found is None:
            found = self._bill[key] = fit_bill_model([(s.history, s.reality.calls) for s in use], agent=agent,
                                                     family=name, prior=prior)
        return found

    def held_out(self, *, usage: bool, fold: str, groups: Sequence[str] = ("large", "small"),
                 own_prefix: bool = False, bill_fold: str | None = None) -> list[Held]:
        """Every session of ``groups`` predicted by the fold's fits (``own_prefix``: see ``knobs``; ``bill_fold``:
        the bill model of another fold, a diagnostic: ``"session"`` under the repository fold bills its context with
        a model that saw the rest of the session's repository, how far the bill model alone could take that fold)."""
        out = []
        for test in self.sessions:
            if test.group not in groups:
                continue
            train = self.train(test, fold)
            run = None
            if train:
                knobs = self.knobs(test, train, usage=usage, own_prefix=own_prefix)
                billed_on = train if bill_fold is None else self.train(test, bill_fold)
                run = follow_log(test.history, knobs=knobs, usage=usage, bill_model=self.bill_model(test, billed_on),
                                 cache=self.cache)
            out.append(Held(file=test.file, repo=test.repo, group=test.group, agent=test.agent, family=test.family,
                            usage=usage, fold=fold, mid_session=test.mid_session, reality=run,
                            trained_on=len(train)))
        return out


def prepare(histories: Sequence[tuple[History, str, str]], *, cache: CountCache | None = None) -> Folds:
    """The folds over (history, repository, group) triples: each log followed once with its usage (the fits'
    material: its compactions' after-predictions and its model calls)."""
    cache = cache or CountCache(by_identity=True)
    sessions = []
    for history, repo, group in histories:
        if history.log is None or not history.log.calls:
            continue
        run = follow_log(history, usage=True, cache=cache)
        sessions.append(Session(history=history, file=run.file, repo=repo, group=group, reality=run))
    return Folds(sessions=sessions, cache=cache)


def shipped_fits(folds: Folds) -> tuple[dict[str, AfterFit], dict[str, BillModel]]:
    """The fits on every session of the large set: the size model and restore per agent, and the bill model per
    version family (and per agent, the fallback), as ``workbench reality`` ships them."""
    large = [s for s in folds.sessions if s.group == "large"]
    after: dict[str, AfterFit] = {}
    bills: dict[str, BillModel] = {}
    for agent in sorted({s.agent for s in large}):
        mine = [s for s in large if s.agent == agent]
        after[agent] = fit_after([a for s in mine for a in s.reality.afters],
                                 agent_settings(mine[-1].history, dollars=False).knobs)
        bills.update(fit_bill_models(agent, [(s.history, s.reality.calls, s.reality.version) for s in mine]))
    return after, bills


def bill_of(held: Held) -> tuple[Bill | None, Bill | None]:
    """(modelled, logged) bill of a held-out session."""
    return (None, None) if held.reality is None else (held.reality.bill, held.reality.logged_bill)
