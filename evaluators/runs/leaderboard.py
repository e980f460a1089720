"""The latest run of each system on one dataset, ranked, with intervals and the groups the data cannot tell apart.

Each system's latest run (time order) gives its mean of the metric with a percentile bootstrap interval
(:func:`evaluators.metrics.statistics.bootstrap_ci`).  Systems are ranked by mean; tiers are then formed from the
top: a tier's leader is the best system not yet placed, and every next system whose paired test against the
leader (``compare``'s approximate randomization on their common items,
:func:`~evaluators.metrics.statistics.approximate_randomization`) does not reject after Holm's correction over
all the leader-versus-other tests of the board joins its tier.  Systems in one tier cannot be told apart by the
data; a system in a lower tier is worse than that tier's leader.  Two runs sharing fewer than ``min_overlap`` of
their items are not tested (the lower one then starts a new tier, and ``untested`` names the pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.metrics.statistics import adjust_p_values, approximate_randomization, bootstrap_ci
from evaluators.results import DictMixin
from evaluators.run_result import RunResult
from evaluators.runs.compare import MIN_OVERLAP, overlap_error, rows_of


@dataclass(frozen=True)
class BoardRow(DictMixin):
    """One system on the board.

    Attributes
    ----------
    rank : int
        1 for the best mean.
    tier : int
        1 for the systems the data cannot tell apart from the best, and so on.
    system, run : str
    n : int
    mean, ci_low, ci_high : float or None
    p_vs_leader : float or None
        Holm-adjusted p-value of the test against its tier's leader (``None`` for a leader).
    """

    rank: int
    tier: int
    system: str
    run: str
    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    p_vs_leader: float | None


@dataclass(frozen=True)
class Leaderboard(DictMixin):
    """Systems ranked with tiers (see the module docstring).

    Attributes
    ----------
    metric : str
    alpha : float
    rows : tuple of BoardRow
    untested : tuple of str
        Why a pair was not tested (too few common items).
    """

    metric: str
    alpha: float
    rows: tuple[BoardRow, ...]
    untested: tuple[str, ...] = ()


def _values(result: RunResult, metric: str) -> dict[str, float]:
    rows = rows_of(result)
    column = result.items.values.get(metric)
    if column is None:
        return {}
    return {i: column[r] for i, r in rows.items() if column[r] is not None}


def leaderboard(latest: Sequence[tuple[str, RunResult]], metric: str, *, alpha: float = 0.05,
                n_resamples: int = 10_000, seed: int = 0, min_overlap: float = MIN_OVERLAP) -> Leaderboard:
    """Rank the systems of ``latest`` (one run each) by ``metric``, with intervals and tiers.

    Parameters
    ----------
    latest : sequence of (str, RunResult)
        Run name and result: each system's latest run, one system per run.
    metric : str
    alpha : float
        In (0, 1): the level of the Holm-corrected tests against each tier's leader.
    n_resamples, seed
        Of the intervals and the randomization tests.
    min_overlap : float
        Share of the larger run's items two runs must share to be tested.

    Returns
    -------
    Leaderboard

    Raises
    ------
    ValueError
        ``alpha`` outside (0, 1), or a run with several systems.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    entries = []
    for name, result in latest:
        values = _values(result, metric)
        xs = list(values.values())
        ci = bootstrap_ci(xs, n_resamples=n_resamples, seed=seed, unit=result.unit) if len(xs) >= 2 and n_resamples \
            else None
        entries.append((result.systems[0] if result.systems else name, name, values,
                        sum(xs) / len(xs) if xs else None, ci))
    order = sorted(range(len(entries)), key=lambda k: (entries[k][3] is None, -(entries[k][3] or 0), entries[k][0]))
    # every test a leader could need: the best against each other, then each next leader against those below it
    raw: dict[tuple[int, int], float] = {}
    untested = []
    for x, a in enumerate(order):
        for b in order[x + 1:]:
            va, vb = entries[a][2], entries[b][2]
            common = [i for i in va if i in vb]
            error = overlap_error(entries[a][1], entries[b][1], len(va), len(vb), len(common), min_overlap)
            if error:
                untested.append(error)
                continue
            if len(common) >= 2:
                raw[(a, b)] = approximate_randomization([va[i] for i in common], [vb[i] for i in common],
                                                        n_resamples=max(1, n_resamples), seed=seed).p_value
    adjusted = dict(zip(raw, adjust_p_values(list(raw.values()), "holm")))
    rows, tier, leader = [], 0, None
    for rank, k in enumerate(order, start=1):
        p = adjusted.get((leader, k)) if leader is not None else None
        if leader is None or p is None or p <= alpha:
            tier, leader, p = tier + 1, k, None
        system, name, values, mean, ci = entries[k]
        rows.append(BoardRow(rank, tier, system, name, len(values), mean, ci.ci_low if ci else None,
                             ci.ci_high if ci else None, p))
    return Leaderboard(metric, alpha, tuple(rows), tuple(untested))


def latest_by_system(records: Sequence) -> list:
    """Each system's latest run among ``records`` (RunRecords in time order, one system each), in first-seen
    system order."""
    latest: dict[str, object] = {}
    for r in records:
        for system in r.systems:
            latest[system] = r
    return list({r.name: r for r in latest.values()}.values())


__all__ = ["BoardRow", "Leaderboard", "latest_by_system", "leaderboard"]
