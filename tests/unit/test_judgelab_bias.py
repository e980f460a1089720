"""The judge lab's bias panel: length bias (least squares + bootstrap, against lstsq and a bootstrap written
here; power and coverage by seeded simulation through the stub judge), position bias (swap test), self-
preference and drift."""

import numpy as np
import pytest
from scipy.stats import binomtest

from evaluators.judgelab.bias import drift, length_bias, position_bias, self_preference
from tests.helpers.judge_stub import StubJudge, scores_array


def _items(seed, n=200):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.5).astype(int)
    lengths = rng.uniform(100, 500, n)  # characters; the stub's centre is 300
    return rng, labels, lengths


def test_slope_equals_least_squares_and_interval_equals_a_bootstrap_written_here():
    rng, labels, lengths = _items(1, 120)
    scores = scores_array(StubJudge(0.8, 0.7, length_bias=0.1), labels, lengths, rng)
    r = length_bias(scores, lengths, labels, n_resamples=300, seed=4)
    design = np.column_stack([np.ones(120), lengths / 100, labels])
    assert r.slope == pytest.approx(np.linalg.lstsq(design, scores, rcond=None)[0][1], abs=1e-10)
    boot = np.random.default_rng(4)
    slopes = []
    for _ in range(300):
        idx = boot.integers(0, 120, 120)
        slopes.append(np.linalg.lstsq(design[idx], scores[idx], rcond=None)[0][1])
    low, high = np.percentile(slopes, [2.5, 97.5])
    assert (r.ci_low, r.ci_high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert r.n == 120 and not r.small_sample and "human label" in r.method


def test_slope_by_hand_and_degenerate_inputs():
    # scores rise by exactly 0.05 per 100 characters within each label, label adds 0.5:
    # score = 0.2 + 0.05 * length / 100 + 0.5 * label  -> slope 0.05 exactly, every resample too
    lengths = np.array([100, 200, 300, 400, 150, 250, 350, 450], float)
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    scores = 0.2 + 0.05 * lengths / 100 + 0.5 * labels
    r = length_bias(scores, lengths, labels, n_resamples=200)
    assert r.slope == pytest.approx(0.05) and r.ci_low == pytest.approx(0.05) and r.ci_high == pytest.approx(0.05)
    assert r.small_sample
    same = length_bias([1, 0, 1], [50, 50, 50], [1, 0, 1])
    assert same.slope is None and same.ci_low is None and not same.excludes_zero
    with pytest.raises(ValueError, match="one value per item"):
        length_bias([1, 0], [1, 2, 3], [1, 0, 1])


def _excluded_and_covered(bias, seeds):
    judge = StubJudge(sensitivity=0.8, specificity=0.8, length_bias=bias)
    excluded = covered = 0
    for seed in seeds:
        rng, labels, lengths = _items(seed)
        r = length_bias(scores_array(judge, labels, lengths, rng), lengths, labels, n_resamples=1000, seed=seed)
        excluded += r.excludes_zero
        covered += r.ci_low <= 0 <= r.ci_high
    return excluded / len(seeds), covered / len(seeds)


def test_an_injected_length_bias_is_found_and_a_clean_judge_is_not_accused():
    # 200 seeds x 200 items (lengths 100-500 characters), 1,000 resamples each: about 4 s per judge.
    # +0.1 per 100 characters: slope SE about 0.45 / (1.15 * sqrt(200)) = 0.028, so the interval excludes 0
    # nearly always; a clean judge's 95% interval covers the true slope 0 in about 95% of seeds.
    excluded, _ = _excluded_and_covered(0.1, range(200))
    assert excluded >= 0.95
    _, covered = _excluded_and_covered(0.0, range(200, 400))
    assert covered >= 0.95


def test_position_bias_swap_test_by_hand():
    ids = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10"]
    shown_ab = ["a", "a", "b", "tie", "a", "a", "a", "b", "a", "b"]
    shown_ba = ["a", "b", "a", "tie", "b", "b", "a", "b", "tie", "a"]
    # consistent: p1 (a, a), p4 (tie, tie), p7, p8 -> 4; flipped: p2, p3, p5, p6, p9, p10 -> 6 of 10
    # to the first position (a then b): p2, p5, p6 -> 3; to the second (b then a): p3, p10 -> 2; p9 a tie
    r = position_bias(ids, shown_ab, shown_ba)
    assert (r.n_pairs, r.n_flipped, r.flip_rate) == (10, 6, 0.6)
    assert r.flipped_ids == ("p10", "p2", "p3", "p5", "p6", "p9")
    assert (r.first_position, r.second_position, r.first_position_share) == (3, 2, 0.6)
    ci = binomtest(6, 10).proportion_ci(method="wilson")
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high)) and r.small_sample
    with pytest.raises(ValueError, match="'a', 'b' or 'tie'"):
        position_bias(["x"], ["left"], ["a"])


