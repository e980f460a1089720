"""The judge lab's bias panel: length bias, position bias, self-preference and drift, each with an interval.

- :func:`length_bias`: the slope of the judge's score on the answer's length given the human label, by
  least squares ``score ~ 1 + length / unit + human_label`` (the label as a covariate: a longer answer that
  is also more often right does not count as bias), with a percentile bootstrap interval over items
  (Efron & Tibshirani 1993, ch. 13; pairs bootstrap of a regression, ch. 9.5).  Cf. Dubois et al. (2024),
  "Length-controlled AlpacaEval" (arXiv:2404.04475), who regress the judge's preference on the length
  difference.
- :func:`position_bias`: the swap test: every A/B pair judged twice, answers shown in the order (a, b) and
  (b, a); a verdict that names another answer when only the order changed is *flipped* (the position, not the
  answer, decided it).  The share of flipped pairs with its Wilson interval, and among the flips the share
  that went to the answer shown first (Zheng et al. 2023, "Judging LLM-as-a-judge with MT-Bench and Chatbot
  Arena", sec. 3.3: position bias measured by swapping; Wang et al. 2023, "Large language models are not
  fair evaluators", arXiv:2305.17926).
- :func:`self_preference`: how much more the judge over-rates outputs of its own model family than those of
  other systems, relative to the human labels: ``mean(judge - human | own) - mean(judge - human | others)``
  with a percentile bootstrap interval over items (Panickssery, Bowman & Feng 2024, "LLM evaluators recognize
  and favor their own generations", arXiv:2404.13076).
- :func:`drift`: a fixed anchor set judged by two judge versions: the items whose verdict moved, the share
  moved (Wilson interval) and McNemar's exact test of the two versions' positive rates (McNemar 1947).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluators.metrics.statistics import (SMALL_SAMPLE_ITEMS, McNemarResult, bootstrap_statistic_ci, mcnemar,
                                           wilson_interval)
from evaluators.results import DictMixin

#: Bootstrap resamples behind a bias interval.
BIAS_RESAMPLES = 2000


def _finite(values, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite numbers")
    return x


@dataclass(frozen=True)
class LengthBias(DictMixin):
    """The slope of the judge's score on answer length, given the human label.

    Attributes
    ----------
    slope : float or None
        Change of the judge's score per ``unit`` characters of answer, the human label held fixed; ``None``
        when the lengths do not vary.
    ci_low, ci_high : float or None
        Percentile bootstrap interval (items resampled).
    n : int
    unit : float
        Characters per length unit.
    small_sample : bool
        ``n < SMALL_SAMPLE_ITEMS``.
    method : str
    """

    slope: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    unit: float
    small_sample: bool
    method: str

    @property
    def excludes_zero(self) -> bool:
        """The interval lies wholly on one side of 0 (the judge's score depends on length)."""
        return self.ci_low is not None and (self.ci_low > 0 or self.ci_high < 0)


def _wls_slopes(design: np.ndarray, y: np.ndarray):
    """``statistic(weights)``: the coefficient of column 1 of weighted least squares, one per weights row."""
    k = design.shape[1]
    outer = (design[:, :, None] * design[:, None, :]).reshape(len(y), k * k)
    xy = design * y[:, None]

    def slopes(w: np.ndarray) -> np.ndarray:
        # Cramer's rule for the slope (column 1): det(A with column 1 replaced by b) / det(A); einsum and a
        # batched determinant stay off the BLAS threads (faster for (B, n) x (n, 9) on a busy machine)
        a = np.einsum("bn,nk->bk", w, outer).reshape(-1, k, k)
        b = np.einsum("bn,nk->bk", w, xy)
        scale = np.einsum("bii->b", a) / k
        det = np.linalg.det(a / scale[:, None, None])
        a[:, :, 1] = b
        with np.errstate(invalid="ignore", divide="ignore"):
            # a resample can leave the design singular (one length, one label): NaN there
            return np.where(np.abs(det) > 1e-10, np.linalg.det(a / scale[:, None, None]) / det, np.nan)

    return slopes


def length_bias(judge_scores: Sequence[float], lengths: Sequence[float], human_labels: Sequence[int], *,
                unit: float = 100.0, n_resamples: int = BIAS_RESAMPLES, confidence_level: float = 0.95,
                seed: int = 0) -> LengthBias:
    """Slope of the judge's score on answer length given the human label, with a bootstrap interval.

    Least squares fit of ``score_i = a + b * length_i / unit + c * human_i``; ``b`` is the length bias.
    Without variation in the human labels the label column is dropped.

    Parameters
    ----------
    judge_scores : array-like of float, shape (n,)
        The judge's verdict (0/1) or score per item.
    lengths : array-like of float, shape (n,)
        The answer's length (characters; Chinese characters count one each).
    human_labels : array-like of int, shape (n,)
        The human final label (1 right, 0 wrong).
    unit : float
        Characters per length unit (the slope is per ``unit`` characters).
    n_resamples, confidence_level, seed
        Of the percentile bootstrap (items resampled with replacement, the regression refitted each time).

    Returns
    -------
    LengthBias

    Raises
    ------
    ValueError
        Arrays of different lengths, non-finite values, fewer than 3 items, a unit <= 0.

    References
    ----------
    Efron & Tibshirani (1993), ch. 9.5 and 13; Dubois et al. (2024), arXiv:2404.04475.
    """
    y = _finite(judge_scores, "judge_scores")
    x = _finite(lengths, "lengths")
    h = _finite(human_labels, "human_labels")
    if not (y.size == x.size == h.size):
        raise ValueError(f"judge_scores, lengths and human_labels need one value per item: {y.size}, {x.size}, "
                         f"{h.size}")
    if y.size < 3:
        raise ValueError("length bias needs at least 3 items")
    if unit <= 0:
        raise ValueError("unit must be > 0")
    columns = [np.ones_like(x), x / unit] + ([h] if np.ptp(h) > 0 else [])
    design = np.column_stack(columns)
    method = (f"least squares score ~ 1 + length/{unit:g} chars" + (" + human label" if len(columns) == 3 else "")
              + f"; bootstrap(percentile, items resampled, n_resamples={n_resamples}, level={confidence_level:g}, "
              f"seed={seed})")
    n = int(y.size)
    if np.ptp(x) == 0:
        return LengthBias(None, None, None, n, unit, n < SMALL_SAMPLE_ITEMS, method)
    statistic = _wls_slopes(design, y)
    slope = float(statistic(np.ones((1, n)))[0])
    low, high, _ = bootstrap_statistic_ci(n, statistic, n_resamples=n_resamples, confidence_level=confidence_level,
                                          seed=seed)
    return LengthBias(slope, low, high, n, unit, n < SMALL_SAMPLE_ITEMS, method)


@dataclass(frozen=True)
class PositionBias(DictMixin):
    """The swap test of an A/B judge.

    Attributes
    ----------
    n_pairs : int
    n_flipped : int
        Pairs whose verdict named another answer (or a tie on one side only) when the order was swapped.
    flip_rate, ci_low, ci_high : float or None
        ``n_flipped / n_pairs`` with its Wilson interval.
    first_position, second_position : int
        Flips where the answer shown first won both times; shown second both times.
    first_position_share, first_ci_low, first_ci_high : float or None
        ``first_position / (first_position + second_position)`` with its Wilson interval (0.5: no preferred
        side among the flips).
    flipped_ids : tuple of str
    small_sample : bool
    method : str
    """

    n_pairs: int
    n_flipped: int
    flip_rate: float | None
    ci_low: float | None
    ci_high: float | None
    first_position: int
    second_position: int
    first_position_share: float | None
    first_ci_low: float | None
    first_ci_high: float | None
    flipped_ids: tuple[str, ...]
    small_sample: bool
    method: str


PAIR_VERDICTS = ("a", "b", "tie")


def position_bias(ids: Sequence[str], shown_ab: Sequence[str], shown_ba: Sequence[str], *,
                  confidence_level: float = 0.95) -> PositionBias:
    """The swap test: each A/B pair judged with answer ``a`` shown first, then with ``b`` shown first.

    Parameters
    ----------
    ids : sequence of str, shape (n,)
    shown_ab : sequence of {"a", "b", "tie"}, shape (n,)
        The answer the judge preferred (by identity, not position) when ``a`` was shown first.
    shown_ba : sequence of {"a", "b", "tie"}, shape (n,)
        The same with ``b`` shown first.
    confidence_level : float

    Returns
    -------
    PositionBias
        A pair is consistent when both verdicts name the same answer (or both a tie).  ``("a", "b")``: the
        answer shown first won both times; ``("b", "a")``: the one shown second.

    Raises
    ------
    ValueError
        Sequences of different lengths or a verdict outside ``a``, ``b``, ``tie``.

    References
    ----------
    Zheng et al. (2023), NeurIPS Datasets and Benchmarks, sec. 3.3; Wang et al. (2023), arXiv:2305.17926;
    Wilson (1927).
    """
    ids = [str(i) for i in ids]
    first, second = [str(v).lower() for v in shown_ab], [str(v).lower() for v in shown_ba]
    if not (len(ids) == len(first) == len(second)):
        raise ValueError(f"ids, shown_ab and shown_ba need one entry per pair: {len(ids)}, {len(first)}, "
                         f"{len(second)}")
    bad = sorted({v for v in first + second if v not in PAIR_VERDICTS})
    if bad:
        raise ValueError(f"pair verdicts must be 'a', 'b' or 'tie', not {bad[:3]}")
    flipped = [i for i, x, y in zip(ids, first, second) if x != y]
    to_first = sum(1 for x, y in zip(first, second) if (x, y) == ("a", "b"))
    to_second = sum(1 for x, y in zip(first, second) if (x, y) == ("b", "a"))
    n = len(ids)
    low, high = wilson_interval(len(flipped), n, confidence_level=confidence_level)
    directional = to_first + to_second
    flow, fhigh = wilson_interval(to_first, directional, confidence_level=confidence_level)
    return PositionBias(n, len(flipped), len(flipped) / n if n else None, low, high, to_first, to_second,
                        to_first / directional if directional else None, flow, fhigh, tuple(sorted(flipped)),
                        n < SMALL_SAMPLE_ITEMS,
                        f"swap test, share of flipped verdicts with Wilson interval (level={confidence_level:g})")


@dataclass(frozen=True)
class SelfPreference(DictMixin):
    """How much more the judge over-rates its own family's outputs than other systems', against people.

    Attributes
    ----------
    difference : float or None
        ``mean(judge - human | own family) - mean(judge - human | other systems)``; ``None`` without items of
        both kinds.
    ci_low, ci_high : float or None
        Percentile bootstrap interval (items resampled; a resample without both kinds is left out).
    own_gap, other_gap : float or None
        The two means.
    n_own, n_other : int
    small_sample : bool
        Fewer than ``SMALL_SAMPLE_ITEMS`` items on either side.
    method : str
    """

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    own_gap: float | None
    other_gap: float | None
    n_own: int
    n_other: int
    small_sample: bool
    method: str


def self_preference(judge_scores: Sequence[float], human_labels: Sequence[float], own_family: Sequence[bool], *,
                    n_resamples: int = BIAS_RESAMPLES, confidence_level: float = 0.95,
                    seed: int = 0) -> SelfPreference:
    """Self-preference of a judge: its over-rating of outputs from its own model family, relative to people.

    Parameters
    ----------
    judge_scores, human_labels : array-like of float, shape (n,)
        The judge's verdict (0/1) or score and the human label on the same scale.
    own_family : array-like of bool, shape (n,)
        Whether the item's output comes from a system of the judge's model family.
    n_resamples, confidence_level, seed
        Of the percentile bootstrap.

    Returns
    -------
    SelfPreference

    Raises
    ------
    ValueError
        Arrays of different lengths, non-finite values, ``own_family`` not booleans.

    References
    ----------
    Panickssery, Bowman & Feng (2024), arXiv:2404.13076; Efron & Tibshirani (1993), ch. 13.
    """
    y = _finite(judge_scores, "judge_scores")
    h = _finite(human_labels, "human_labels")
    raw = np.asarray(own_family).ravel()
    if not np.isin(raw, (0, 1)).all():  # True / False / 0 / 1 only: a string would read as True
        raise ValueError("own_family must be booleans (or 0 / 1)")
    own = raw.astype(bool)
    if not (y.size == h.size == own.size):
        raise ValueError(f"judge_scores, human_labels and own_family need one value per item: {y.size}, {h.size}, "
                         f"{own.size}")
    gap = y - h
    n_own, n_other = int(own.sum()), int((~own).sum())
    method = (f"difference of mean (judge - human) own family vs others; bootstrap(percentile, items resampled, "
              f"n_resamples={n_resamples}, level={confidence_level:g}, seed={seed})")
    if not n_own or not n_other:
        return SelfPreference(None, None, None, float(gap[own].mean()) if n_own else None,
                              float(gap[~own].mean()) if n_other else None, n_own, n_other, True, method)
    o, g = own.astype(float), gap

    def statistic(w: np.ndarray) -> np.ndarray:
        wo, wt = w @ o, w.sum(1) - w @ o
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((wo > 0) & (wt > 0), (w @ (g * o)) / wo - (w @ (g * (1 - o))) / wt, np.nan)

    own_gap, other_gap = float(gap[own].mean()), float(gap[~own].mean())
    low, high, _ = bootstrap_statistic_ci(y.size, statistic, n_resamples=n_resamples,
                                          confidence_level=confidence_level, seed=seed)
    return SelfPreference(own_gap - other_gap, low, high, own_gap, other_gap, n_own, n_other,
                          min(n_own, n_other) < SMALL_SAMPLE_ITEMS, method)


@dataclass(frozen=True)
class Drift(DictMixin):
    """Anchor items re-judged by a new judge version.

    Attributes
    ----------
    n_anchors : int
        Anchors judged by both versions.
    moved_ids : tuple of str
        Anchors whose verdict changed, sorted.
    up_ids, down_ids : tuple of str
        Moved from wrong (0) to right (1); from right to wrong.
    moved_share, ci_low, ci_high : float or None
        ``len(moved_ids) / n_anchors`` with its Wilson interval.
    mcnemar : McNemarResult or None
        McNemar's exact test of the two versions' verdicts (``a`` the old version, ``b`` the new one).
    missing_ids : tuple of str
        Anchors not judged by one of the versions (left out).
    small_sample : bool
    method : str
    """

    n_anchors: int
    moved_ids: tuple[str, ...]
    up_ids: tuple[str, ...]
    down_ids: tuple[str, ...]
    moved_share: float | None
    ci_low: float | None
    ci_high: float | None
    mcnemar: McNemarResult | None
    missing_ids: tuple[str, ...]
    small_sample: bool
    method: str


def drift(before: Mapping[str, int], after: Mapping[str, int], anchor_ids: Sequence[str] | None = None, *,
          confidence_level: float = 0.95) -> Drift:
    """Which anchor items changed verdict between two judge versions.

    Parameters
    ----------
    before, after : mapping item id -> verdict (0 or 1)
        The old and the new judge version's verdicts.
    anchor_ids : sequence of str, optional
        The fixed anchor set (default: every id either version judged).
    confidence_level : float

    Returns
    -------
    Drift

    Raises
    ------
    ValueError
        A verdict other than 0 and 1 (or a bool).

    References
    ----------
    McNemar (1947), Psychometrika 12(2); Wilson (1927).
    """
    anchors = sorted(set(anchor_ids) if anchor_ids is not None else set(before) | set(after))
    both = [i for i in anchors if i in before and i in after]
    missing = tuple(i for i in anchors if i not in both)
    for i in both:
        for v in (before[i], after[i]):
            if isinstance(v, bool) or v in (0, 1):
                continue
            raise ValueError(f"verdict of {i!r} must be 0 or 1, not {v!r}")
    up = tuple(i for i in both if int(before[i]) == 0 and int(after[i]) == 1)
    down = tuple(i for i in both if int(before[i]) == 1 and int(after[i]) == 0)
    moved = tuple(sorted(up + down))
    n = len(both)
    low, high = wilson_interval(len(moved), n, confidence_level=confidence_level)
    test = mcnemar([int(before[i]) for i in both], [int(after[i]) for i in both]) if n else None
    return Drift(n, moved, up, down, len(moved) / n if n else None, low, high, test, missing,
                 n < SMALL_SAMPLE_ITEMS,
                 f"anchor verdicts compared; Wilson interval (level={confidence_level:g}); McNemar exact test")
