"""Prediction-powered inference (PPI) of a mean: human labels on a sample, an automatic metric on all.

When people reviewed only ``n`` of the records, the mean of their labels (e.g. "the answer is
right") estimates the whole run's human-verified accuracy with a wide interval.  The automatic
metric (exact match, F1 >= t, a judge) is known on every record; PPI uses it on the ``N``
unreviewed records and corrects its bias with the reviewed ones (the "rectifier"):

    theta_hat = mean(lam * f(X_unlabeled)) + mean(Y - lam * f(X))

with the normal interval ``theta_hat +- z * sqrt(var(lam * f(X_unlabeled)) / N + var(Y - lam * f(X)) / n)``
(population variances, ``ddof=0``).  ``lam = 1`` is PPI (Angelopoulos, Bates, Fannjiang, Jordan &
Zrnic, "Prediction-powered inference", Science 382, 2023), ``lam = 0`` the classical interval of the
human labels alone, and the default is the power-tuned ``lam`` of PPI++ (Angelopoulos, Duchi &
Zrnic 2023, arXiv:2311.01453), which is never worse than either asymptotically:

    lam = cov(Y, f(X)) / ((1 + n / N) * var(f(X) and f(X_unlabeled) pooled)),  clipped to [0, 1]

(``cov`` with ``1/n``, the pooled variance with ``ddof=1``).  Every formula is the one of the
reference implementation ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (ppi-python 0.2,
github.com/aangelopoulos/ppi_py), which the tests use as the oracle; it is implemented here
because ppi-python would bring numba/llvmlite (about 200 MB), scikit-learn, statsmodels and a
downloader (gdown) into the runtime for these few lines.

Validity needs the reviewed records to be a uniformly random sample of the run (a review
queue sorted by anything else breaks it); the interval is asymptotic (normal), so ``n`` should
not be tiny (tens at least).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from evaluators.results import DictMixin


@dataclass(frozen=True)
class MeanEstimate(DictMixin):
    """A mean with its normal-approximation confidence interval.

    Attributes
    ----------
    estimate : float
    ci_low, ci_high : float
        Not clipped to the scores' range (as the reference implementation).
    std_error : float
    n_labeled, n_unlabeled : int
        Human-labelled records used, automatic-only records used (0 for the classical estimate).
    lam : float
        The weight of the automatic metric (0: human labels only).
    confidence_level : float
    method : str
    """

    estimate: float
    ci_low: float
    ci_high: float
    std_error: float
    n_labeled: int
    n_unlabeled: int
    lam: float
    confidence_level: float
    method: str

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low


def _array(values, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array (or 2-D, one row per run)")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite")
    return x


def _level(confidence_level: float) -> float:
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    return float(norm.ppf(0.5 + confidence_level / 2))


def power_tuning(y, yhat, yhat_unlabeled) -> np.ndarray | float:
    """The PPI++ weight ``lam`` of the automatic metric (module docstring), clipped to [0, 1].

    Parameters
    ----------
    y, yhat : array-like, shape (n,) or (runs, n)
    yhat_unlabeled : array-like, shape (N,) or (runs, N)

    Returns
    -------
    float (1-D inputs) or numpy.ndarray of shape (runs,)
        0 where the automatic metric does not vary (it carries no information).
    """
    one = np.ndim(y) == 1
    y, yhat, yu = (np.atleast_2d(_array(v, k)) for v, k in ((y, "y"), (yhat, "yhat"), (yhat_unlabeled, "yhat_unlabeled")))
    n, big_n = y.shape[1], yu.shape[1]
    cov = ((y - y.mean(1, keepdims=True)) * (yhat - yhat.mean(1, keepdims=True))).sum(1) / n
    pooled = np.concatenate([yhat, yu], axis=1)
    var = pooled.var(axis=1, ddof=1)
    lam = np.clip(np.where(var > 0, cov / ((1 + n / big_n) * np.where(var > 0, var, 1)), 0.0), 0.0, 1.0)
    return float(lam[0]) if one else lam


def ppi_mean_batch(y, yhat, yhat_unlabeled, *, confidence_level: float = 0.95, lam=None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`ppi_mean` of many runs at once (one per row), for simulations.

    Parameters
    ----------
    y, yhat : array-like, shape (runs, n)
    yhat_unlabeled : array-like, shape (runs, N)
    confidence_level : float
    lam : float, array of shape (runs,) or None
        ``None``: power-tuned per run (:func:`power_tuning`).

    Returns
    -------
    (estimate, ci_low, ci_high, std_error, lam) : arrays of shape (runs,)
    """
    z = _level(confidence_level)
    y, yhat, yu = (np.atleast_2d(_array(v, k)) for v, k in ((y, "y"), (yhat, "yhat"), (yhat_unlabeled, "yhat_unlabeled")))
    if y.shape != yhat.shape or y.shape[0] != yu.shape[0]:
        raise ValueError(f"y and yhat need the same shape and yhat_unlabeled as many runs: {y.shape}, {yhat.shape}, "
                         f"{yu.shape}")
    lam_arr = np.broadcast_to(np.asarray(power_tuning(y, yhat, yu) if lam is None else lam, dtype=float),
                              (y.shape[0],))[:, None]
    estimate = (lam_arr * yu).mean(1) + (y - lam_arr * yhat).mean(1)
    se = np.sqrt((lam_arr * yu).var(1) / yu.shape[1] + (y - lam_arr * yhat).var(1) / y.shape[1])
    return estimate, estimate - z * se, estimate + z * se, se, lam_arr[:, 0]


