"""Stratified and active prediction-powered estimates (evaluators.metrics.ppi): by hand, against ppi-python
in the uniform case, their coverage and their width where the metric errs in one stratum (issue 29).

The full coverage run (1,000 simulated runs per design) is ``bench/ppi_designs_coverage.py``; here the same
simulation runs 300 times, so the tolerance is 3 binomial sds of a 95% coverage over 300 runs
(sqrt(0.95 * 0.05 / 300) = 0.0126: 0.95 +- 0.038).  The 1,000- and 20,000-run figures of each design are in
the bench's docstring.
"""

from __future__ import annotations

import numpy as np
import ppi_py  # test-only oracle (requirements-dev.txt)
import pytest

from bench.ppi_designs_coverage import N_REVIEWS, simulate
from evaluators.metrics.ppi import (
    active_ppi_mean,
    active_probabilities,
    loo_power_tuning,
    neyman_allocation,
    ppi_mean,
    stratified_ppi_mean,
)


def _data(seed=0, n=80, big_n=600):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.6).astype(float)
    yhat = np.where(rng.random(n) < 0.15, 1 - y, y)
    yu = (rng.random(big_n) < 0.62).astype(float)
    return y, yhat, yu


def test_one_stratum_is_uniform_ppi_as_ppi_python():
    y, yhat, yu = _data()
    plain = ppi_mean(y, yhat, yu)
    # with the same lam, one stratum is uniform PPI (ppi-python's point estimate)
    one = stratified_ppi_mean(y, yhat, ["all"] * y.size, yu, ["all"] * yu.size, lam=plain.lam)
    point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yu))[0])
    assert one.estimate == pytest.approx(plain.estimate, abs=1e-12) == pytest.approx(point, abs=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05)
    assert (plain.ci_low, plain.ci_high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
    # the stratified interval takes the rectifier's variance with n - 1 (small strata): a little wider
    rect = y - plain.lam * yhat
    se = np.sqrt(plain.std_error ** 2 + rect.var() / y.size / (y.size - 1))
    assert one.std_error == pytest.approx(se, rel=1e-12) and one.width > plain.width
    # tuned (the default), each record's lam is PPI++'s on the other reviewed records (leave-one-out cross-fitting)
    n, big_n = y.size, yu.size
    lam_i = []
    for i in range(n):
        yo, fo = np.delete(y, i), np.delete(yhat, i)
        cov = np.mean((yo - yo.mean()) * (fo - fo.mean()))
        lam_i.append(np.clip(cov / ((1 + n / big_n) * np.concatenate([fo, yu]).var(ddof=1)), 0, 1))
    lam_i = np.array(lam_i)
    assert loo_power_tuning(y, yhat, yu) == pytest.approx(lam_i, abs=1e-12)
    tuned = stratified_ppi_mean(y, yhat, ["all"] * y.size, yu, ["all"] * yu.size)
    rect = y - lam_i * yhat
    assert tuned.estimate == pytest.approx(lam_i.mean() * yu.mean() + rect.mean(), abs=1e-12)
    assert tuned.std_error == pytest.approx(np.sqrt(lam_i.mean() ** 2 * yu.var() / big_n + rect.var(ddof=1) / n),
                                            rel=1e-12)
    assert tuned.lam == pytest.approx(lam_i.mean()) and abs(tuned.lam - plain.lam) < 0.05


def test_stratified_by_hand():
    # stratum a: y = [1, 0], yhat = [1, 1], unlabeled [1, 1] (N_a = 4); stratum b: y = yhat = [1, 1, 0, 0],
    # unlabeled [0, 1, 1, 0] (N_b = 8).  lam = 1: a = mean(yhat_u) + mean(y - yhat) = 1 - 1/2 = 1/2;
    # b = 1/2 + 0 = 1/2; W = (4/12, 8/12): estimate 1/2
    e = stratified_ppi_mean([1, 0, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0], list("aabbbb"), [1, 1, 0, 1, 1, 0], list("aabbbb"),
                            lam=1)
    assert e.estimate == pytest.approx(0.5)
    # variances: a: var0(yhat_u) = 0, var0(y - yhat) = 1/4 over n = 2, then x 2 / 1 -> 1/4; b: var0([0,1,1,0]) / 4 = 1/16,
    # rectifier 0; se^2 = (1/3)^2 * 1/4 + (2/3)^2 * 1/16
    assert e.std_error == pytest.approx(np.sqrt(1 / 36 + 4 / 144))
    with pytest.raises(ValueError, match="stratum 'c'"):
        stratified_ppi_mean([1, 0, 1], [1, 1, 1], list("aac"), [1], ["a"])


def test_active_by_hand_and_uniform_probabilities():
    # lam = 1, pi = 1/2 everywhere, records 0 and 2 reviewed: terms f_i + 2 (y_i - f_i) where reviewed
    f = np.array([1.0, 0.0, 1.0, 0.0])
    e = active_ppi_mean(f, [0.5] * 4, [True, False, True, False], [0.0, np.nan, 1.0, np.nan], lam=1)
    terms = np.array([1 + 2 * (0 - 1), 0, 1, 0])
    assert e.estimate == pytest.approx(terms.mean()) and e.std_error == pytest.approx(terms.std(ddof=1) / 2)
    with pytest.raises(ValueError, match="inclusion"):
        active_ppi_mean(f, [0.0] * 4, [True] * 4, f)


def test_allocation_and_probabilities():
    assert neyman_allocation(200, [1000, 9000], [0.49, 0.14]).tolist() == [56, 144]  # N_h s_h: 490 vs 1260
    assert neyman_allocation(3, [5, 5, 5], [1, 1, 1]).tolist() == [1, 1, 1]
    assert neyman_allocation(30, [10, 1000], [1, 0]).tolist() == [10, 20]  # a full stratum hands the rest on
    pi = active_probabilities(np.r_[np.full(100, 0.49), np.full(900, 0.14)], 50)
    assert pi.sum() == pytest.approx(50) and 0 < pi.min() < pi.max() <= 1
    assert np.allclose(active_probabilities(np.ones(10), 5), 0.5)


@pytest.fixture(scope="module")
def simulated():
    return simulate(300, seed=7)


@pytest.mark.parametrize("design", ["uniform", "stratified", "active"])
def test_coverage_of_the_95_percent_intervals(simulated, design):
    tolerance = 3 * np.sqrt(0.95 * 0.05 / 300)
    assert abs(simulated[design]["coverage"] - 0.95) <= tolerance, simulated


def test_errors_in_one_stratum_give_narrower_intervals_than_uniform_ppi(simulated):
    # n = 200 reviews; the metric errs on 45% of the 10% uncertain records and 2% of the rest
    assert N_REVIEWS == 200
    base = simulated["uniform"]["width"]
    assert simulated["stratified"]["width"] <= 0.8 * base, simulated
    assert simulated["active"]["width"] <= 0.85 * base, simulated


def test_the_acceptance_figures_on_1000_seeded_runs():
    """Issue 29's acceptance as written: 1,000 seeded runs (seed 0, the bench's default and the first row of its
    docstring), the stratified and active 95% intervals cover in 94-96% of runs, and at n = 200 each is at most
    0.8x the mean width of uniform PPI.  The 94-96% band is +-1.45 binomial sds at 1,000 runs (sd 0.0069): other
    seeds can leave it by chance (seed 1: active 0.965; 20,000 runs on seed 100: 0.950 and 0.947, bench)."""
    result = simulate(1000, seed=0)
    base = result["uniform"]["width"]
    for design in ("stratified", "active"):
        assert 0.94 <= result[design]["coverage"] <= 0.96, result
        assert result[design]["width"] <= 0.8 * base, result
    # the figures the bench's docstring records for seed 0 (coverage 0.945 / 0.943 / 0.949; 0.78x and 0.80x)
    assert [result[d]["coverage"] for d in ("uniform", "stratified", "active")] == [0.945, 0.943, 0.949]
