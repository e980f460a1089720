"""The model's score under a judge, corrected with the calibration set, beside the raw and human-only scores.

A judge that calls right answers right with probability ``q1`` (sensitivity) and wrong answers wrong with
probability ``q0`` (specificity) reports ``p = theta q1 + (1 - theta)(1 - q0)`` right answers when the true
accuracy is ``theta``: the raw judge score overestimates a low accuracy and underestimates a high one.
Four estimates of the model's accuracy are put side by side (:func:`corrected_scores`):

- **raw**: the share of the target items the judge calls right, with the Wilson interval of that share (its
  uncertainty only: the judge's errors are not in it);
- **bias-adjusted** (:func:`bias_adjusted_accuracy`): Lee, Zeng, Jeong, Sohn & Lee (2025), "How to correctly
  report LLM-as-a-judge evaluations", arXiv:2511.21140: the Rogan-Gladen (1978) correction
  ``theta = (p + q0 - 1) / (q0 + q1 - 1)`` with ``q0``, ``q1`` estimated on the calibration set and an
  interval that carries the uncertainty of the test set and of the calibration set.  Needs only that the
  judge's sensitivity and specificity are the same on the calibration and the target items (the base rate
  may differ: a calibration set that over-samples failures is fine);
- **prediction-powered** (:func:`evaluators.metrics.ppi.ppi_mean`, PPI++ power-tuned; Angelopoulos et al.
  2023): the judge's mean on the target items plus the mean of (human - judge) on the calibration items.
  Needs the calibration items to be a uniform random sample of the same population as the target items;
- **human-only** (:func:`evaluators.metrics.ppi.classical_mean`): the mean of the human labels of the
  calibration items, normal interval; needs the same sampling as PPI and ignores the judge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from evaluators.metrics.ppi import classical_mean, ppi_mean
from evaluators.metrics.statistics import wilson_interval
from evaluators.results import DictMixin


@dataclass(frozen=True)
class AdjustedAccuracy(DictMixin):
    """The bias-adjusted accuracy of Lee et al. (2025) with its interval.

    Attributes
    ----------
    estimate : float or None
        ``clip((p + q0 - 1) / (q0 + q1 - 1), 0, 1)``; ``None`` when ``q0 + q1 <= 1`` (a judge no better than
        chance carries no information about the accuracy).
    ci_low, ci_high : float or None
        The adjusted interval (see :func:`bias_adjusted_accuracy`), clipped to [0, 1].
    std_error : float or None
        Its standard error (delta method on the smoothed proportions).
    p, q0, q1 : float
        The judge's positive rate on the target items, its specificity and sensitivity on the calibration set.
    n, m0, m1 : int
        Target items; calibration items people call wrong (behind ``q0``) and right (behind ``q1``).
    confidence_level : float
    method : str
    note : str or None
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    std_error: float | None
    p: float
    q0: float
    q1: float
    n: int
    m0: int
    m1: int
    confidence_level: float
    method: str
    note: str | None = None


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def bias_adjusted_accuracy(p: float, n: int, q0: float, m0: int, q1: float, m1: int, *,
                           confidence_level: float = 0.95) -> AdjustedAccuracy:
    """Bias-adjusted accuracy of a model judged by an imperfect judge, and its confidence interval.

    Point estimate (Rogan & Gladen 1978; Lee et al. 2025, eq. 3)::

        theta_hat = clip((p + q0 - 1) / (q0 + q1 - 1), 0, 1)

    Interval (Lee et al. 2025, eq. 6 and the reference code ``llm_judge_reporting.confidence_interval``):
    with ``z = Phi^-1((1 + level) / 2)``, the proportions are first smoothed as in the adjusted Wald
    intervals of Agresti & Coull (1998) and Lang & Reiczigel (2014)::

        p~  = (n p + z^2 / 2) / (n + z^2)      n~  = n + z^2
        q0~ = (m0 q0 + 1) / (m0 + 2)           m0~ = m0 + 2
        q1~ = (m1 q1 + 1) / (m1 + 2)           m1~ = m1 + 2
        theta~ = (p~ + q0~ - 1) / (q0~ + q1~ - 1)

    then the delta-method standard error of ``theta~`` combines the test-set and calibration-set variances::

        se = sqrt(p~(1 - p~) / n~ + (1 - theta~)^2 q0~(1 - q0~) / m0~ + theta~^2 q1~(1 - q1~) / m1~)
             / (q0~ + q1~ - 1)

    and the interval is centred on ``theta~`` shifted by a second-order bias term::

        d = 2 z^2 (-(1 - theta~) q0~(1 - q0~) / m0~ + theta~ q1~(1 - q1~) / m1~)
        [clip(theta~ + d - z se), clip(theta~ + d + z se)]

    Parameters
    ----------
    p : float in [0, 1]
        Share of the ``n`` target items the judge calls right.
    n : int >= 1
        Target (test) items judged.
    q0 : float in [0, 1]
        Specificity: share of the ``m0`` calibration items people call wrong that the judge calls wrong.
    m0 : int >= 1
    q1 : float in [0, 1]
        Sensitivity: share of the ``m1`` calibration items people call right that the judge calls right.
    m1 : int >= 1
    confidence_level : float
        In (0, 1); the reference code's ``alpha`` is ``1 - confidence_level``.

    Returns
    -------
    AdjustedAccuracy
        ``estimate`` ``None`` when ``q0 + q1 <= 1``; interval ``None`` when ``q0~ + q1~ <= 1``.

    Raises
    ------
    ValueError
        A proportion outside [0, 1], a count that is not a positive integer, a level outside (0, 1).

    Examples
    --------
    The example of the reference code (p = 0.4 of 1,000 items judged right; q0 = 0.7, q1 = 0.9 on 200 + 200
    calibration items): theta_hat = (0.4 + 0.7 - 1) / (0.7 + 0.9 - 1) = 1/6.

    >>> a = bias_adjusted_accuracy(0.4, 1000, 0.7, 200, 0.9, 200)
    >>> round(a.estimate, 4), round(a.ci_low, 4), round(a.ci_high, 4)
    (0.1667, 0.0564, 0.2627)

    References
    ----------
    C. Lee, T. Zeng, J. Jeong, J. Sohn, K. Lee (2025), "How to Correctly Report LLM-as-a-Judge
    Evaluations", arXiv:2511.21140 (code: github.com/UW-Madison-Lee-Lab/LLM-judge-reporting);
    W. J. Rogan, B. Gladen (1978), "Estimating prevalence from the results of a screening test",
    American Journal of Epidemiology 107(1); Z. Lang, J. Reiczigel (2014), "Confidence limits for
    prevalence of disease adjusted for estimated sensitivity and specificity", Preventive Veterinary
    Medicine 113(1).
    """
    for name, value in (("p", p), ("q0", q0), ("q1", q1)):
        if not (isinstance(value, (int, float, np.floating, np.integer)) and 0 <= value <= 1):
            raise ValueError(f"{name} must be a proportion in [0, 1], not {value!r}")
    n, m0, m1 = _count("n", n), _count("m0", m0), _count("m1", m1)
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    p, q0, q1 = float(p), float(q0), float(q1)
    method = (f"bias-adjusted accuracy (Rogan-Gladen), adjusted Wald interval with test and calibration "
              f"uncertainty, level={confidence_level:g} (Lee et al. 2025, arXiv:2511.21140)")
    estimate = None
    note = None
    if q0 + q1 > 1:
        estimate = min(1.0, max(0.0, (p + q0 - 1) / (q0 + q1 - 1)))
    else:
        note = f"judge no better than chance on the calibration set (specificity + sensitivity = {q0 + q1:.3f} <= 1)"
    z = float(norm.ppf(0.5 + confidence_level / 2))
    pt, q0t, q1t = (n * p + z * z / 2) / (n + z * z), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    nt, m0t, m1t = n + z * z, m0 + 2, m1 + 2
    den = q0t + q1t - 1
    if den <= 0 or estimate is None:
        return AdjustedAccuracy(estimate, None, None, None, p, q0, q1, n, m0, m1, confidence_level, method,
                                note or "no interval: smoothed specificity + sensitivity <= 1")
    th = (pt + q0t - 1) / den
    v0, v1 = q0t * (1 - q0t) / m0t, q1t * (1 - q1t) / m1t
    shift = 2 * z * z * (-(1 - th) * v0 + th * v1)
    se = float(np.sqrt(pt * (1 - pt) / nt + (1 - th) ** 2 * v0 + th ** 2 * v1) / den)
    low, high = (min(1.0, max(0.0, th + shift + s * z * se)) for s in (-1, 1))
    return AdjustedAccuracy(estimate, low, high, se, p, q0, q1, n, m0, m1, confidence_level, method, note)


