"""Corrected scores: the bias-adjusted accuracy of Lee et al. (2025) against its published formula and by
simulation, beside PPI, the raw judge score and the human-only estimate."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from evaluators.judgelab.corrected import bias_adjusted_accuracy, bias_adjusted_from_verdicts, corrected_scores
from evaluators.metrics.ppi import classical_mean, ppi_mean
from evaluators.metrics.statistics import wilson_interval


def _published(p, n, q0, m0, q1, m1, level):
    """Lee et al. (2025), arXiv:2511.21140, eq. 3 and eq. 6, written out here."""
    z = norm.ppf(1 - (1 - level) / 2)
    theta_hat = min(1, max(0, (p + q0 - 1) / (q0 + q1 - 1)))
    pt, q0t, q1t = (n * p + z ** 2 / 2) / (n + z ** 2), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    nt, m0t, m1t = n + z ** 2, m0 + 2, m1 + 2
    th = (pt + q0t - 1) / (q0t + q1t - 1)
    d = 2 * z ** 2 * (-(1 - th) * q0t * (1 - q0t) / m0t + th * q1t * (1 - q1t) / m1t)
    se = math.sqrt(pt * (1 - pt) / nt + (1 - th) ** 2 * q0t * (1 - q0t) / m0t + th ** 2 * q1t * (1 - q1t) / m1t) \
        / (q0t + q1t - 1)
    return theta_hat, min(1, max(0, th + d - z * se)), min(1, max(0, th + d + z * se))


def test_the_published_example_and_formula():
    # The example of the reference code's README (p = 0.4, n = 1000, q0 = 0.7, q1 = 0.9, m0 = m1 = 200,
    # alpha = 0.05): theta_hat = (0.4 + 0.7 - 1) / (0.7 + 0.9 - 1) = 0.1 / 0.6 = 1/6; the interval printed by
    # llm_judge_reporting.confidence_interval (run once outside the project) is (0.0563507248, 0.2627330258).
    a = bias_adjusted_accuracy(0.4, 1000, 0.7, 200, 0.9, 200)
    assert a.estimate == pytest.approx(1 / 6, abs=1e-12)
    assert (a.ci_low, a.ci_high) == (pytest.approx(0.05635072484160894, abs=1e-12),
                                     pytest.approx(0.2627330257859588, abs=1e-12))
    # a second fixture at level 0.90, against the formula written above and the reference code's output
    b = bias_adjusted_accuracy(0.62, 50, 0.8, 13, 0.85, 17, confidence_level=0.90)
    est, low, high = _published(0.62, 50, 0.8, 13, 0.85, 17, 0.90)
    assert b.estimate == pytest.approx(est, abs=1e-12) == pytest.approx(0.6461538461538461, abs=1e-12)
    assert b.ci_low == pytest.approx(low, abs=1e-12) == pytest.approx(0.37979458084889084, abs=1e-12)
    assert b.ci_high == pytest.approx(high, abs=1e-12) == pytest.approx(0.9353786433778534, abs=1e-12)
    # clipping: p below 1 - q0 gives a negative raw correction, clipped to 0
    c = bias_adjusted_accuracy(0.1, 100, 0.8, 50, 0.9, 50)
    assert c.estimate == 0.0 and c.ci_low == 0.0


def test_a_judge_no_better_than_chance_gives_no_estimate_and_bad_inputs_are_refused():
    a = bias_adjusted_accuracy(0.5, 100, 0.5, 50, 0.4, 50)
    assert a.estimate is None and a.ci_low is None and "no better than chance" in a.note
    with pytest.raises(ValueError, match="proportion"):
        bias_adjusted_accuracy(1.2, 100, 0.8, 50, 0.9, 50)
    with pytest.raises(ValueError, match="positive integer"):
        bias_adjusted_accuracy(0.5, 0, 0.8, 50, 0.9, 50)
    with pytest.raises(ValueError, match="verdicts 0"):
        bias_adjusted_from_verdicts([1, 0.5], [1, 0], [1, 0])
    with pytest.raises(ValueError, match="wrong: 0, right: 3"):
        bias_adjusted_from_verdicts([1, 0], [1, 1, 1], [1, 0, 1])


def test_from_verdicts_counts_by_hand():
    # target: 7 of 10 called right -> p = 0.7
    # calibration: people wrong on 4 items, the judge calls 3 of them wrong -> q0 = 3/4, m0 = 4;
    # people right on 6 items, the judge calls 5 right -> q1 = 5/6, m1 = 6
    # theta_hat = (0.7 + 0.75 - 1) / (0.75 + 5/6 - 1) = 0.45 / (7/12) = 27/35
    a = bias_adjusted_from_verdicts([1] * 7 + [0] * 3, [0, 0, 0, 0, 1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1, 1, 1, 0])
    assert (a.p, a.n, a.q0, a.m0, a.q1, a.m1) == (0.7, 10, 0.75, 4, pytest.approx(5 / 6), 6)
    assert a.estimate == pytest.approx(27 / 35)
    assert (a.ci_low, a.ci_high) == tuple(pytest.approx(x) for x in _published(0.7, 10, 0.75, 4, 5 / 6, 6, 0.95)[1:])


def test_the_four_estimates_side_by_side():
    rng = np.random.default_rng(5)
    theta, q0, q1 = 0.55, 0.8, 0.9
    yt = (rng.random(800) < theta).astype(int)
    vt = np.where(yt == 1, rng.random(800) < q1, rng.random(800) >= q0).astype(int)
    yc = (rng.random(150) < theta).astype(int)
    vc = np.where(yc == 1, rng.random(150) < q1, rng.random(150) >= q0).astype(int)
    s = corrected_scores(vt, yc, vc)
    assert [e.name for e in s.estimates] == ["raw_judge", "bias_adjusted", "prediction_powered", "human_only"]
    raw = s.get("raw_judge")
    assert raw.estimate == vt.mean() and (raw.ci_low, raw.ci_high) == wilson_interval(int(vt.sum()), 800)
    pp, hm = ppi_mean(yc, vc, vt), classical_mean(yc)
    assert (s.get("prediction_powered").estimate, s.get("prediction_powered").ci_low) == (pp.estimate, pp.ci_low)
    assert (s.get("human_only").estimate, s.get("human_only").ci_high) == (hm.estimate, hm.ci_high)
    adj = s.get("bias_adjusted")
    assert adj.estimate == s.adjusted.estimate == bias_adjusted_from_verdicts(vt, yc, vc).estimate
    # the raw score is pulled toward the judge's errors: E[p] = .55 * .9 + .45 * .2 = .585 > theta
    assert raw.estimate > theta and adj.ci_low <= theta <= adj.ci_high


def _simulate(theta, q0, q1, n, m, runs, seed):
    """``runs`` seeded evaluations: n target items and m calibration items (base rate theta), a judge with
    specificity q0 and sensitivity q1.  Returns the adjusted intervals and the naive ones."""
    rng = np.random.default_rng(seed)
    adjusted, test_only = [], []
    for _ in range(runs):
        yt = (rng.random(n) < theta).astype(int)
        vt = np.where(yt == 1, rng.random(n) < q1, rng.random(n) >= q0).astype(int)
        yc = (rng.random(m) < theta).astype(int)
        vc = np.where(yc == 1, rng.random(m) < q1, rng.random(m) >= q0).astype(int)
        a = bias_adjusted_from_verdicts(vt, yc, vc)
        adjusted.append((a.ci_low, a.ci_high))
        # the same correction with the test set's uncertainty only (calibration taken as exact): too narrow
        se = math.sqrt(a.p * (1 - a.p) / n) / (a.q0 + a.q1 - 1)
        test_only.append((a.estimate - 1.96 * se, a.estimate + 1.96 * se))
    return np.array(adjusted), np.array(test_only)


def test_the_adjusted_interval_covers_the_true_accuracy_in_95_percent_of_1000_runs():
    # The setting of the paper's Monte Carlo figure (q0 = 0.7, q1 = 0.9), theta = 0.6, n = 1000 target
    # items, a calibration set of m = 200 labelled items; 1,000 seeded runs (about 0.3 s).
    # bench/judgelab.py repeats it with 10,000 runs on a grid of settings.
    theta = 0.6
    adjusted, test_only = _simulate(theta, 0.7, 0.9, 1000, 200, 1000, seed=0)
    coverage = np.mean((adjusted[:, 0] <= theta) & (theta <= adjusted[:, 1]))
    assert 0.94 <= coverage <= 0.96
    # the test can fail: ignoring the calibration set's uncertainty covers far less often
    naive = np.mean((test_only[:, 0] <= theta) & (theta <= test_only[:, 1]))
    assert naive < 0.85


def test_corrected_for_version_uses_one_side_and_leaves_calibration_items_out_of_the_target():
    from evaluators.judgelab import HumanLabel, Split, corrected_for_version

    labels = [HumanLabel("a", 1), HumanLabel("b", 0), HumanLabel("c", 1), HumanLabel("d", 0), HumanLabel("e", 1)]
    split = Split(0, 0.5, (("a", "test"), ("b", "test"), ("c", "test"), ("d", "test"), ("e", "dev")))
    verdicts = {"a": 1, "b": 0, "c": 0, "d": 1, "e": 1}
    target = {"a": 1, "x": 1, "y": 0, "z": 1}  # "a" is a calibration item: left out of the target
    s = corrected_for_version(labels, split, verdicts, target)
    # test side: people right on a, c (judge 1, 0) -> q1 = 1/2, m1 = 2; wrong on b, d (judge 0, 1) -> q0 = 1/2
    # target x, y, z -> p = 2/3, n = 3; q0 + q1 = 1: no better than chance, no estimate
    a = s.adjusted
    assert (a.p, a.n, a.q0, a.m0, a.q1, a.m1) == (pytest.approx(2 / 3), 3, 0.5, 2, 0.5, 2)
    assert a.estimate is None and s.get("human_only").estimate == 0.5
    with pytest.raises(ValueError, match="no target verdict"):
        corrected_for_version(labels, split, verdicts, {"a": 1})
