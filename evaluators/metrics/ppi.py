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

    References
    ----------
    Angelopoulos, Duchi & Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference",
    arXiv:2311.01453 (the variance-minimising ``lam``); ``ppi_py``'s ``_calc_lam_glm`` for the mean.
    """
    one = np.ndim(y) == 1
    y, yhat, yu = (np.atleast_2d(_array(v, k)) for v, k in ((y, "y"), (yhat, "yhat"), (yhat_unlabeled, "yhat_unlabeled")))
    n, big_n = y.shape[1], yu.shape[1]
    cov = ((y - y.mean(1, keepdims=True)) * (yhat - yhat.mean(1, keepdims=True))).sum(1) / n
    pooled = np.concatenate([yhat, yu], axis=1)
    var = pooled.var(axis=1, ddof=1)
    lam = np.clip(np.where(var > 0, cov / ((1 + n / big_n) * np.where(var > 0, var, 1)), 0.0), 0.0, 1.0)
    return float(lam[0]) if one else lam


def loo_power_tuning(y, yhat, yhat_unlabeled) -> np.ndarray:
    """Leave-one-out cross-fitted PPI++ weights: ``lam_i`` is :func:`power_tuning` without reviewed record ``i``.

    ``lam_i`` is independent of ``(y_i, yhat_i)``, so
    ``mean(y_i - lam_i * yhat_i) + mean(lam_i) * mean(yhat_unlabeled)`` is unbiased (up to the
    unlabelled records' share in the pooled variance, O(1/N)), where the estimate with one ``lam`` tuned
    on all the reviewed records carries a bias of order 1/n (``lam`` is correlated with the mean of
    ``yhat`` it multiplies).  The factor ``1 + n / N`` keeps the ``n`` of the estimate.

    Parameters
    ----------
    y, yhat : array-like, shape (n,), n >= 2
    yhat_unlabeled : array-like, shape (N,)

    Returns
    -------
    numpy.ndarray, shape (n,)
        Each clipped to [0, 1]; 0 where the metric does not vary without record ``i``.

    References
    ----------
    Angelopoulos, Duchi & Zrnic (2023), PPI++, arXiv:2311.01453 (the tuned weight); Zrnic & Candès
    (2024), "Cross-prediction-powered inference", PNAS 121(15), and Chernozhukov et al. (2018),
    Econometrics Journal 21(1) (cross-fitting: nuisance fitted on the other folds; here n folds).
    """
    y, f, fu = _array(y, "y"), _array(yhat, "yhat"), _array(yhat_unlabeled, "yhat_unlabeled")
    n, big_n = y.size, fu.size
    if n < 2 or y.shape != f.shape or y.ndim != 1 or fu.ndim != 1:
        raise ValueError("y and yhat need the same length (at least 2); yhat_unlabeled 1-D")
    m = n - 1
    sy, sf, sxy = y.sum() - y, f.sum() - f, (y * f).sum() - y * f
    cov = (sxy - sy * sf / m) / m  # 1/n-style covariance of the other n - 1 records, as power_tuning
    count = m + big_n
    total, squares = sf + fu.sum(), (f * f).sum() - f * f + (fu * fu).sum()
    var = (squares - total * total / count) / (count - 1)
    ok = var > 1e-12
    return np.clip(np.where(ok, cov / ((1 + n / big_n) * np.where(ok, var, 1.0)), 0.0), 0.0, 1.0)


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

    References
    ----------
    Angelopoulos et al. (2023), "Prediction-Powered Inference", Science 382; PPI++
    (arXiv:2311.01453); ``ppi_py.ppi_mean_ci`` is the test oracle.
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

    Parameters
    ----------
    y : array-like of float, shape (n,)
        Human labels (or any per-item values), finite, n >= 1.
    confidence_level : float
        In (0, 1); 0.95 by default.

    Returns
    -------
    MeanEstimate
        The mean, its normal interval and standard error; ``n_unlabeled`` 0 and ``lam`` 0.0.

    References
    ----------
    Angelopoulos et al. (2023), "Prediction-Powered Inference", Science 382 (the classical
    baseline); ``ppi_py.classical_mean_ci``.

    Raises
    ------
    ValueError
        Empty, non-finite or not 1-D ``y``, a level outside (0, 1).
    """
    z = _level(confidence_level)
    y = _array(y, "y")
    if y.ndim != 1:
        raise ValueError("y must be 1-D")
    est, se = float(y.mean()), float(y.std() / np.sqrt(y.size))
    return MeanEstimate(est, est - z * se, est + z * se, se, int(y.size), 0, 0.0, confidence_level,
                        f"mean of the human labels, normal interval (level={confidence_level:g})")


# ---------------------------------------------------------------- designs beyond the uniform sample


def stratified_ppi_mean(y, yhat, strata, yhat_unlabeled, strata_unlabeled, *, confidence_level: float = 0.95,
                        lam: float | None = None) -> MeanEstimate:
    """Stratified prediction-powered estimate of the mean: PPI within each stratum, weighted by its size.

    The run's records are split into strata known before review (the metric's value in bins, or
    the metric's verdict x a slice such as the system); within stratum ``h`` a uniformly random
    sample of ``n_h`` records was reviewed.  Each stratum's mean is estimated by PPI on its own
    records, with the metric's weight power-tuned per stratum (PPI++, as Fisch et al.) but cross-fitted:
    reviewed record ``i`` gets ``lam_i``, PPI++'s weight tuned on the stratum's other reviewed records
    (:func:`loo_power_tuning`), and

        theta_hat_h = mean_i (y_i - lam_i f_i) + lam_h * mean(f_unlabeled),   lam_h = mean_i lam_i
        se_h^2 = lam_h^2 var(f_unlabeled) / (N_h - n_h) + var(y_i - lam_i f_i; ddof=1) / n_h
        theta_hat = sum_h W_h theta_hat_h,   se^2 = sum_h W_h^2 se_h^2,   W_h = N_h / N

    (``N_h`` records of stratum ``h``, labelled and not).  A stratum whose records were all reviewed
    contributes its human mean with the classical standard error.  Because strata are small, each
    stratum's rectifier variance is taken with ``n_h - 1`` and the interval uses Student's t with
    Satterthwaite's degrees of freedom (Cochran 1977, sec. 5.4) instead of the normal quantile.  With
    the reviews allocated where the metric errs (:func:`neyman_allocation`), the interval is narrower
    than uniform PPI's for the same number of reviews.

    Why cross-fitted: with one ``lam`` tuned on all of a stratum's reviews (as before, issue 29), the
    estimate ``mean(y) - lam * (mean(f) - mean(f_unlabeled))`` carries a bias of order ``1 / n_h``
    (``lam`` is correlated with the ``mean(f)`` it multiplies, through ``E[(y - mu_y)(f - mu_f)^2]``)
    and the in-sample rectifier variance is the minimum over ``lam``, so too small.  In
    ``bench/ppi_stratified_lambda.py`` (n = 200: 56 and 144 reviews in the strata; 20,000 runs, seed 100)
    that bias was +0.0011 (0.08 of the estimate's sd), the standard error 0.98 of the estimate's sd,
    the misses one-sided (1.9% below, 3.7% above) and the coverage 0.944 (binomial sd 0.0015).
    Weights that never see the record they weight (the cross-fitting of Chernozhukov et al. 2018 and
    of Zrnic & Candès 2024, with n folds) take both away: coverage 0.950, bias -0.00001, se 0.99 of the
    sd, with 0.6% more width (0.77x uniform PPI's).  On the same draws: ``lam = 1`` covers 0.953 but at
    0.86x uniform; one ``lam`` tuned on the pooled sample 0.948 at 0.96x; two-fold cross-fitting 0.952
    at 0.79x (and a random split); the population-optimal ``lam`` 0.951 at 0.77x; the normal quantile
    instead of t takes 0.001 off the in-sample weights' 0.944.  On seeds 0-2 of
    ``bench/ppi_designs_coverage.py`` (1,000 runs each) coverage went from 0.937 / 0.947 / 0.947 to
    0.943 / 0.957 / 0.948, width 0.77-0.78x uniform's.

    Parameters
    ----------
    y, yhat : array-like of float, shape (n,)
        Human labels of the reviewed records and the metric on them.
    strata : array-like, shape (n,)
        The stratum of each reviewed record (any hashable values).
    yhat_unlabeled : array-like of float, shape (N,)
        The metric on the records not reviewed.
    strata_unlabeled : array-like, shape (N,)
    confidence_level : float
    lam : float in [0, 1], optional
        Fixed weight of the metric in every stratum (default: power-tuned per stratum, leave-one-out
        cross-fitted).  With one stratum and a fixed ``lam`` the estimate is :func:`ppi_mean`'s.

    Returns
    -------
    MeanEstimate
        ``n_labeled`` = n, ``n_unlabeled`` = N, ``lam`` the reviewed-weighted mean of the strata's ``lam_h``.

    Raises
    ------
    ValueError
        A stratum with fewer than 2 reviewed records, lengths that differ, empty or non-finite
        inputs, a level outside (0, 1).

    References
    ----------
    Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen (2024), "Stratified prediction-powered
    inference for effective hybrid evaluation of language models", NeurIPS; Cochran (1977),
    *Sampling Techniques*, ch. 5 (stratified estimation, Neyman allocation); Angelopoulos et al.
    (2023), Science 382 (PPI); Angelopoulos, Duchi & Zrnic (2023), PPI++, arXiv:2311.01453 (the tuned
    weight, consistent, so the interval is asymptotically that of the best fixed weight); Chernozhukov
    et al. (2018), "Double/debiased machine learning", Econometrics Journal 21(1) and Zrnic & Candès
    (2024), "Cross-prediction-powered inference", PNAS 121(15) (cross-fitting); Satterthwaite (1946),
    Biometrics Bulletin 2(6).
    """
    z = _level(confidence_level)
    y, yhat, yu = _array(y, "y"), _array(yhat, "yhat"), np.asarray(yhat_unlabeled, dtype=float).ravel()
    s, su = np.asarray(strata, dtype=object).ravel(), np.asarray(strata_unlabeled, dtype=object).ravel()
    if y.ndim != 1 or y.shape != yhat.shape or s.shape != y.shape or su.shape != yu.shape:
        raise ValueError("y, yhat and strata need one value per reviewed record; yhat_unlabeled and "
                         "strata_unlabeled one per other record")
    if not np.all(np.isfinite(yu)):
        raise ValueError("yhat_unlabeled must be finite")
    total = y.size + yu.size
    estimate, variance, lams, parts = 0.0, 0.0, [], []
    for h in dict.fromkeys(list(s) + list(su)):
        lab, unl = s == h, su == h
        n_h, big_h = int(lab.sum()), int(unl.sum())
        if n_h < 2:
            raise ValueError(f"stratum {h!r}: {n_h} reviewed record(s); a stratified estimate needs at least 2 "
                             "in every stratum")
        w = (n_h + big_h) / total
        yh, fh, fu = y[lab], yhat[lab], yu[unl]
        if big_h == 0:  # every record reviewed: the human mean
            est_h, var_h, lam_h = float(yh.mean()), float(yh.var(ddof=1)) / n_h, 0.0
        else:
            # lam_i of record i tuned without record i (leave-one-out cross-fitting): no record's residual is
            # weighted by a lam fitted to it, which removes the O(1/n_h) bias of the in-sample tuned lam
            lam_i = np.full(n_h, float(lam)) if lam is not None else loo_power_tuning(yh, fh, fu)
            lam_h = float(lam_i.mean())
            rect = yh - lam_i * fh
            est_h = lam_h * float(fu.mean()) + float(rect.mean())
            # the rectifier's variance with n_h - 1 (unbiased): strata are small, and ddof=0 understates
            var_h = lam_h ** 2 * float(fu.var()) / big_h + float(rect.var(ddof=1)) / n_h
        estimate += w * est_h
        part = w ** 2 * var_h
        variance += part
        parts.append((part, n_h))
        lams.append((n_h, lam_h))
    se = float(np.sqrt(variance))
    # Student t with Satterthwaite's degrees of freedom (a few small strata carry the variance)
    df_den = sum(v * v / (m - 1) for v, m in parts)
    if variance > 0 and df_den > 0:
        from scipy.stats import t as student_t

        z = float(student_t.ppf(0.5 + confidence_level / 2, variance * variance / df_den))
    lam_mean = sum(n * lm for n, lm in lams) / max(1, sum(n for n, _ in lams))
    tuned = "power-tuned per stratum, leave-one-out cross-fitted" if lam is None else f"lam={lam:g}"
    return MeanEstimate(float(estimate), float(estimate - z * se), float(estimate + z * se), se, int(y.size),
                        int(yu.size), float(lam_mean), confidence_level,
                        f"stratified prediction-powered inference ({len(lams)} strata, {tuned}, Satterthwaite t "
                        f"interval, level={confidence_level:g}; Fisch et al. 2024)")


def active_ppi_mean(yhat, inclusion, labeled, y, *, confidence_level: float = 0.95,
                    lam: float | None = None, strata=None) -> MeanEstimate:
    """Active prediction-powered estimate of the mean: records reviewed with known, unequal probabilities.

    Record ``i`` of the run (``N`` records) was sent to review with probability ``pi_i``
    (independently; :func:`active_probabilities` makes them from the metric's uncertainty); with
    ``xi_i`` = 1 when it was reviewed, the inverse-probability-weighted estimate is

        theta_hat = mean_i [ lam * f_i + (xi_i / pi_i) * (y_i - lam * f_i) ]

    unbiased for any ``lam``, with the normal interval ``theta_hat +- z * sd(terms) / sqrt(N)``.
    ``lam`` defaults to the plug-in value that minimises that variance (terms ``A_i = xi_i y_i / pi_i``,
    ``B_i = f_i (1 - xi_i / pi_i)``: ``lam = -cov(A, B) / var(B)``, clipped to [0, 1]), one per stratum
    when ``strata`` are given (the metric's weight may differ where it errs: a control variate per
    stratum, still unbiased); ``lam = 1`` is the plain active estimator.  With every ``pi_i = n / N``
    it is uniform sampling.

    Parameters
    ----------
    yhat : array-like of float, shape (N,)
        The metric on every record.
    inclusion : array-like of float, shape (N,)
        ``pi_i`` in (0, 1]: the probability with which record i was to be reviewed.
    labeled : array-like of bool, shape (N,)
        Whether record i was reviewed.
    y : array-like of float, shape (N,)
        Human labels; read only where ``labeled`` (anything, e.g. NaN, elsewhere).
    confidence_level : float
    lam : float in [0, 1], optional
        Fixed weight of the metric (default tuned, per stratum with ``strata``).
    strata : array-like, shape (N,), optional
        A stratum per record (known before review) for a ``lam`` per stratum.

    Returns
    -------
    MeanEstimate
        ``lam``: the mean of the weights used, over the records.

    Raises
    ------
    ValueError
        Lengths that differ, a probability outside (0, 1], fewer than 2 reviewed records, non-finite
        values, a level outside (0, 1).

    References
    ----------
    Zrnic & Candès (2024), "Active statistical inference", ICML (sec. 3: the estimator and its
    variance; the probabilities proportional to the model's uncertainty, mixed with uniform);
    Horvitz & Thompson (1952), JASA 47 (inverse-probability weighting); Angelopoulos et al. (2023).
    """
    zq = _level(confidence_level)
    f, pi = _array(yhat, "yhat"), _array(inclusion, "inclusion")
    xi = np.asarray(labeled, dtype=bool).ravel()
    yy = np.asarray(y, dtype=float).ravel()
    if not (f.ndim == 1 and f.shape == pi.shape == xi.shape == yy.shape):
        raise ValueError("yhat, inclusion, labeled and y need one value per record of the run")
    if ((pi <= 0) | (pi > 1)).any():
        raise ValueError("inclusion probabilities must be in (0, 1]")
    if int(xi.sum()) < 2:
        raise ValueError(f"an active estimate needs at least 2 reviewed records, got {int(xi.sum())}")
    if not np.all(np.isfinite(yy[xi])):
        raise ValueError("y must be finite where labeled")
    w = np.where(xi, 1.0 / pi, 0.0)
    a = w * np.where(xi, yy, 0.0)
    b = f * (1 - w)
    groups = np.zeros(f.size, dtype=int)
    if strata is not None:
        s = np.asarray(strata, dtype=object).ravel()
        if s.shape != f.shape:
            raise ValueError("strata need one value per record of the run")
        groups = np.unique(s.astype(str), return_inverse=True)[1]
    lam_of = np.empty(f.size)
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError("lam must be in [0, 1]")
    for g in np.unique(groups):
        m = groups == g
        ag, bg = a[m], b[m]
        vb = bg.var()
        if lam is not None:
            lam_of[m] = lam
        else:
            lam_of[m] = float(np.clip(-np.mean((ag - ag.mean()) * (bg - bg.mean())) / vb, 0, 1)) if vb > 0 else 0.0
    lam_used = float(lam_of.mean())
    terms = a + lam_of * b
    est = float(terms.mean())
    se = float(terms.std(ddof=1) / np.sqrt(terms.size))
    tuned = "lam tuned" if lam is None else f"lam={lam:g}"
    return MeanEstimate(est, est - zq * se, est + zq * se, se, int(xi.sum()), int((~xi).sum()), lam_used,
                        confidence_level,
                        f"active prediction-powered inference (inverse-probability weighted, {tuned}, normal "
                        f"interval, level={confidence_level:g}; Zrnic & Candès 2024)")


def neyman_allocation(n: int, sizes, spreads, *, minimum: int = 2) -> np.ndarray:
    """Reviews per stratum for a stratified estimate: ``n_h`` proportional to ``N_h * s_h`` (Neyman).

    Parameters
    ----------
    n : int
        Reviews to allocate.
    sizes : array-like of int, shape (H,)
        Records per stratum ``N_h``.
    spreads : array-like of float, shape (H,)
        The expected spread ``s_h`` of the human label around the metric in each stratum (e.g.
        ``sqrt(e_h (1 - e_h))`` for an error rate ``e_h`` seen so far or expected from the metric's
        uncertainty); a stratum with 0 gets the minimum.
    minimum : int
        Every stratum gets at least this many (or all its records when it has fewer).

    Returns
    -------
    numpy.ndarray of int, shape (H,)
        Sums to ``min(n, sum(sizes))``; never more than ``N_h``.

    References
    ----------
    Neyman (1934), JRSS 97; Cochran (1977), *Sampling Techniques*, sec. 5.5; Fisch et al. (2024).
    """
    sizes = np.asarray(sizes, dtype=int)
    spreads = np.asarray(spreads, dtype=float)
    if sizes.ndim != 1 or sizes.shape != spreads.shape or (sizes < 0).any():
        raise ValueError("sizes and spreads need one value per stratum; sizes >= 0")
    n = int(min(n, sizes.sum()))
    alloc = np.minimum(sizes, minimum)
    if alloc.sum() > n:  # fewer reviews than the minimums: one at a time, largest strata first
        alloc = np.zeros_like(sizes)
        order = np.argsort(-sizes, kind="stable")
        while alloc.sum() < n:
            for i in order:
                if alloc.sum() < n and alloc[i] < sizes[i]:
                    alloc[i] += 1
        return alloc
    weight = sizes * np.maximum(spreads, 0)
    while True:  # the rest by weight N_h s_h; a full stratum drops out; each round hands out >= 1
        rest, room = n - alloc.sum(), sizes - alloc
        if rest <= 0 or not (room > 0).any():
            return alloc
        w = np.where(room > 0, weight, 0.0)
        if w.sum() <= 0:
            w = np.where(room > 0, room, 0).astype(float)
        share = w / w.sum() * rest
        add = np.minimum(np.floor(share), room).astype(int)
        if add.sum() == 0:
            add[int(np.argmax(np.where(room > 0, share, -1)))] = 1
        alloc = alloc + add


def active_probabilities(uncertainty, n: float, *, uniform_share: float = 0.2) -> np.ndarray:
    """Inclusion probabilities for active review: proportional to the metric's uncertainty, mixed with uniform.

    ``pi_i = (1 - t) * n u_i / sum(u) + t * n / N`` (``t`` = ``uniform_share``), then capped at 1 with
    the excess handed to the others, so that ``sum(pi) = n`` (the expected number of reviews).  The
    uniform share keeps every ``pi_i`` away from 0, which bounds the inverse weights.

    Parameters
    ----------
    uncertainty : array-like of float, shape (N,)
        ``u_i >= 0``: how unsure the metric is on record i (``sqrt(p (1 - p))`` of a judge's probability
        ``p``, the spread of the human label seen in the record's stratum ...).
    n : float
        Expected reviews, ``0 < n <= N``.
    uniform_share : float
        In [0, 1]; 1 is uniform sampling.

    Returns
    -------
    numpy.ndarray, shape (N,)

    References
    ----------
    Zrnic & Candès (2024), "Active statistical inference", ICML, sec. 3 and 5 (uncertainty-proportional
    sampling mixed with the uniform rule).
    """
    u = np.asarray(uncertainty, dtype=float).ravel()
    big_n = u.size
    if big_n == 0 or not 0 < n <= big_n:
        raise ValueError("n must be in (0, number of records]")
    if (u < 0).any() or not np.all(np.isfinite(u)):
        raise ValueError("uncertainty must be finite and >= 0")
    if not 0 <= uniform_share <= 1:
        raise ValueError("uniform_share must be in [0, 1]")
    base = np.full(big_n, n / big_n)
    pi = (1 - uniform_share) * (n * u / u.sum() if u.sum() > 0 else base) + uniform_share * base
    for _ in range(big_n):
        over = pi > 1
        if not over.any():
            break
        excess = (pi[over] - 1).sum()
        pi[over] = 1
        free = pi < 1
        pi[free] += excess * pi[free] / pi[free].sum()
    return np.minimum(pi, 1.0)