def _binary(values, name: str) -> np.ndarray:
    x = np.asarray(values).ravel()
    if x.size == 0:
        raise ValueError(f"{name} needs at least one item")
    if not np.isin(x, (0, 1)).all():  # checked before the cast to int: 0.5 is not a verdict
        raise ValueError(f"{name} must hold verdicts 0 (wrong) or 1 (right)")
    return x.astype(int)


def bias_adjusted_from_verdicts(target_judge, calibration_human, calibration_judge, *,
                                confidence_level: float = 0.95) -> AdjustedAccuracy:
    """:func:`bias_adjusted_accuracy` from verdicts: the judge's on the target items, people's and the judge's
    on the calibration items.

    Parameters
    ----------
    target_judge : array-like of int (0/1), shape (n,)
    calibration_human, calibration_judge : array-like of int (0/1), shape (m,)
        Paired by position; ``m0`` / ``m1`` are the items people call wrong / right.

    Raises
    ------
    ValueError
        Empty inputs, verdicts other than 0 and 1, calibration arrays of different lengths, a calibration set
        without a human-wrong or a human-right item (specificity or sensitivity unknown).
    """
    t = _binary(target_judge, "target_judge")
    y, v = _binary(calibration_human, "calibration_human"), _binary(calibration_judge, "calibration_judge")
    if y.size != v.size:
        raise ValueError(f"calibration_human and calibration_judge must be paired: {y.size} vs {v.size}")
    m0, m1 = int((y == 0).sum()), int((y == 1).sum())
    if not m0 or not m1:
        raise ValueError("the calibration set needs items people call wrong and items they call right "
                         f"(wrong: {m0}, right: {m1}) to estimate specificity and sensitivity")
    return bias_adjusted_accuracy(float(t.mean()), int(t.size), float((v[y == 0] == 0).mean()), m0,
                                  float(v[y == 1].mean()), m1, confidence_level=confidence_level)


