"""Uncertainty of a mean score and paired comparison of two runs on the same items.

All functions take per-item scores (documents for narrative, records elsewhere) as numbers in
[0, 1] (any finite floats work) and are seeded, so a figure can be reproduced from its
signature.

- :func:`bootstrap_ci`: percentile bootstrap confidence interval of the mean (Efron &
  Tibshirani 1993, ch. 13), the same definition as ``scipy.stats.bootstrap(...,
  method="percentile")``.  Resampling n items with replacement and averaging equals drawing
  the counts of each distinct value from a multinomial, so the mean of every resample is
  computed from ``k`` counts instead of ``n`` indices (``k`` distinct values: 2 for exact
  match, a few hundred for token F1).  With more than ``n / COUNTS_RATIO`` distinct values
  the items are resampled by index, in chunks (same distribution, cost ``n`` per resample);
  from :data:`SEGMENTED_MIN_ITEMS` items segment by segment (:func:`resample_means`), which
  draws the same distribution from cheaper random bits, on several threads.
- :func:`paired_bootstrap`: the interval and a two-sided p-value of the mean difference of
  paired scores (Koehn 2004, "Statistical significance tests for machine translation
  evaluation"; p-value as Efron & Tibshirani 1993, sec. 16.4: the share of resampled
  differences on the other side of 0, doubled).
- :func:`approximate_randomization`: paired permutation test by sign flips of the differences
  (Fisher-Pitman; Noreen 1989; Riezler & Maxwell 2005): exact (all ``2**m`` sign flips of the
  ``m`` non-zero differences, :func:`exact_sign_flip_p`) when ``m <=`` :data:`EXACT_SIGN_FLIP_MAX`,
  else Monte Carlo, p = (hits + 1) / (R + 1).
- :func:`small_sample_reason`: why a bootstrap p-value (or interval) of paired scores is not to be
  trusted: fewer than :data:`SMALL_SAMPLE_ITEMS` items, or fewer than
  :data:`SMALL_SAMPLE_DISCORDANT` items whose scores differ.  The percentile bootstrap treats the
  few observed differences as the population and ignores that they could have had the other
  sign, so on a handful of items its p-value is far too small (Efron & Tibshirani 1993, sec. 13.7
  and ch. 16: the percentile interval and bootstrap tests are first-order accurate, unreliable for
  small n; Dror, Baumer, Shlomov & Reichart 2018, "The Hitchhiker's Guide to Testing Statistical
  Significance in Natural Language Processing", ACL: prefer permutation / exact tests on small
  test sets).  Every :class:`PairedComparison` carries the reason (``small_sample``), and reports
  print it beside the p-value.
- :func:`bootstrap_statistic_ci`: the percentile interval of any statistic of items (an
  agreement coefficient, a kappa), items resampled with replacement (:func:`resample_weights`);
  for a statistic of the counts of a few distinct item patterns, the resampled counts are drawn
  from their multinomial (:func:`pattern_resample_weights`, the same distribution).
- :func:`wilson_interval`: the Wilson score interval of a proportion (Wilson 1927; ``scipy.stats.
  binomtest(k, n).proportion_ci(method="wilson")``, equal to ``statsmodels.stats.proportion.
  proportion_confint(k, n, method="wilson")``).
- :func:`mcnemar`: McNemar's exact test for paired binary outcomes (accuracy, exact match):
  a two-sided binomial test on the discordant pairs (McNemar 1947; equal to
  ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from evaluators.results import DictMixin

#: Resample means come from multinomial counts when the items have at most ``n / COUNTS_RATIO``
#: distinct values (a multinomial category costs about as much as this many drawn indices).
COUNTS_RATIO = 8
_CHUNK_CELLS = 1 << 24  # indices drawn at once by the index resampler (128 MiB of int64)
#: From this many items (with many distinct values) resamples are drawn segment by segment.
SEGMENTED_MIN_ITEMS = 1 << 14
_MIN_SEGMENT_BITS = 10
#: Resamples per block (one seed each) of the segmented sampler.
SEGMENTED_BLOCK = 64
#: Threads of the segmented sampler (the result does not depend on it).
BOOTSTRAP_THREADS = min(4, os.cpu_count() or 1)
#: The paired randomization test enumerates every sign flip when at most this many differences are
#: non-zero (``2**20`` = 1,048,576 flips, counted in two halves of ``2**10``: milliseconds).
EXACT_SIGN_FLIP_MAX = 20
#: Fewer paired items than this: a bootstrap p-value is flagged (the Agreement view's 30 items).
SMALL_SAMPLE_ITEMS = 30
#: Fewer items whose paired scores differ (discordant pairs) than this: a bootstrap p-value is
#: flagged (the usual limit below which McNemar's test is computed exactly, b + c < 25).
SMALL_SAMPLE_DISCORDANT = 25


@dataclass(frozen=True)
class BootstrapCI(DictMixin):
    """A percentile bootstrap interval of a mean.

    Attributes
    ----------
    estimate : float
        The mean of the data.
    ci_low, ci_high : float
        The interval's ends (``confidence_level`` of the resampled means between them).
    n : int
        Items averaged.
    n_resamples : int
    confidence_level : float
        In (0, 1), e.g. 0.95.
    seed : int
    signature : str
        How the interval was made, for reports.
    """

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    n_resamples: int
    confidence_level: float
    seed: int
    signature: str


def _values(values) -> np.ndarray:
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("at least one value is needed")
    if not np.all(np.isfinite(x)):
        raise ValueError("values must be finite (leave undefined scores out before resampling)")
    return x


def resample_means(values, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement, same size) of ``values``.

    Parameters
    ----------
    values : array-like of float, shape (n,)
    n_resamples : int
        >= 1.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (n_resamples,)

    Raises
    ------
    ValueError
        For no values, non-finite values or ``n_resamples < 1``.

    Notes
    -----
    Three samplers of the same distribution (n independent uniform draws of an item):

    - at most ``n / COUNTS_RATIO`` distinct values: the counts of each distinct value,
      ``Multinomial(n, counts / n)``, and the mean as ``counts @ values / n``;
    - fewer than :data:`SEGMENTED_MIN_ITEMS` items: ``n`` indices from ``rng.integers``;
    - otherwise the items are split into segments of ``2**b`` items (the binary digits of
      ``n`` from ``2**10`` up) and a rest of fewer than 1,024 items.  How many of the ``n``
      draws fall in each segment is ``Multinomial(n, sizes / n)``; a draw inside a segment of
      ``2**b`` items is the top ``b`` bits of a uniform 16- or 32-bit word (the rest: by
      ``rng.integers``).  Each draw is then uniform over the ``n`` items, as before, but costs
      a quarter of a 64-bit random word and no rejection step.  Blocks of
      :data:`SEGMENTED_BLOCK` resamples have seeds spawned from ``seed`` and run on
      :data:`BOOTSTRAP_THREADS` threads; the result depends on the seed only.
    """
    x = _values(values)
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    rng = np.random.default_rng(seed)
    n = x.size
    distinct, counts = np.unique(x, return_counts=True)
    if distinct.size * COUNTS_RATIO <= n:
        # counts of each distinct value in a resample ~ Multinomial(n, counts / n)
        drawn = rng.multinomial(n, counts / n, size=n_resamples)
        return drawn @ distinct / n
    if SEGMENTED_MIN_ITEMS <= n < 1 << 32:
        return _segmented_resample_means(x, n_resamples, seed)
    out = np.empty(n_resamples)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int32 if n < 2**31 else np.int64)
        out[start:stop] = x[idx].mean(axis=1)
    return out


