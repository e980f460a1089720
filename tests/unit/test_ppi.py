"""Prediction-powered inference (evaluators.metrics.ppi): equal to ppi-python, by hand, and its coverage."""

from __future__ import annotations

import numpy as np
import ppi_py  # test-only oracle (requirements-dev.txt): ppi-python, the authors' reference implementation
import pytest

from evaluators.metrics.ppi import classical_mean, power_tuning, ppi_mean, ppi_mean_batch


def test_by_hand_plain_ppi():
    # y = [1, 0, 1, 1], yhat = [1, 0, 0, 1], unlabeled yhat = [1, 1, 0, 1, 0, 1]; lam = 1:
    # imputed mean 4/6, rectifier mean(y - yhat) = 1/4 -> estimate 2/3 + 1/4 = 11/12
    # var0(unlabeled) = 2/3 * 1/3 = 2/9 over N = 6; rectifier [0, 0, 1, 0]: var0 = 3/16 over n = 4
    # se = sqrt(2/54 + 3/64)
    est = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1], lam=1)
    se = np.sqrt(2 / 54 + 3 / 64)
    z = 1.959963984540054
    assert est.estimate == pytest.approx(11 / 12)
    assert (est.std_error, est.ci_low, est.ci_high) == pytest.approx((se, 11 / 12 - z * se, 11 / 12 + z * se))
    # lam = 0 is the human-only (classical) estimate: mean 3/4, se = sqrt(3/16 / 4)
    zero = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1], lam=0)
    human = classical_mean([1, 0, 1, 1])
    assert zero.estimate == human.estimate == 0.75
    assert zero.ci_low == pytest.approx(human.ci_low) and human.std_error == pytest.approx(np.sqrt(3 / 64))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("lam", [None, 1.0, 0.3])
def test_equals_ppi_python(seed, lam):
    rng = np.random.default_rng(seed)
    n, big_n = 40 + 30 * seed, 500 + 100 * seed
    y = (rng.random(n) < 0.6).astype(float)
    yhat = np.where(rng.random(n) < 0.15, 1 - y, y)       # an automatic verdict wrong 15% of the time
    yu = (rng.random(big_n) < 0.62).astype(float)
    if seed % 2:                                            # and a graded score (token F1-like) in [0, 1]
        yhat, yu = np.clip(yhat * 0.8 + rng.random(n) * 0.2, 0, 1), np.clip(yu * 0.8 + rng.random(big_n) * 0.2, 0, 1)
    for level in (0.9, 0.95):
        ours = ppi_mean(y, yhat, yu, confidence_level=level, lam=lam)
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=1 - level, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=lam)
        assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
        assert (ours.ci_low, ours.ci_high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
    human = classical_mean(y)
    lo, hi = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert (human.ci_low, human.ci_high) == pytest.approx((float(lo), float(hi)), abs=1e-12)


def test_power_tuning_edges():
    # a constant automatic metric carries nothing: lam 0, the human-only interval
    assert power_tuning([1, 0, 1], [1, 1, 1], [1, 1]) == 0.0
    # a perfect metric on a large unlabeled set: lam = cov / ((1 + n/N) var) -> close to 1
    y = np.array([1, 0] * 50, dtype=float)
    assert power_tuning(y, y, np.array([1, 0] * 5000, dtype=float)) == pytest.approx(1 / (1 + 100 / 10000), abs=0.01)
    with pytest.raises(ValueError, match="same length"):
        ppi_mean([1, 0], [1], [1, 0])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1, np.nan], [1, 0], [1, 0])
    with pytest.raises(ValueError, match="confidence_level"):
        classical_mean([1, 0], confidence_level=1.0)


def test_coverage_simulation():
    # Known truth: every record's human label is right (1) with probability 0.7 (the true accuracy);
    # the automatic metric agrees with the human label except with a known error rate of 10%.
    # 2,000 seeded runs of 200 reviewed + 2,000 unreviewed records, all at once (vectorised).
    rng = np.random.default_rng(2023)
    runs, n, big_n, accuracy, error_rate = 2000, 200, 2000, 0.7, 0.10
    human = (rng.random((runs, n + big_n)) < accuracy).astype(float)
    metric = np.where(rng.random((runs, n + big_n)) < error_rate, 1 - human, human)
    y, yhat, yu = human[:, :n], metric[:, :n], metric[:, n:]
    est, lo, hi, se, lam = ppi_mean_batch(y, yhat, yu, confidence_level=0.95)
    covered = np.mean((lo <= accuracy) & (accuracy <= hi))
    assert 0.93 <= covered <= 0.97, covered
    assert covered == pytest.approx(0.949, abs=1e-9)  # this seed's figure (1,898 of 2,000 runs)
    # the human-only interval is wider (the metric tightens it) and covers about as well: the normal
    # (Wald) interval of 0/1 labels under-covers a little (Brown, Cai & DasGupta 2001): 0.9265 here
    z = 1.959963984540054
    h_mean, h_se = y.mean(1), y.std(1) / np.sqrt(n)
    assert 0.91 <= np.mean(np.abs(h_mean - accuracy) <= z * h_se) <= 0.97
    assert np.median(hi - lo) < 0.8 * np.median(2 * z * h_se)
    # the metric alone is biased: its mean is 0.7 * 0.9 + 0.3 * 0.1 = 0.66, and its own interval misses 0.7
    assert metric.mean() == pytest.approx(0.66, abs=0.002)
    # one row of the batch equals the single-run function
    one = ppi_mean(y[7], yhat[7], yu[7])
    assert (one.estimate, one.ci_low, one.ci_high, one.lam) == pytest.approx((est[7], lo[7], hi[7], lam[7]))
