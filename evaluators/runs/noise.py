"""The noise floor of repeated runs: runs of one system on one dataset version with one config (sampling seeds).

From ``k`` repeats, on the items every repeat scored:

- each item's flip rate: the share of the ``k (k - 1) / 2`` pairs of repeats whose values differ; the *flaky*
  items are those with a flip rate above 0;
- pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1: the unbiased
  ``1 - C(n - c, k) / C(n, k)`` per item, averaged) and pass^k (Yao et al. 2024, tau-bench:
  ``C(c, k) / C(n, k)``, every one of k tries right) with ``c`` the repeats whose value reaches ``threshold``;
- the noise band: the half-width of the interval that the mean difference between two runs differing by noise
  alone falls in, ``z * sqrt(sum_i 2 s_i^2) / n`` with ``s_i^2`` the sample variance of item ``i``'s values over
  the repeats (two independent repeats differ on item ``i`` with variance ``2 s_i^2``; normal approximation of
  the mean of ``n`` independent items).

:func:`beyond_noise` tests a candidate against the repeats: flagged only when its mean difference exceeds the
band *and* the paired randomization test (``compare``'s, :func:`~evaluators.metrics.statistics.
approximate_randomization`, against each item's mean over the repeats) rejects at ``alpha``.  The trend takes
the bands too (``noise_bands`` of :func:`evaluators.runs.trend.trend`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluators.metrics.statistics import approximate_randomization
from evaluators.results import DictMixin
from evaluators.run_result import RunResult
from evaluators.runs.compare import rows_of


@dataclass(frozen=True)
class NoiseFloor(DictMixin):
    """What repeats of one run say about its noise, for one metric.

    Attributes
    ----------
    runs : tuple of str
    metric : str
    n_items : int
        Items with a value in every repeat.
    mean : float
        Mean over those items of each item's mean over the repeats.
    flip_rate : float
        Mean over the items of their flip rates.
    flaky : tuple of str
        Items whose value differs between repeats, in the first run's order.
    pass_at_k, pass_hat_k : dict of int to float
        ``k`` (1 to the number of repeats) -> pass@k and pass^k.
    band : float
        Half-width of the noise band of a mean difference (in the metric's units).
    confidence_level : float
    threshold : float
        A value at or above it counts as a pass.
    """

    runs: tuple[str, ...]
    metric: str
    n_items: int
    mean: float
    flip_rate: float
    flaky: tuple[str, ...]
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]
    band: float
    confidence_level: float
    threshold: float


def _matrix(repeats: Sequence[tuple[str, RunResult]], metric: str, system: str | None):
    rows = [rows_of(result, system) for _, result in repeats]
    cols = []
    for (name, result) in repeats:
        if metric not in result.items.values:
            raise ValueError(f"run {name} has no metric {metric!r}; its metrics: {', '.join(result.metrics)}")
        cols.append(result.items.values[metric])
    ids = [i for i in rows[0] if all(i in r and c[r[i]] is not None for r, c in zip(rows, cols))]
    return ids, [[c[r[i]] for r, c in zip(rows, cols)] for i in ids]


def noise_floor(repeats: Sequence[tuple[str, RunResult]], metric: str, *, confidence_level: float = 0.95,
                threshold: float = 1.0, system: str | None = None) -> NoiseFloor:
    """The noise floor of ``repeats`` for ``metric`` (see the module docstring).

    Parameters
    ----------
    repeats : sequence of (str, RunResult)
        At least 2 runs of the same system, dataset version and config.
    metric : str
    confidence_level : float
        In (0, 1): the band's coverage.
    threshold : float
        A value ``>= threshold`` is a pass (pass@k, pass^k).
    system : str, optional
        The system of multi-system runs.

    Returns
    -------
    NoiseFloor

    Raises
    ------
    ValueError
        Fewer than 2 repeats, no item scored by all, or a run without the metric.
    """
    from scipy.stats import norm

    if len(repeats) < 2:
        raise ValueError("a noise floor needs at least 2 repeats")
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    ids, values = _matrix(repeats, metric, system)
    if not ids:
        raise ValueError("no item has a value in every repeat")
    k = len(repeats)
    pairs = k * (k - 1) / 2
    flips, variances, item_means, passes = [], [], [], []
    for vs in values:
        flips.append(sum(1 for a in range(k) for b in range(a + 1, k) if vs[a] != vs[b]) / pairs)
        m = sum(vs) / k
        item_means.append(m)
        variances.append(sum((v - m) ** 2 for v in vs) / (k - 1))
        passes.append(sum(1 for v in vs if v >= threshold))
    n = len(ids)
    z = float(norm.ppf(0.5 + confidence_level / 2))
    band = z * math.sqrt(sum(2 * s for s in variances)) / n
    at = {j: sum(1 - math.comb(k - c, j) / math.comb(k, j) for c in passes) / n for j in range(1, k + 1)}
    hat = {j: sum(math.comb(c, j) / math.comb(k, j) for c in passes) / n for j in range(1, k + 1)}
    return NoiseFloor(tuple(name for name, _ in repeats), metric, n, sum(item_means) / n, sum(flips) / n,
                      tuple(i for i, f in zip(ids, flips) if f > 0), at, hat, band, confidence_level, threshold)


@dataclass(frozen=True)
class NoiseVerdict(DictMixin):
    """A candidate run against the repeats' noise floor.

    Attributes
    ----------
    candidate : str
    n : int
        Items the candidate and every repeat scored.
    delta : float
        Candidate mean minus the repeats' mean, on those items.
    band : float
    p_value : float or None
        Paired randomization test of the candidate against each item's mean over the repeats.
    flagged : bool
        ``|delta| > band`` and ``p_value <= alpha``.
    flaky_changed : tuple of str
        Flaky items whose candidate value differs from their value in the first repeat (marked, not trusted).
    """

    candidate: str
    n: int
    delta: float
    band: float
    p_value: float | None
    flagged: bool
    flaky_changed: tuple[str, ...]


def beyond_noise(repeats: Sequence[tuple[str, RunResult]], candidate: tuple[str, RunResult], metric: str, *,
                 alpha: float = 0.05, n_resamples: int = 10_000, seed: int = 0, system: str | None = None,
                 floor: NoiseFloor | None = None) -> NoiseVerdict:
    """Whether ``candidate`` differs from the repeats by more than their noise (see the module docstring).

    Parameters
    ----------
    repeats : sequence of (str, RunResult)
    candidate : (str, RunResult)
    metric : str
    alpha : float
        Level of the paired randomization test.
    n_resamples, seed
        Of that test.
    system : str, optional
    floor : NoiseFloor, optional
        :func:`noise_floor` of ``repeats`` when already computed.

    Returns
    -------
    NoiseVerdict

    Raises
    ------
    ValueError
        As :func:`noise_floor`, or no item common to the candidate and the repeats.
    """
    floor = floor or noise_floor(repeats, metric, system=system)
    ids, values = _matrix([*repeats, candidate], metric, system)
    if not ids:
        raise ValueError(f"{candidate[0]} shares no scored item with the repeats")
    base = [sum(vs[:-1]) / (len(vs) - 1) for vs in values]
    cand = [vs[-1] for vs in values]
    test = approximate_randomization(base, cand, n_resamples=n_resamples, seed=seed)
    flaky = set(floor.flaky)
    changed = tuple(i for i, vs in zip(ids, values) if i in flaky and vs[-1] != vs[0])
    flagged = abs(test.delta) > floor.band and test.p_value is not None and test.p_value <= alpha
    return NoiseVerdict(candidate[0], len(ids), test.delta, floor.band, test.p_value, flagged, changed)


def flaky_changes(floor: NoiseFloor, a: RunResult, b: RunResult, *, system_a: str | None = None,
                  system_b: str | None = None) -> tuple[str, ...]:
    """The flaky items of ``floor`` whose ``floor.metric`` value differs between runs ``a`` and ``b`` (a change
    there is within the item's own noise), in the floor's order."""
    rows_a, rows_b = rows_of(a, system_a), rows_of(b, system_b)
    col_a, col_b = a.items.values.get(floor.metric), b.items.values.get(floor.metric)
    if col_a is None or col_b is None:
        return ()
    return tuple(i for i in floor.flaky if i in rows_a and i in rows_b and col_a[rows_a[i]] != col_b[rows_b[i]])


def repeat_groups(records: Iterable) -> list[tuple]:
    """Runs that repeat one another: the same task, system(s), dataset version and config, in time order.

    Parameters
    ----------
    records : iterable of RunRecord

    Returns
    -------
    list of tuple of RunRecord
        Groups of 2 or more, in order of their first run.
    """
    groups: dict[tuple, list] = {}
    for r in records:
        key = (r.task, r.systems, r.dataset_digest, r.patch_digests, json.dumps(r.config, sort_keys=True))
        groups.setdefault(key, []).append(r)
    return [tuple(g) for g in groups.values() if len(g) >= 2]


__all__ = ["NoiseFloor", "NoiseVerdict", "beyond_noise", "flaky_changes", "noise_floor", "repeat_groups"]