def _segments(n: int) -> tuple[list[tuple[int, int]], int]:
    """``n`` split into power-of-two segments ``(start, bits)`` of at least ``2**_MIN_SEGMENT_BITS`` items,
    largest first, and where the rest (fewer than that many items) starts."""
    segments, start = [], 0
    for bits in range(n.bit_length() - 1, _MIN_SEGMENT_BITS - 1, -1):
        if n >> bits & 1:
            segments.append((start, bits))
            start += 1 << bits
    return segments, start


def _segmented_block(x: np.ndarray, n_resamples: int, seed_seq: np.random.SeedSequence) -> np.ndarray:
    """Sums of ``n_resamples`` resamples of ``x`` drawn segment by segment (see :func:`resample_means`)."""
    n = x.size
    segments, rest = _segments(n)
    sizes = [1 << bits for _, bits in segments] + ([n - rest] if rest < n else [])
    rng = np.random.default_rng(seed_seq)
    bits_source = rng.bit_generator
    draws = rng.multinomial(n, np.asarray(sizes, dtype=float) / n, size=n_resamples)  # draws per segment
    tables = [x[start:start + (1 << bits)] for start, bits in segments]
    gathered = np.empty(n)
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        total = 0.0
        for j, (_, bits) in enumerate(segments):
            k = int(draws[r, j])
            if not k:
                continue
            if bits <= 16:  # the top `bits` bits of uniform 16-bit words: uniform over the segment
                local = bits_source.random_raw(-(-k // 4)).view(np.uint16)[:k] >> (16 - bits)
            else:
                local = bits_source.random_raw(-(-k // 2)).view(np.uint32)[:k] >> (32 - bits)
            # every index is in range; mode="wrap" with an output buffer is numpy's fast gather for them
            total += float(np.take(tables[j], local, mode="wrap", out=gathered[:k]).sum())
        if rest < n and draws[r, -1]:
            total += float(np.take(x, rng.integers(rest, n, int(draws[r, -1]))).sum())
        out[r] = total
    return out


def _segmented_resample_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Resample means for many distinct values, in blocks of :data:`SEGMENTED_BLOCK` resamples on threads.

    Block ``b`` draws from ``SeedSequence(seed).spawn(...)[b]``, so the result depends on the
    seed only, not on the number of threads.
    """
    starts = range(0, n_resamples, SEGMENTED_BLOCK)
    seeds = np.random.SeedSequence(seed).spawn(len(starts))
    sizes = [min(SEGMENTED_BLOCK, n_resamples - s) for s in starts]
    workers = min(BOOTSTRAP_THREADS, len(sizes))
    if workers <= 1:
        sums = [_segmented_block(x, k, q) for k, q in zip(sizes, seeds)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:  # numpy drops the GIL while drawing, gathering and summing
            sums = list(pool.map(lambda job: _segmented_block(x, *job), zip(sizes, seeds)))
    return np.concatenate(sums) / x.size


def resample_weights(n_items: int, n_resamples: int, seed: int = 0, *, block_cells: int = 1 << 22):
    """Blocks of bootstrap resamples of ``n_items`` items, as draw counts per item.

    Resample ``r`` holds the indices that the ``r``-th call of ``rng.integers(0, n_items, n_items)``
    gives (``rng = numpy.random.default_rng(seed)``; drawn a block at a time, the same numbers),
    so a plain loop that draws indices that way sees the same resamples; row ``r`` of a block
    counts how often each item was drawn.  A
    statistic that is a function of per-item sums (counts of a confusion matrix, coincidences)
    is then evaluated for a whole block with one matrix product.

    Parameters
    ----------
    n_items : int
        >= 1.
    n_resamples : int
        >= 1.
    seed : int
    block_cells : int
        At most this many cells per block (rows x items).

    Yields
    ------
    numpy.ndarray, shape (block, n_items), float
        Draw counts; every row sums to ``n_items``.
    """
    if n_items < 1 or n_resamples < 1:
        raise ValueError("n_items and n_resamples must be >= 1")
    rng = np.random.default_rng(seed)
    step = max(1, block_cells // n_items)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        # one call draws the same numbers as `rows` calls of n_items (the generator buffers its 32-bit halves)
        idx = rng.integers(0, n_items, size=(rows, n_items))
        idx += np.arange(rows)[:, None] * n_items
        yield np.bincount(idx.ravel(), minlength=rows * n_items).reshape(rows, n_items).astype(float)


def pattern_resample_weights(patterns, n_resamples: int, seed: int = 0, *, block_cells: int = 1 << 22):
    """Blocks of bootstrap resamples of items that fall into a few distinct patterns, as draw counts per pattern.

    A statistic that depends on the items only through how many of them show each distinct
    pattern (the cell of a confusion matrix, an item's multiset of ratings) is the same function
    of the pattern counts of a resample.  Resampling ``n`` items with replacement (Efron &
    Tibshirani 1993, ch. 6) makes those counts ``Multinomial(n, c / n)``, ``c`` the observed
    pattern counts: the counts of ``n`` independent draws of one item, each pattern taken with
    probability ``c_p / n``.  So, with ``P`` patterns:

    - ``P * COUNTS_RATIO <= n``: each resample is one ``rng.multinomial(n, c / n)`` draw
      (``rng = numpy.random.default_rng(seed)``; row ``r`` is what the ``r``-th such call gives),
      cost ``P`` per resample instead of ``n``;
    - otherwise: the items themselves are drawn as :func:`resample_weights` draws them (the same
      resamples as without patterns) and their draw counts summed per pattern.

    Both are the one bootstrap distribution; they differ only in the random numbers used.

    Parameters
    ----------
    patterns : array-like of int, shape (n_items,)
        The pattern of each item, ``0 .. P - 1`` (each value present at least once: ``numpy.unique``'s
        ``return_inverse``).
    n_resamples : int
        >= 1.
    seed : int
    block_cells : int
        At most this many cells per block (rows x items, or rows x patterns).

    Yields
    ------
    numpy.ndarray, shape (block, P), float
        Draw counts per pattern; every row sums to ``n_items``.

    Raises
    ------
    ValueError
        For no item or ``n_resamples < 1``.

    References
    ----------
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (the bootstrap
    distribution) and ch. 13 (percentile interval); the multinomial form of the resample counts
    is the same one :func:`resample_means` uses for few distinct values.
    """
    inverse = np.asarray(patterns, dtype=np.int64).ravel()
    n = inverse.size
    if n < 1 or n_resamples < 1:
        raise ValueError("n_items and n_resamples must be >= 1")
    counts = np.bincount(inverse)
    n_patterns = counts.size
    if n_patterns * COUNTS_RATIO <= n:
        rng = np.random.default_rng(seed)
        p = counts / n
        step = max(1, block_cells // n_patterns)
        for start in range(0, n_resamples, step):
            yield rng.multinomial(n, p, size=min(step, n_resamples - start)).astype(float)
        return
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for w in resample_weights(n, n_resamples, seed, block_cells=block_cells):
        yield np.add.reduceat(w[:, order], starts, axis=1)


def bootstrap_statistic_ci(n_items: int, statistic, *, n_resamples: int = 2000, confidence_level: float = 0.95,
                           seed: int = 0, patterns=None) -> tuple[float | None, float | None, int]:
    """Percentile bootstrap interval of a statistic of items, the items resampled with replacement.

    Parameters
    ----------
    n_items : int
        Items behind the statistic (>= 1).
    statistic : callable
        ``statistic(weights) -> values``: ``weights`` of shape (block, n_items) from
        :func:`resample_weights` (how often each item is in a resample), or with ``patterns`` of
        shape (block, P) from :func:`pattern_resample_weights` (how many drawn items show each
        pattern); ``values`` of shape (block,) with NaN where the statistic is undefined on that
        resample.
    n_resamples, confidence_level, seed
        As :func:`bootstrap_ci`.
    patterns : array-like of int, shape (n_items,), optional
        Each item's pattern ``0 .. P - 1``, for a statistic that depends on the items only
        through the pattern counts: resamples are then drawn as multinomial pattern counts
        (:func:`pattern_resample_weights`: the same bootstrap distribution, cost ``P`` instead of
        ``n_items`` per resample when ``P`` is small).

    Returns
    -------
    (ci_low, ci_high, n_defined)
        The ``(1 -/+ level) / 2`` percentiles (linear interpolation) of the defined values;
        both ``None`` when fewer than half of the resamples give a defined value.
        ``n_defined``: resamples with a defined value.

    Raises
    ------
    ValueError
        For ``n_items`` or ``n_resamples`` < 1, a level outside (0, 1), or ``patterns`` not of
        ``n_items`` items.

    References
    ----------
    Efron & Tibshirani (1993), ch. 13 (percentile interval).
    """
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    if patterns is None:
        blocks = resample_weights(n_items, n_resamples, seed)
    else:
        patterns = np.asarray(patterns, dtype=np.int64).ravel()
        if patterns.size != n_items:
            raise ValueError(f"patterns gives {patterns.size} items, not {n_items}")
        blocks = pattern_resample_weights(patterns, n_resamples, seed)
    values = np.concatenate([np.asarray(statistic(w), dtype=float) for w in blocks])
    ok = values[~np.isnan(values)]
    if ok.size * 2 < n_resamples:
        return None, None, int(ok.size)
    alpha = (1 - confidence_level) / 2
    low, high = np.percentile(ok, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high), int(ok.size)


def bootstrap_ci(values, *, n_resamples: int = 10_000, confidence_level: float = 0.95,
                 seed: int = 0, unit: str = "item") -> BootstrapCI:
    """Percentile bootstrap confidence interval of the mean of ``values``.

    Parameters
    ----------
    values : array-like of float, shape (n,)
        One score per resampling unit (document or record); undefined scores left out.
    n_resamples : int
    confidence_level : float
        In (0, 1).
    seed : int
    unit : str
        What one value is (``record``, ``document`` ...), named in the signature.

    Returns
    -------
    BootstrapCI
        ``ci_low``/``ci_high`` are the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles
        (linear interpolation, as numpy and scipy) of the resampled means.

    Raises
    ------
    ValueError
        See :func:`resample_means`; also for a level outside (0, 1).

    References
    ----------
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13;
    ``scipy.stats.bootstrap(method="percentile")``.
    """
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    x = _values(values)
    means = resample_means(x, n_resamples, seed)
    alpha = (1 - confidence_level) / 2
    low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    return BootstrapCI(float(x.mean()), float(low), float(high), int(x.size), n_resamples, confidence_level, seed,
                       f"bootstrap(percentile, mean, n_resamples={n_resamples}, level={confidence_level:g}, "
                       f"seed={seed}, unit={unit})")


def bootstrap_cis(columns, *, n_resamples: int = 10_000, confidence_level: float = 0.95, seed: int = 0,
                  unit: str = "item", threads: int = BOOTSTRAP_THREADS) -> list[BootstrapCI]:
    """:func:`bootstrap_ci` of each of several columns, on up to ``threads`` threads.

    Each result is exactly ``bootstrap_ci(column, ...)``: every column has its own generator
    seeded with ``seed``, so the threads change no number; numpy draws without holding the GIL.

    Parameters
    ----------
    columns : sequence of array-like of float, each shape (n_i,)
    n_resamples, confidence_level, seed, unit
        As :func:`bootstrap_ci`.
    threads : int
        Threads drawing at once (1: one after the other).

    Returns
    -------
    list of BootstrapCI
        In the order of ``columns``.

    Raises
    ------
    ValueError
        As :func:`bootstrap_ci`.

    References
    ----------
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval).
    """
    def one(values) -> BootstrapCI:
        return bootstrap_ci(values, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed, unit=unit)

    # Only columns with a small draw go to the threads: a multinomial draw holds n_resamples x distinct values
    # counts at once, and the other samplers use threads of their own.
    small = [i for i, c in enumerate(columns) if _small_draw(c, n_resamples)]
    out: list[BootstrapCI | None] = [None] * len(columns)
    if threads > 1 and len(small) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(threads, len(small))) as pool:
            for i, ci in zip(small, pool.map(one, [columns[i] for i in small])):
                out[i] = ci
    return [ci if ci is not None else one(c) for ci, c in zip(out, columns)]


#: Largest multinomial draw (bytes of counts) of a column that :func:`bootstrap_cis` runs beside others.
THREADED_DRAW_BYTES = 32 << 20


def _small_draw(values, n_resamples: int) -> bool:
    """True when :func:`resample_means` draws the column as multinomial counts of at most
    :data:`THREADED_DRAW_BYTES`."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0 or not np.all(np.isfinite(x)):
        return False  # bootstrap_ci raises its error
    k = np.unique(x).size
    return k * COUNTS_RATIO <= x.size and n_resamples * k * 8 <= THREADED_DRAW_BYTES


@dataclass(frozen=True)
class PairedComparison(DictMixin):
    """Run B minus run A on the same items.

    Attributes
    ----------
    mean_a, mean_b : float
        Mean scores.
    delta : float
        ``mean_b - mean_a``.
    ci_low, ci_high : float or None
        Percentile bootstrap interval of ``delta``; ``None`` for a permutation test and when
        no resample was drawn (``n_resamples=0``).
    p_value : float or None
        Two-sided, in (0, 1]; ``None`` when no resample was drawn (``n_resamples=0``: no test
        was run).  When no resample of ``R`` lands on the other side (a Monte Carlo p-value
        below its resolution), ``p_value`` is ``1 / (R + 1)`` and ``p_value_is_bound`` is true:
        read it as ``p < 1 / (R + 1)``.
    won, lost, tied : int
        Items where B scores higher, lower, the same.
    n : int
    method : str
    p_value_is_bound : bool
        ``p_value`` is an upper bound (``p < p_value``), not an estimate.
    n_resamples : int
        Resamples behind ``ci_low`` / ``ci_high`` / ``p_value`` (0: none computed).
    exact : bool
        ``p_value`` comes from the complete enumeration of sign flips (:func:`exact_sign_flip_p`),
        not from random resamples.
    small_sample : str
        Why this bootstrap p-value and interval are not trustworthy (:func:`small_sample_reason`);
        empty when they are, and for an exact test.
    """

    mean_a: float
    mean_b: float
    delta: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    won: int
    lost: int
    tied: int
    n: int
    method: str
    p_value_is_bound: bool = False
    n_resamples: int = 0
    exact: bool = False
    small_sample: str = ""

    @property
    def computed(self) -> bool:
        """Whether a test was run (``n_resamples > 0``): otherwise no interval and no p-value."""
        return self.p_value is not None


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = _values(a), _values(b)
    if a.size != b.size:
        raise ValueError(f"paired scores need the same items: {a.size} vs {b.size}")
    return a, b


def _check_resamples(n_resamples: int) -> None:
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0 (0: no interval and no p-value)")


def _not_run(d: np.ndarray, a: np.ndarray, b: np.ndarray, test: str) -> PairedComparison:
    return PairedComparison(float(a.mean()), float(b.mean()), float(d.mean()), None, None, None,
                            int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()), int(d.size),
                            f"{test} not run (n_resamples=0): no interval or p-value computed", False, 0)


def small_sample_reason(differences, *, min_items: int = SMALL_SAMPLE_ITEMS,
                        min_discordant: int = SMALL_SAMPLE_DISCORDANT) -> str:
    """Why a bootstrap p-value of these paired differences is not trustworthy, or ``""``.

    Parameters
    ----------
    differences : array-like of float, shape (n,)
        ``b - a`` per item.
    min_items : int
        Fewer items than this: flagged.
    min_discordant : int
        Fewer non-zero differences (discordant pairs: items whose scores differ) than this: flagged.

    Returns
    -------
    str
        E.g. ``"5 items < 30"`` or ``"4 discordant pairs (items whose scores differ) < 25"``; both
        reasons joined by ``"; "`` when both hold.

    References
    ----------
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, sec. 13.7 and ch. 16 (the
    percentile method's small-sample inaccuracy); Dror et al. (2018), "The Hitchhiker's Guide to
    Testing Statistical Significance in NLP", ACL, sec. 3-4 (permutation / exact tests for small
    test sets); McNemar (1947) and its exact binomial form for few discordant pairs.
    """
    d = np.asarray(differences, dtype=float).ravel()
    reasons = []
    if d.size < min_items:
        reasons.append(f"{d.size} item{'s' if d.size != 1 else ''} < {min_items}")
    m = int(np.count_nonzero(d))
    if m < min_discordant:
        reasons.append(f"{m} discordant pair{'s' if m != 1 else ''} (items whose scores differ) < {min_discordant}")
    return "; ".join(reasons)


def exact_sign_flip_p(differences) -> float:
    """Exact two-sided p-value of the paired permutation (sign-flip) test of the mean difference.

    Under the null hypothesis each item's two scores are exchangeable, so each difference is as
    likely with either sign; the p-value is the share of all ``2**m`` sign assignments of the ``m``
    non-zero differences whose absolute sum is at least the observed one (zeros do not change a
    sum).  The flips are counted in two halves: the ``2**k`` sums of the first half against the
    sorted ``2**(m - k)`` sums of the second (binary search), so ``m = 20`` costs about a thousand
    searches of a thousand values.

    Parameters
    ----------
    differences : array-like of float, shape (n,)
        ``b - a`` per item, finite; at most :data:`EXACT_SIGN_FLIP_MAX` of them non-zero.

    Returns
    -------
    float
        In (0, 1]; 1 when every difference is 0.

    Raises
    ------
    ValueError
        For non-finite values or more than :data:`EXACT_SIGN_FLIP_MAX` non-zero differences.

    References
    ----------
    Fisher (1935), *The Design of Experiments*, sec. 21; Pitman (1937), "Significance tests which
    may be applied to samples from any populations", JRSS Suppl. 4; Good (2005), *Permutation,
    Parametric, and Bootstrap Tests of Hypotheses*, ch. 3 (the one-sample / paired permutation
    test); Dror et al. (2018), ACL, sec. 4.
    """
    d = np.asarray(differences, dtype=float).ravel()
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite")
    d = d[d != 0]
    m = d.size
    if m > EXACT_SIGN_FLIP_MAX:
        raise ValueError(f"{m} non-zero differences: more than {EXACT_SIGN_FLIP_MAX} for an exact enumeration")
    if m == 0:
        return 1.0
    observed = abs(d.sum())
    tol = 1e-9 * max(1.0, float(np.abs(d).sum()))

    def sums(x: np.ndarray) -> np.ndarray:
        out = np.zeros(1)
        for v in x:
            out = np.concatenate([out + v, out - v])
        return out

    k = m // 2
    left, right = sums(d[:k]), np.sort(sums(d[k:]))
    # |l + r| >= observed  <=>  r >= observed - l  or  r <= -observed - l
    upper = right.size - np.searchsorted(right, observed - left - tol, side="left")
    lower = np.searchsorted(right, -observed - left + tol, side="right")
    # with observed > 0 no r is on both sides; observed ~ 0: every flip is as extreme
    hits = int((upper + lower).sum()) if observed > tol else 1 << m
    return min(1.0, hits / float(1 << m))


def paired_bootstrap(a, b, *, n_resamples: int = 10_000, confidence_level: float = 0.95,
                     seed: int = 0) -> PairedComparison:
    """Paired bootstrap of the mean difference ``b - a`` over the same items.

    The p-value is ``min(1, 2 * min(P*(delta* <= 0), P*(delta* >= 0)))`` over the resampled
    mean differences (two-sided; Efron & Tibshirani 1993, sec. 16.4; Koehn 2004).  When none
    of the ``R`` resampled differences lies on the other side of 0 that share is 0, which
    says only that p is below the resolution of ``R`` resamples: the result then carries
    ``p_value = 1 / (R + 1)`` with ``p_value_is_bound`` set (``p < 1 / (R + 1)``), the same
    floor as :func:`approximate_randomization`.

    Parameters
    ----------
    a, b : array-like of float, shape (n,)
        Scores of run A and run B on the same n items, in the same order.
    n_resamples : int
        ``R`` >= 0; 0 runs no test (``ci_low``, ``ci_high`` and ``p_value`` are ``None``).
    confidence_level : float
        In (0, 1).
    seed : int

    Returns
    -------
    PairedComparison

    Raises
    ------
    ValueError
        For different lengths, no items, non-finite scores, ``n_resamples < 0`` or a level
        outside (0, 1).
    """
    a, b = _paired(a, b)
    d = b - a
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    _check_resamples(n_resamples)
    if n_resamples == 0:
        return _not_run(d, a, b, "paired bootstrap")
    means = resample_means(d, n_resamples, seed)  # the same resamples give the interval and the p-value
    alpha = (1 - confidence_level) / 2
    low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    p = min(1.0, 2 * min(np.mean(means <= 0), np.mean(means >= 0)))
    bound = p == 0
    if bound:
        p = 1 / (n_resamples + 1)
    return PairedComparison(float(a.mean()), float(b.mean()), float(d.mean()), float(low), float(high), float(p),
                            int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()), int(d.size),
                            f"paired bootstrap(n_resamples={n_resamples}, seed={seed})", bool(bound), n_resamples,
                            False, small_sample_reason(d))


def approximate_randomization(a, b, *, n_resamples: int = 10_000, seed: int = 0) -> PairedComparison:
    """Paired randomization (sign-flip permutation) test of ``mean(b) - mean(a)``: exact when cheap.

    With at most :data:`EXACT_SIGN_FLIP_MAX` non-zero differences every sign flip is enumerated
    (:func:`exact_sign_flip_p`, the Fisher-Pitman permutation test; ``exact`` is set and the
    method says so): on few items or few discordant pairs the p-value is then exact, not a Monte
    Carlo estimate.  Otherwise each of ``R`` resamples swaps the two runs' scores of every item
    with probability 1/2; the p-value is ``(hits + 1) / (n_resamples + 1)`` with ``hits`` the
    resamples whose absolute mean difference is at least the observed one (Noreen 1989; Riezler &
    Maxwell 2005).  With no hit, ``p_value = 1 / (R + 1)`` is flagged as a bound
    (``p_value_is_bound``).

    Parameters
    ----------
    a, b : array-like of float, shape (n,)
    n_resamples : int
        ``R`` >= 0; 0 runs no test (``p_value`` is ``None``).
    seed : int

    Returns
    -------
    PairedComparison
        ``ci_low``/``ci_high`` are ``None`` (a permutation test gives no interval).

    Raises
    ------
    ValueError
        For different lengths, no items, non-finite scores or ``n_resamples < 0``.
    """
    a, b = _paired(a, b)
    d = b - a
    _check_resamples(n_resamples)
    if n_resamples == 0:
        return _not_run(d, a, b, "approximate randomization")
    m = int(np.count_nonzero(d))
    if m <= EXACT_SIGN_FLIP_MAX:
        return PairedComparison(float(a.mean()), float(b.mean()), float(d.mean()), None, None, exact_sign_flip_p(d),
                                int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()), int(d.size),
                                f"exact sign-flip permutation test (Fisher-Pitman; all 2^{m} sign flips of the {m} "
                                "non-zero differences)", False, n_resamples, True, "")
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    nz = d[d != 0]  # a zero difference is the same under either sign: only the m others are flipped
    step = max(1, _CHUNK_CELLS // nz.size)
    for start in range(0, n_resamples, step):
        k = min(step, n_resamples - start)
        signs = rng.integers(0, 2, size=(k, nz.size), dtype=np.int8) * 2 - 1
        hits += int(np.sum(np.abs(signs @ nz) / d.size >= observed - 1e-12))
    return PairedComparison(float(a.mean()), float(b.mean()), float(d.mean()), None, None,
                            (hits + 1) / (n_resamples + 1), int((d > 0).sum()), int((d < 0).sum()),
                            int((d == 0).sum()), int(d.size),
                            f"approximate randomization(n_resamples={n_resamples}, seed={seed})", hits == 0,
                            n_resamples)


@dataclass(frozen=True)
class McNemarResult(DictMixin):
    """McNemar's exact test on paired binary outcomes.

    Attributes
    ----------
    only_a, only_b : int
        Items right in A only, in B only (the discordant pairs).
    both, neither : int
    p_value : float
        Exact two-sided binomial p-value on the discordant pairs.
    odds_ratio : float or None
        ``only_b / only_a`` (``None`` when ``only_a`` is 0): the effect size.
    """

    only_a: int
    only_b: int
    both: int
    neither: int
    p_value: float
    odds_ratio: float | None


def mcnemar(a, b) -> McNemarResult:
    """McNemar's exact test of two runs' binary outcomes (1 right, 0 wrong) on the same items.

    Parameters
    ----------
    a, b : array-like of {0, 1}, shape (n_items,)
        Outcomes of run A and run B, item ``i`` of both the same item.

    Returns
    -------
    McNemarResult
        The four cell counts, the exact two-sided binomial p-value on the discordant pairs (1.0
        when there is none) and the odds ratio ``only_b / only_a``.

    References
    ----------
    McNemar (1947), "Note on the sampling error of the difference between correlated proportions
    or percentages", Psychometrika 12; the exact (binomial) form, ``scipy.stats.binomtest``.

    Examples
    --------
    >>> r = mcnemar([1, 1, 1, 0, 1], [1, 0, 0, 0, 1])
    >>> (r.only_a, r.only_b, r.p_value)  # 2 discordant pairs, both for A: p = 2 * 0.5 ** 2
    (2, 0, 0.5)

    Raises
    ------
    ValueError
        For different lengths or values other than 0 and 1.
    """
    from scipy.stats import binomtest

    a, b = _paired(a, b)
    if not (np.isin(a, (0, 1)).all() and np.isin(b, (0, 1)).all()):
        raise ValueError("McNemar's test needs binary outcomes (0 or 1)")
    only_a = int(((a == 1) & (b == 0)).sum())
    only_b = int(((a == 0) & (b == 1)).sum())
    both = int(((a == 1) & (b == 1)).sum())
    neither = int(((a == 0) & (b == 0)).sum())
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(binomtest(min(only_a, only_b), discordant, 0.5).pvalue)
    return McNemarResult(only_a, only_b, both, neither, min(1.0, p), only_b / only_a if only_a else None)


@dataclass(frozen=True)
class PairedScores(DictMixin):
    """Two systems' scores on the items both scored, compared (B against A).

    Attributes
    ----------
    name_a, name_b : str
    n_paired : int
        Items with a score in both (paired by key).
    only_a, only_b : int
        Items scored by one system only (left out).
    bootstrap : PairedComparison
        Paired bootstrap of the mean difference (interval and p-value).
    randomization : PairedComparison
        Approximate randomization p-value of the same difference.
    outcomes : dict
        Item key (as text) -> ``"won"`` (B higher), ``"lost"`` or ``"tied"`` (within ``tol``).
    """

    name_a: str
    name_b: str
    n_paired: int
    only_a: int
    only_b: int
    bootstrap: PairedComparison
    randomization: PairedComparison
    outcomes: dict[str, str]


def compare_paired_scores(a, b, name_a: str = "A", name_b: str = "B", *, n_resamples: int = 10_000,
                          confidence_level: float = 0.95, seed: int = 0, tol: float = 1e-12) -> PairedScores:
    """Compare two systems' per-item scores, paired by item key.

    Parameters
    ----------
    a, b : mapping of hashable -> float or None
        Scores by item key (a document, a case, a question); ``None`` (not scored) is left out.
    name_a, name_b : str
    n_resamples, confidence_level, seed
        For :func:`paired_bootstrap` and :func:`approximate_randomization`.
    tol : float
        Differences within ``tol`` count as ties.

    Returns
    -------
    PairedScores
        Items paired and left out, each item's outcome for B (won / lost / tied), the paired
        bootstrap of the mean difference of B against A and its approximate randomization test.

    Raises
    ------
    ValueError
        When no item is scored by both.

    References
    ----------
    Koehn (2004), "Statistical significance tests for machine translation evaluation" (paired
    bootstrap); Noreen (1989) and Riezler & Maxwell (2005) (approximate randomization).
    """
    sa = {k: v for k, v in a.items() if v is not None}
    sb = {k: v for k, v in b.items() if v is not None}
    keys = [k for k in sa if k in sb]
    if not keys:
        raise ValueError(f"{name_a} and {name_b} have no scored item in common")
    xa = [sa[k] for k in keys]
    xb = [sb[k] for k in keys]
    outcomes = {str(k): "won" if y > x + tol else "lost" if y < x - tol else "tied" for k, x, y in zip(keys, xa, xb)}
    return PairedScores(name_a, name_b, len(keys), len(sa) - len(keys), len(sb) - len(keys),
                        paired_bootstrap(xa, xb, n_resamples=n_resamples, confidence_level=confidence_level,
                                         seed=seed),
                        approximate_randomization(xa, xb, n_resamples=n_resamples, seed=seed), outcomes)


@dataclass(frozen=True)
class ClassificationIntervals(DictMixin):
    """Percentile bootstrap intervals of per-class F1, macro F1 and accuracy (pairs resampled).

    Attributes
    ----------
    f1_ci_low, f1_ci_high : dict
        Label -> bound, ``None`` where the class's F1 is undefined in more than half of the
        resamples (no true and no predicted pair of it).
    macro_f1_ci_low, macro_f1_ci_high : float or None
        Mean over ``average_labels`` of the defined per-class F1 of each resample (undefined
        classes skipped, as in :func:`evaluators.metrics.classification.classification_report`).
    accuracy_ci_low, accuracy_ci_high : float or None
    signature : str
    """

    f1_ci_low: dict
    f1_ci_high: dict
    macro_f1_ci_low: float | None
    macro_f1_ci_high: float | None
    accuracy_ci_low: float | None
    accuracy_ci_high: float | None
    signature: str


def classification_intervals(counts, labels, average_labels=None, *, n_resamples: int = 10_000,
                             confidence_level: float = 0.95, seed: int = 0) -> ClassificationIntervals:
    """Bootstrap intervals of per-class F1, macro F1 and accuracy from a confusion matrix.

    Resampling the n (true, predicted) pairs with replacement is drawing the cell counts of
    the confusion matrix from a multinomial with the observed cell shares, so each resample
    costs ``k²`` counts, not ``n`` pairs; its per-class tp / fp / fn give F1 = 2 tp / (2 tp +
    fp + fn).  The same distribution as ``scipy.stats.bootstrap(..., paired=True,
    method="percentile")`` on the pairs (checked in the tests).

    Parameters
    ----------
    counts : array-like of int, shape (k, k)
        Rows = true labels, columns = predicted labels; every pair must be in it.
    labels : sequence, length k
    average_labels : sequence, optional
        Classes of the macro mean (default all).
    n_resamples, confidence_level, seed
        As :func:`bootstrap_ci`.

    Raises
    ------
    ValueError
        For a matrix that is not square, negative counts, no pair, or a level outside (0, 1).

    References
    ----------
    Efron & Tibshirani (1993), ch. 13; F1: van Rijsbergen (1979).
    """
    m = np.asarray(counts, dtype=np.int64)
    k = len(labels)
    if m.shape != (k, k) or (m < 0).any():
        raise ValueError("counts must be a square matrix of non-negative counts, one row per label")
    n = int(m.sum())
    if n == 0:
        raise ValueError("no pair to resample")
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, m.ravel() / n, size=n_resamples).reshape(n_resamples, k, k)
    tp = np.einsum("rii->ri", draws).astype(float)
    predicted = draws.sum(axis=1)
    support = draws.sum(axis=2)
    denom = predicted + support  # 2 tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), np.nan)
    alpha = 100 * (1 - confidence_level) / 2
    lows, highs = {}, {}
    for j, label in enumerate(labels):
        col = f1[:, j]
        ok = col[~np.isnan(col)]
        if ok.size * 2 < n_resamples:
            lows[label] = highs[label] = None
            continue
        lo, hi = np.percentile(ok, [alpha, 100 - alpha])
        lows[label], highs[label] = float(lo), float(hi)
    avg = list(labels) if average_labels is None else list(average_labels)
    idx = [list(labels).index(a) for a in avg]
    with np.errstate(invalid="ignore"):
        macro = np.nanmean(f1[:, idx], axis=1) if idx else np.full(n_resamples, np.nan)
    macro = macro[~np.isnan(macro)]
    mlo, mhi = (np.percentile(macro, [alpha, 100 - alpha]) if macro.size else (None, None))
    acc = tp.sum(axis=1) / n
    alo, ahi = np.percentile(acc, [alpha, 100 - alpha])
    return ClassificationIntervals(
        lows, highs, None if mlo is None else float(mlo), None if mhi is None else float(mhi), float(alo), float(ahi),
        f"bootstrap(percentile, confusion-matrix multinomial, n_resamples={n_resamples}, level={confidence_level:g}, "
        f"seed={seed}, unit=pair)")


def wilson_interval(successes: int, n: int, *, confidence_level: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval of a proportion ``successes / n`` (no continuity correction).

    Parameters
    ----------
    successes : int
        0 <= successes <= n.
    n : int
        Trials (>= 0); with 0 the interval is ``(None, None)``.
    confidence_level : float
        In (0, 1).

    Returns
    -------
    (low, high) : tuple of float in [0, 1], or (None, None) for n = 0

    Raises
    ------
    ValueError
        Counts that are not integers with 0 <= successes <= n, or a level outside (0, 1).

    References
    ----------
    Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22(158); computed by ``scipy.stats.binomtest(successes, n).proportion_ci(method="wilson")``.
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
    if successes > n:
        raise ValueError(f"successes ({successes}) cannot exceed n ({n})")
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    if n == 0:
        return None, None
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence_level, method="wilson")
    return float(ci.low), float(ci.high)


#: Multiple-comparison corrections of :func:`adjust_p_values`.
CORRECTIONS = ("holm", "bh")


def adjust_p_values(p_values, method: str = "holm") -> list[float]:
    """P-values of a family of tests adjusted for multiplicity.

    ``holm``: Holm's step-down adjustment, controlling the family-wise error rate under any dependence
    (Holm 1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6: 65-70):
    with the ``m`` p-values sorted, ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))``.  ``bh``:
    Benjamini-Hochberg, controlling the false discovery rate for independent or positively dependent tests
    (Benjamini & Hochberg 1995; :func:`scipy.stats.false_discovery_control` with ``method="bh"``).  A test is
    rejected at level ``alpha`` when its adjusted p-value is at most ``alpha``.

    Parameters
    ----------
    p_values : sequence of float, shape (m,)
        In [0, 1].
    method : {"holm", "bh"}

    Returns
    -------
    list of float, shape (m,)
        In the order given.

    Raises
    ------
    ValueError
        An unknown method, or a p-value outside [0, 1] (NaN included).
    """
    ps = [float(p) for p in p_values]
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {', '.join(CORRECTIONS)}, not {method!r}")
    if any(not 0 <= p <= 1 for p in ps):
        raise ValueError("p-values must be in [0, 1]")
    if not ps:
        return []
    if method == "bh":
        from scipy.stats import false_discovery_control

        return [float(x) for x in false_discovery_control(ps, method="bh")]
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out