@dataclass(frozen=True)
class Estimate(DictMixin):
    """One estimate of the model's accuracy with its interval.

    Attributes
    ----------
    name : {"raw_judge", "bias_adjusted", "prediction_powered", "human_only"}
    estimate, ci_low, ci_high : float or None
    n_target, n_calibration : int
        Target items and calibration items the estimate uses.
    method : str
    note : str or None
    """

    name: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_target: int
    n_calibration: int
    method: str
    note: str | None = None


@dataclass(frozen=True)
class CorrectedScores(DictMixin):
    """The four estimates side by side (module docstring), plus the bias-adjusted estimate's inputs.

    Attributes
    ----------
    estimates : tuple of Estimate
        raw_judge, bias_adjusted, prediction_powered, human_only.
    adjusted : AdjustedAccuracy
    """

    estimates: tuple[Estimate, ...]
    adjusted: AdjustedAccuracy

    def get(self, name: str) -> Estimate:
        return next(e for e in self.estimates if e.name == name)


def corrected_scores(target_judge, calibration_human, calibration_judge, *,
                     confidence_level: float = 0.95) -> CorrectedScores:
    """Raw judge score, bias-adjusted accuracy, prediction-powered estimate and human-only estimate.

    Parameters
    ----------
    target_judge : array-like of int (0/1), shape (n,)
        The judge's verdicts on the model's outputs nobody labelled.
    calibration_human, calibration_judge : array-like of int (0/1), shape (m,)
        People's final labels and the judge's verdicts on the calibration items (the held-out test side of
        the split for a prompt chosen on dev).
    confidence_level : float

    Returns
    -------
    CorrectedScores

    Raises
    ------
    ValueError
        As :func:`bias_adjusted_from_verdicts`.

    References
    ----------
    Lee et al. (2025), arXiv:2511.21140; Angelopoulos et al. (2023), Science 382; Angelopoulos, Duchi & Zrnic
    (2023), PPI++, arXiv:2311.01453; Wilson (1927).
    """
    adjusted = bias_adjusted_from_verdicts(target_judge, calibration_human, calibration_judge,
                                           confidence_level=confidence_level)
    t = _binary(target_judge, "target_judge")
    y, v = _binary(calibration_human, "calibration_human"), _binary(calibration_judge, "calibration_judge")
    low, high = wilson_interval(int(t.sum()), int(t.size), confidence_level=confidence_level)
    raw = Estimate("raw_judge", float(t.mean()), low, high, int(t.size), 0,
                   f"share the judge calls right, Wilson interval (level={confidence_level:g}); judge errors not "
                   "corrected", "biased unless the judge is perfect")
    bias = Estimate("bias_adjusted", adjusted.estimate, adjusted.ci_low, adjusted.ci_high, int(t.size), int(y.size),
                    adjusted.method, adjusted.note)
    pp = ppi_mean(y, v, t, confidence_level=confidence_level)
    ppi = Estimate("prediction_powered", pp.estimate, pp.ci_low, pp.ci_high, int(t.size), int(y.size), pp.method,
                   "assumes the calibration items are a uniform sample of the target items")
    hm = classical_mean(y, confidence_level=confidence_level)
    human = Estimate("human_only", hm.estimate, hm.ci_low, hm.ci_high, 0, int(y.size), hm.method,
                     "assumes the calibration items are a uniform sample of the target items")
    return CorrectedScores((raw, bias, ppi, human), adjusted)


