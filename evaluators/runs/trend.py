"""A metric over runs in time order: each point with its bootstrap interval, each step tested and flagged
only when it survives a multiple-comparison correction.

Points: for every run, metric and slice (``""``/``all`` for every item, then each value of each slice
column asked for), the mean over the items with a value and its percentile bootstrap interval
(:func:`evaluators.metrics.statistics.bootstrap_ci`, the interval of ``compare``'s per-system scores).

Steps: between consecutive runs, on the items both scored (joined only when they share at least
``min_overlap`` of the larger run's items: :func:`evaluators.runs.compare.overlap_error`), each metric x slice
is tested with ``compare``'s paired tests (:func:`~evaluators.metrics.statistics.approximate_randomization`,
default, or :func:`~evaluators.metrics.statistics.paired_bootstrap`; the difference's interval is the paired
bootstrap's either way); the p-values of the step's family
(its metrics x slices) are adjusted together (:func:`~evaluators.metrics.statistics.adjust_p_values`: Holm
controls the family-wise error rate, Benjamini-Hochberg the false discovery rate) and the step is flagged
when at least one adjusted p-value is at most ``alpha``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluators.metrics.statistics import adjust_p_values, approximate_randomization, bootstrap_ci, paired_bootstrap
from evaluators.results import DictMixin
from evaluators.run_result import ALL, RunResult
from evaluators.runs.compare import MIN_OVERLAP, overlap_error, rows_of

#: Paired tests a step can use.
TESTS = ("bootstrap", "randomization")


@dataclass(frozen=True)
class TrendPoint(DictMixin):
    """One run's mean of one metric over one slice value.

    Attributes
    ----------
    run : str
    index : int
        The run's position in time order (0 first).
    metric, slice, slice_value : str
        ``slice`` is ``""`` with ``slice_value`` ``"all"`` for every item.
    n : int
        Items with a value.
    mean, ci_low, ci_high : float or None
        ``None`` without items (interval: also with fewer than 2, or ``n_resamples=0``).
    """

    run: str
    index: int
    metric: str
    slice: str
    slice_value: str
    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class StepTest(DictMixin):
    """One metric x slice of one step, tested.

    Attributes
    ----------
    metric, slice, slice_value : str
    n : int
        Common items with a value in both runs.
    mean_a, mean_b, delta : float or None
        ``delta = mean_b - mean_a`` on those items.
    ci_low, ci_high : float or None
        Paired bootstrap interval of ``delta`` (``None`` with ``intervals=False`` and the randomization test).
    p_value, p_adjusted : float or None
        Raw and adjusted (over the step's family) p-values; ``None`` for fewer than 2 items.
    flagged : bool
        ``p_adjusted <= alpha`` (and ``|delta|`` over the metric's noise band, when one is given).
    """

    metric: str
    slice: str
    slice_value: str
    n: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    flagged: bool


@dataclass(frozen=True)
class TrendStep(DictMixin):
    """From run ``run_a`` to the next, ``run_b``.

    Attributes
    ----------
    run_a, run_b : str
    n_a, n_b, n_common : int
    joined : bool
        Enough common items to test (``reason`` says why not).
    reason : str
    tests : tuple of StepTest
        Metrics x slices (empty when not joined).
    flagged : bool
        A test survived the correction.
    """

    run_a: str
    run_b: str
    n_a: int
    n_b: int
    n_common: int
    joined: bool
    reason: str
    tests: tuple[StepTest, ...]
    flagged: bool


@dataclass(frozen=True)
class Trend(DictMixin):
    """Metrics over runs in time order.

    Attributes
    ----------
    runs : tuple of str
    metrics, slices : tuple of str
    test, correction : str
    alpha : float
    n_resamples, seed : int
    points : tuple of TrendPoint
        By run, then metric, then slice (``all`` first, then each slice's values sorted).
    steps : tuple of TrendStep
        ``len(runs) - 1`` of them.
    """

    runs: tuple[str, ...]
    metrics: tuple[str, ...]
    slices: tuple[str, ...]
    test: str
    correction: str
    alpha: float
    n_resamples: int
    seed: int
    points: tuple[TrendPoint, ...]
    steps: tuple[TrendStep, ...]


def _groups(result: RunResult, rows: dict[str, int], slices: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """``(slice, value, item ids)``: every item, then each value of each slice (sorted)."""
    out = [("", ALL, list(rows))]
    for name in slices:
        column = result.items.slices.get(name)
        if column is None:
            continue
        by_value: dict[str, list[str]] = {}
        for i, r in rows.items():
            if column[r] is not None:
                by_value.setdefault(column[r], []).append(i)
        out += [(name, v, by_value[v]) for v in sorted(by_value)]
    return out


def trend(runs: Sequence[tuple[str, RunResult]], metrics: Sequence[str], *, slices: Sequence[str] = (),
          correction: str = "holm", alpha: float = 0.05, test: str = "randomization", n_resamples: int = 10_000,
          point_resamples: int | None = None, seed: int = 0, min_overlap: float = MIN_OVERLAP,
          system: str | None = None, intervals: bool = True, noise_bands: Mapping[str, float] | None = None) -> Trend:
    """Metrics over runs, each step tested with the corrected paired tests.

    Parameters
    ----------
    runs : sequence of (str, RunResult)
        Run name and result, in time order (:meth:`evaluators.runs.store.RunStore.runs` order).
    metrics : sequence of str
        Metric columns (a run without one has no point for it and no test of it).
    slices : sequence of str
        Slice columns to break each metric down by (beside every item).
    correction : {"holm", "bh"}
        Across the metrics x slices of a step.
    alpha : float
        In (0, 1): the level an adjusted p-value must reach.
    test : {"randomization", "bootstrap"}
        The paired test whose p-values are corrected: ``compare``'s approximate randomization (default: a
        permutation test, exact in level under the null of exchangeable runs; in the seeded simulation of
        ``tests/unit/test_runs_trend.py`` it keeps Holm's family-wise rate under 5% where the percentile
        bootstrap p-value, liberal on few discordant items, did not) or its paired bootstrap.
    n_resamples : int
        Of the step tests (and of the points' intervals unless ``point_resamples`` is given).
    point_resamples : int, optional
        Bootstrap resamples of the points' intervals (0: none).
    seed : int
    min_overlap : float
        Share of the larger run's items two consecutive runs must share to be tested.
    system : str, optional
        The system of multi-system runs (each run's only system by default).
    intervals : bool
        Give each step test the paired bootstrap interval of its difference (``compare``'s), also when the
        p-value comes from the randomization test.
    noise_bands : mapping of str to float, optional
        Metric -> the band of :func:`evaluators.runs.noise.noise_floor`: a test is flagged only when its
        difference also exceeds the band.

    Returns
    -------
    Trend

    Raises
    ------
    ValueError
        An unknown test or correction, ``alpha`` outside (0, 1), no run or no metric.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if correction not in ("holm", "bh"):
        raise ValueError(f"correction must be holm or bh, not {correction!r}")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if not runs or not metrics:
        raise ValueError("a trend needs at least one run and one metric")
    point_resamples = n_resamples if point_resamples is None else point_resamples
    rows = [rows_of(result, system) for _, result in runs]
    points = []
    for index, ((name, result), rws) in enumerate(zip(runs, rows)):
        for metric in metrics:
            column = result.items.values.get(metric)
            if column is None:
                continue
            for sl, value, ids in _groups(result, rws, slices):
                xs = [column[rws[i]] for i in ids if column[rws[i]] is not None]
                low = high = None
                if len(xs) >= 2 and point_resamples > 0:
                    ci = bootstrap_ci(xs, n_resamples=point_resamples, seed=seed, unit=result.unit)
                    low, high = ci.ci_low, ci.ci_high
                points.append(TrendPoint(name, index, metric, sl, value, len(xs), sum(xs) / len(xs) if xs else None,
                                         low, high))
    steps = [_step(runs[k - 1], runs[k], rows[k - 1], rows[k], metrics, slices, correction, alpha, test,
                   n_resamples, seed, min_overlap, intervals, dict(noise_bands or {})) for k in range(1, len(runs))]
    return Trend(tuple(n for n, _ in runs), tuple(metrics), tuple(slices), test, correction, alpha, n_resamples,
                 seed, tuple(points), tuple(steps))


def _step(first, second, rows_a, rows_b, metrics, slices, correction, alpha, test, n_resamples, seed,
          min_overlap, intervals, bands) -> TrendStep:
    (name_a, a), (name_b, b) = first, second
    common = {i: None for i in rows_a if i in rows_b}
    error = overlap_error(name_a, name_b, len(rows_a), len(rows_b), len(common), min_overlap)
    if error:
        return TrendStep(name_a, name_b, len(rows_a), len(rows_b), len(common), False, error, (), False)
    raw = []
    for metric in metrics:
        col_a, col_b = a.items.values.get(metric), b.items.values.get(metric)
        if col_a is None or col_b is None:
            continue
        for sl, value, ids in _groups(a, {i: rows_a[i] for i in common}, slices):
            pairs = [(col_a[rows_a[i]], col_b[rows_b[i]]) for i in ids]
            xa = [x for x, y in pairs if x is not None and y is not None]
            xb = [y for x, y in pairs if x is not None and y is not None]
            boot = tested = None
            if len(xa) >= 2:
                if test == "bootstrap" or intervals:
                    boot = paired_bootstrap(xa, xb, n_resamples=n_resamples, seed=seed)
                tested = (boot if test == "bootstrap"
                          else approximate_randomization(xa, xb, n_resamples=n_resamples, seed=seed))
            raw.append((metric, sl, value, len(xa), tested, boot))
    ps = [r.p_value for *_, r, _ in raw if r is not None and r.p_value is not None]
    adjusted = iter(adjust_p_values(ps, correction))
    tests = []
    for metric, sl, value, n, r, boot in raw:
        if r is None:
            tests.append(StepTest(metric, sl, value, n, None, None, None, None, None, None, None, False))
            continue
        p_adj = next(adjusted) if r.p_value is not None else None
        low, high = (boot.ci_low, boot.ci_high) if boot is not None else (None, None)
        beyond = metric not in bands or abs(r.delta) > bands[metric]
        tests.append(StepTest(metric, sl, value, n, r.mean_a, r.mean_b, r.delta, low, high, r.p_value,
                              p_adj, p_adj is not None and p_adj <= alpha and beyond))
    return TrendStep(name_a, name_b, len(rows_a), len(rows_b), len(common), True, "", tuple(tests),
                     any(t.flagged for t in tests))


__all__ = ["TESTS", "StepTest", "Trend", "TrendPoint", "TrendStep", "trend"]