def test_position_bias_through_the_stub():
    # a judge that takes the first-shown answer 30% of the time, otherwise the better one with probability 0.9
    stub = StubJudge(first_position=0.3, pair_accuracy=0.9, seed=8)
    ids = [f"pair{i}" for i in range(400)]
    better = ["a" if i % 2 else "b" for i in range(400)]
    r = position_bias(ids, [stub.pick(i, b, "ab") for i, b in zip(ids, better)],
                      [stub.pick(i, b, "ba") for i, b in zip(ids, better)])
    # P(flip) = P(the two orders pick different answers) = 2 x P(pick a | ab) x P(pick b | ba) ... with
    # P(first) = .3 + .7 x (.9 or .1): for better = a: P(a | ab) = .3 + .63 = .93, P(a | ba) = .7 x .9 = .63 ->
    # P(flip) = .93 x .37 + .07 x .63 = .3882; the same for better = b by symmetry
    assert r.ci_low <= 0.3882 <= r.ci_high
    assert r.first_position_share > 0.8  # nearly every flip goes to the answer shown first
    clean = StubJudge(first_position=0.0, pair_accuracy=1.0)
    r0 = position_bias(ids, [clean.pick(i, b, "ab") for i, b in zip(ids, better)],
                       [clean.pick(i, b, "ba") for i, b in zip(ids, better)])
    assert r0.n_flipped == 0 and r0.ci_low == 0.0 and r0.first_position_share is None


def test_self_preference_by_hand_and_by_bootstrap():
    # own family: judge - human = 1, 0, 1, 0 -> 0.5 ; others: 0, 0, -1, 0, 0, 1 -> 0
    judge = [1, 1, 1, 0, 1, 0, 0, 0, 0, 1]
    human = [0, 1, 0, 0, 1, 0, 1, 0, 0, 0]
    own = [True] * 4 + [False] * 6
    r = self_preference(judge, human, own, n_resamples=300, seed=2)
    assert (r.own_gap, r.other_gap, r.difference) == (0.5, 0.0, 0.5)
    assert (r.n_own, r.n_other, r.small_sample) == (4, 6, True)
    g, o = np.array(judge) - np.array(human), np.array(own)
    rng = np.random.default_rng(2)
    diffs = []
    for _ in range(300):
        idx = rng.integers(0, 10, 10)
        gi, oi = g[idx], o[idx]
        diffs.append(gi[oi].mean() - gi[~oi].mean() if oi.any() and (~oi).any() else np.nan)
    diffs = np.array(diffs)
    low, high = np.percentile(diffs[~np.isnan(diffs)], [2.5, 97.5])
    assert (r.ci_low, r.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert self_preference([1], [1], [True]).difference is None
    with pytest.raises(ValueError, match="booleans"):
        self_preference([1, 0], [1, 0], ["gpt", "other"])


def test_drift_between_two_versions_on_anchor_items():
    before = {"a1": 1, "a2": 1, "a3": 0, "a4": 0, "a5": 1, "a6": 0}
    after = {"a1": 1, "a2": 0, "a3": 1, "a4": 1, "a5": 1, "x": 1}
    r = drift(before, after, anchor_ids=["a1", "a2", "a3", "a4", "a5", "a6"])
    # a6 has no new verdict; moved: a2 (1 -> 0), a3 and a4 (0 -> 1): 3 of 5
    assert r.n_anchors == 5 and r.missing_ids == ("a6",)
    assert (r.moved_ids, r.up_ids, r.down_ids, r.moved_share) == (("a2", "a3", "a4"), ("a3", "a4"), ("a2",), 0.6)
    # McNemar: old-only right 1 (a2), new-only right 2 (a3, a4): p = binomtest(1, 3).pvalue = 1.0
    assert (r.mcnemar.only_a, r.mcnemar.only_b, r.mcnemar.p_value) == (1, 2, 1.0)
    ci = binomtest(3, 5).proportion_ci(method="wilson")
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    with pytest.raises(ValueError, match="must be 0 or 1"):
        drift({"a": 1}, {"a": "yes"})