def corrected_for_version(labels, split, verdicts, target_verdicts, *, side: str = "test",
                          confidence_level: float = 0.95) -> CorrectedScores:
    """:func:`corrected_scores` of one judge version, calibrated on one side of a calibration set's split.

    Parameters
    ----------
    labels : sequence of HumanLabel
        The calibration set.
    split : Split
        Its dev/test split (:func:`evaluators.judgelab.calibration.assign_split`).
    verdicts : mapping item id -> 0 / 1
        The version's verdicts on the calibration items.
    target_verdicts : mapping item id -> 0 / 1
        The version's verdicts on the model's outputs to score; ids that are in the calibration set are left
        out of the target (they are calibration items).
    side : {"test", "dev"}
        The calibration side: ``test`` (held out) for a prompt chosen on dev.
    confidence_level : float

    Returns
    -------
    CorrectedScores

    Raises
    ------
    ValueError
        No target item left, or as :func:`corrected_scores`.
    """
    labelled = {lab.item_id for lab in labels}
    cal = [lab for lab in labels if split.side(lab.item_id) == side and lab.item_id in verdicts]
    target = [int(v) for i, v in sorted(target_verdicts.items()) if i not in labelled]
    if not target:
        raise ValueError("no target verdict outside the calibration set")
    return corrected_scores(target, [lab.label for lab in cal], [int(verdicts[lab.item_id]) for lab in cal],
                            confidence_level=confidence_level)