def ppi_mean(y, yhat, yhat_unlabeled, *, confidence_level: float = 0.95, lam: float | None = None) -> MeanEstimate:
    """Prediction-powered estimate and interval of the mean of the human labels over the whole run.

    Parameters
    ----------
    y : array-like of float, shape (n,)
        Human labels of the reviewed records (1 right / 0 wrong, or a human score in [0, 1]).
    yhat : array-like of float, shape (n,)
        The automatic metric on the same records, same order.
    yhat_unlabeled : array-like of float, shape (N,)
        The automatic metric on the records nobody reviewed.
    confidence_level : float
        In (0, 1); ``ppi_py``'s ``alpha`` is ``1 - confidence_level``.
    lam : float in [0, 1], optional
        Weight of the automatic metric; default power-tuned (PPI++). ``1``: plain PPI.

    Returns
    -------
    MeanEstimate
        Equal to ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci`` (tested).

    Raises
    ------
    ValueError
        Empty or non-finite inputs, ``y`` and ``yhat`` of different lengths, a level outside (0, 1).

    References
    ----------
    Angelopoulos et al. (2023), Science 382:669-674; Angelopoulos, Duchi & Zrnic (2023), PPI++,
    arXiv:2311.01453; reference code ``ppi_py/ppi.py`` (``ppi_mean_ci``).
    """
    y, yhat, yu = _array(y, "y"), _array(yhat, "yhat"), _array(yhat_unlabeled, "yhat_unlabeled")
    if y.ndim != 1 or yhat.ndim != 1 or yu.ndim != 1:
        raise ValueError("y, yhat and yhat_unlabeled must be 1-D")
    if y.shape != yhat.shape:
        raise ValueError(f"y and yhat must have the same length: {y.size} vs {yhat.size}")
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError("lam must be in [0, 1]")
    est, lo, hi, se, lam_used = ppi_mean_batch(y[None], yhat[None], yu[None], confidence_level=confidence_level,
                                               lam=lam)
    tuned = "power-tuned (PPI++)" if lam is None else f"lam={lam:g}"
    return MeanEstimate(float(est[0]), float(lo[0]), float(hi[0]), float(se[0]), int(y.size), int(yu.size),
                        float(lam_used[0]), confidence_level,
                        f"prediction-powered inference of the mean ({tuned}, normal interval, "
                        f"level={confidence_level:g}; Angelopoulos et al. 2023)")


def classical_mean(y, *, confidence_level: float = 0.95) -> MeanEstimate:
    """The human-only estimate: mean of ``y`` with the normal (CLT) interval ``mean +- z * std(y) / sqrt(n)``.

    ``std`` with ``ddof=0``, as ``ppi_py.classical_mean_ci`` (the baseline PPI is compared with).

    Raises
    ------
    ValueError
        Empty or non-finite ``y``, a level outside (0, 1).
    """
    z = _level(confidence_level)
    y = _array(y, "y")
    if y.ndim != 1:
        raise ValueError("y must be 1-D")
    est, se = float(y.mean()), float(y.std() / np.sqrt(y.size))
    return MeanEstimate(est, est - z * se, est + z * se, se, int(y.size), 0, 0.0, confidence_level,
                        f"mean of the human labels, normal interval (level={confidence_level:g})")
