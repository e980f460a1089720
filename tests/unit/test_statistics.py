"""Bootstrap intervals and paired tests (evaluators.metrics.statistics) against scipy and statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaluators.metrics import statistics as st


def scipy_ci(x, seed, level=0.95, n=10_000):
    res = stats.bootstrap((np.asarray(x, float),), np.mean, n_resamples=n, confidence_level=level,
                          method="percentile", random_state=np.random.default_rng(seed), vectorized=True)
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("kind", ["binary", "f1_like", "continuous"])
def test_interval_equals_scipy_percentile_bootstrap_within_monte_carlo_error(kind):
    rng = np.random.default_rng(7)
    n = 2000
    x = {"binary": rng.integers(0, 2, n).astype(float),               # exact match: multinomial path (2 values)
         "f1_like": np.round(rng.beta(2, 3, n) * 12) / 12,            # few distinct values: multinomial path
         "continuous": rng.beta(2, 3, 400)}[kind]                      # all distinct: index path
    ours = st.bootstrap_ci(x, seed=1)
    low, high = scipy_ci(x, seed=1)
    # both estimate the same percentiles of the same distribution from 10,000 resamples; the
    # Monte Carlo error of a 2.5% quantile is a small fraction of the standard error of the mean
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert ours.ci_low == pytest.approx(low, abs=0.1 * se) and ours.ci_high == pytest.approx(high, abs=0.1 * se)
    assert ours.estimate == pytest.approx(x.mean()) and ours.n == x.size
    assert "n_resamples=10000" in ours.signature and "seed=1" in ours.signature


def test_seeded_and_hand_checked_cases():
    x = [0, 1, 1, 0, 1]
    assert st.bootstrap_ci(x, seed=4) == st.bootstrap_ci(x, seed=4)
    same = st.bootstrap_ci([0.5] * 50)
    assert (same.ci_low, same.estimate, same.ci_high) == (0.5, 0.5, 0.5)  # no spread: a point
    # GT against itself: every paired difference is 0
    cmp = st.paired_bootstrap([0.2, 0.9, 1.0], [0.2, 0.9, 1.0])
    assert (cmp.delta, cmp.ci_low, cmp.ci_high, cmp.p_value, cmp.tied) == (0.0, 0.0, 0.0, 1.0, 3)
    with pytest.raises(ValueError):
        st.bootstrap_ci([])
    with pytest.raises(ValueError):
        st.bootstrap_ci([0.1, float("nan")])
    with pytest.raises(ValueError):
        st.paired_bootstrap([1, 0], [1])


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    p, n, runs = 0.3, 300, 400
    covered = 0
    for i in range(runs):
        x = (rng.random(n) < p).astype(float)
        ci = st.bootstrap_ci(x, n_resamples=2000, seed=i)
        covered += ci.ci_low <= p <= ci.ci_high
    # 400 runs: a binomial(400, 0.95) count lies in [366, 394] with probability > 0.999
    assert 366 <= covered <= 394, covered


def test_mcnemar_equals_statsmodels_exact():
    from statsmodels.stats.contingency_tables import mcnemar

    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 300)
    b = np.where(rng.random(300) < 0.8, a, 1 - a)
    ours = st.mcnemar(a, b)
    table = [[ours.both, ours.only_a], [ours.only_b, ours.neither]]
    assert ours.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert ours.both + ours.only_a + ours.only_b + ours.neither == 300
    # hand case: 10 discordant pairs, 1 vs 9 -> p = 2 * (C(10,0) + C(10,1)) / 2**10 = 22 / 1024
    a = [1] + [0] * 9 + [1] * 5
    b = [0] + [1] * 9 + [1] * 5
    r = st.mcnemar(a, b)
    assert (r.only_a, r.only_b, r.both) == (1, 9, 5) and r.p_value == pytest.approx(22 / 1024)
    assert r.odds_ratio == 9.0
    with pytest.raises(ValueError):
        st.mcnemar([0.5], [1])


def test_permutation_and_paired_bootstrap_agree_on_a_clear_and_a_null_difference():
    rng = np.random.default_rng(5)
    a = rng.random(400)
    better = np.clip(a + 0.1 + rng.normal(0, 0.05, 400), 0, 1)
    for test in (st.paired_bootstrap, st.approximate_randomization):
        assert test(a, better, n_resamples=2000).p_value < 0.001
    null = a[rng.permutation(400)]
    pr = st.approximate_randomization(a, null, n_resamples=2000)
    pb = st.paired_bootstrap(a, null, n_resamples=2000)
    assert pr.p_value > 0.05 and pb.p_value > 0.05
    assert pb.ci_low <= pb.delta <= pb.ci_high
    assert pr.won + pr.lost + pr.tied == 400


def test_approximate_randomization_p_value_by_hand():
    # one item, difference 1: a sign flip gives -1 (|.| = 1 >= 1), so every resample is a hit: p = 1
    assert st.approximate_randomization([0.0], [1.0], n_resamples=99).p_value == 1.0


def _pairs_and_matrix(seed=1, n=200):
    rng = np.random.default_rng(seed)
    y_true = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    y_pred = np.where(rng.random(n) < 0.7, y_true, rng.choice(3, n))
    counts = np.zeros((3, 3), int)
    np.add.at(counts, (y_true, y_pred), 1)
    return y_true, y_pred, counts


def test_classification_intervals_agree_with_scipy_bootstrap_on_pairs():
    from scipy.stats import bootstrap

    from evaluators.metrics.statistics import classification_intervals

    y_true, y_pred, counts = _pairs_and_matrix()
    ci = classification_intervals(counts, ["T", "F", "U"], n_resamples=10_000)
    for c, label in enumerate(["T", "F", "U"]):
        def f1(a, b, c=c):
            tp = np.sum((a == c) & (b == c))
            return 2 * tp / (np.sum(a == c) + np.sum(b == c))

        ref = bootstrap((y_true, y_pred), f1, paired=True, vectorized=False, method="percentile",
                        n_resamples=3000, random_state=0).confidence_interval
        # Monte Carlo tolerance: the bounds of two 95% percentile intervals from 3,000 / 10,000
        # resamples of the same distribution differ by ~0.01 here
        assert ci.f1_ci_low[label] == pytest.approx(ref.low, abs=0.03)
        assert ci.f1_ci_high[label] == pytest.approx(ref.high, abs=0.03)
    acc = bootstrap(((y_true == y_pred).astype(float),), np.mean, method="percentile", n_resamples=3000,
                    random_state=0).confidence_interval
    assert ci.accuracy_ci_low == pytest.approx(acc.low, abs=0.03)
    assert ci.accuracy_ci_high == pytest.approx(acc.high, abs=0.03)


def test_classification_intervals_of_a_perfect_classifier_are_points():
    from evaluators.metrics.statistics import classification_intervals

    ci = classification_intervals([[5, 0], [0, 3]], ["yes", "no"], n_resamples=500)
    # every resample is diagonal: F1 = 2 tp / (2 tp) = 1 for each class that appears
    assert ci.f1_ci_low == {"yes": 1.0, "no": 1.0} and ci.f1_ci_high == {"yes": 1.0, "no": 1.0}
    assert (ci.macro_f1_ci_low, ci.macro_f1_ci_high, ci.accuracy_ci_low) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        classification_intervals([[0, 0], [0, 0]], ["a", "b"])


def test_fact_check_report_carries_per_class_intervals():
    from evaluators.qa import QAConfig, evaluate_qa_file
    from tests.conftest import ROOT

    report = evaluate_qa_file(ROOT / "evaluators" / "demo" / "qa" / "factcheck_demo.jsonl", QAConfig(ci_resamples=2000))
    ci = report.classification_ci
    per_class = {m.label: m.f1 for m in report.classification.per_class}
    for label, f1 in per_class.items():
        assert ci.f1_ci_low[label] <= f1 <= ci.f1_ci_high[label]
    assert ci.macro_f1_ci_low <= report.classification.macro.f1 <= ci.macro_f1_ci_high
    assert "classification_ci" in report.to_dict()


def test_a_p_value_below_the_resolution_is_reported_as_a_bound():
    # every paired difference is +1 or +0.4: no resampled mean difference is <= 0, so the share
    # on the other side of 0 is 0 of R; the honest statement is p < 1 / (R + 1), not p = 0
    a, b = [0] * 30 + [.5] * 10, [1] * 30 + [.9] * 10
    pb = st.paired_bootstrap(a, b)
    assert pb.p_value == 1 / 10_001 and pb.p_value_is_bound and pb.n_resamples == 10_000
    assert 0 < pb.p_value <= 1  # the docstring's (0, 1]
    # the randomization test: |mean of sign-flipped d| >= 0.85 needs every sign +1 or every sign -1,
    # probability 2 / 2**40 per resample, so no hit in 10,000: p = (0 + 1) / 10,001, a bound too
    ar = st.approximate_randomization(a, b)
    assert ar.p_value == 1 / 10_001 and ar.p_value_is_bound
    # an ordinary p-value is no bound
    null = st.paired_bootstrap([0.2, 0.9, 1.0, 0.4], [0.3, 0.8, 1.0, 0.4], n_resamples=2000)
    assert not null.p_value_is_bound and null.p_value > 0.5


def test_zero_resamples_compute_no_interval_and_no_p_value():
    a, b = [0, 1, 1, 0, 1], [1, 1, 1, 0, 0]
    for test in (st.paired_bootstrap, st.approximate_randomization):
        r = test(a, b, n_resamples=0)
        assert (r.ci_low, r.ci_high, r.p_value, r.n_resamples, r.computed) == (None, None, None, 0, False)
        assert r.delta == pytest.approx(0.0) and (r.won, r.lost, r.tied) == (1, 1, 3)  # 3/5 - 3/5
        assert "no interval or p-value computed" in r.method
        with pytest.raises(ValueError):
            test(a, b, n_resamples=-1)
    both = st.compare_paired_scores({"x": 0.1, "y": 0.5}, {"x": 0.3, "y": 0.4}, n_resamples=0)
    assert both.bootstrap.p_value is None and both.randomization.p_value is None


def test_p_value_text_spells_bounds_and_missing_tests():
    from evaluators.reports.format import p_value

    assert p_value(0.109375) == "p = 0.1094"
    assert p_value(1 / 10_001, True) == "p < 0.0001"   # 0.00009999 rounded up
    assert p_value(1 / 1_001, True) == "p < 0.001"
    assert p_value(1 / 51, True) == "p < 0.02"         # 0.0196 rounded up, never down
    assert p_value(None) == "p not computed (no resamples)"


# ---------------------------------------------------------------- the segmented sampler (many items, all distinct)


def test_segmented_sampler_interval_equals_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(21)
    x = rng.beta(2, 3, 20_000)  # all distinct, >= SEGMENTED_MIN_ITEMS: segments 16384, 2048, 1024 and a rest of 544
    assert x.size >= st.SEGMENTED_MIN_ITEMS and st._segments(x.size) == ([(0, 14), (16384, 11), (18432, 10)], 19456)
    ours = st.bootstrap_ci(x, n_resamples=4000, seed=2)
    low, high = scipy_ci(x, seed=2, n=2000)
    # Monte Carlo error of a 2.5% / 97.5% percentile from R resamples: sqrt(p (1 - p) / R) / phi(1.96) in units of
    # the standard error of the mean = 0.156 / 0.0584 / sqrt(R) = 2.67 / sqrt(R); the two estimates differ by
    # 2.67 * sqrt(1/4000 + 1/2000) = 0.073 se in standard deviation; 5 of those is the tolerance (the interval
    # is 3.92 se wide)
    se = x.std() / np.sqrt(x.size)
    tol = 5 * 2.67 * np.sqrt(1 / 4_000 + 1 / 2_000) * se
    assert abs(ours.ci_low - low) < tol and abs(ours.ci_high - high) < tol


@pytest.mark.parametrize("n, r_count", [(20_000, 4000), ((1 << 17) + 5000, 1000)])  # 16-bit and 32-bit words
def test_segmented_sampler_draws_every_item_uniformly(n, r_count):
    # the resample mean of v has mean mean(v) and variance var(v) / n when every draw is uniform over the n items;
    # v picks out the rest (drawn by rng.integers), the top bit and the lowest used bit of each segment's index;
    # the 1e-9 ramp makes every value distinct (so the segmented sampler runs) and moves nothing measurably
    i = np.arange(n)
    segments, rest = st._segments(n)
    top_half = np.zeros(n)
    for start, bits in segments:
        top_half[start + (1 << (bits - 1)):start + (1 << bits)] = 1
    for v in (i >= rest, top_half, i % 2 == 1, i.astype(float)):
        v = np.asarray(v, float) + 1e-9 * i
        means = st.resample_means(v, r_count, seed=5)
        expected_sd = np.sqrt(v.var() / n)
        assert abs(means.mean() - v.mean()) < 5 * expected_sd / np.sqrt(r_count)
        # sample variance of r_count normal means: relative sd sqrt(2 / r_count) = 0.022; 5 of those
        assert means.var() / expected_sd**2 == pytest.approx(1, abs=5 * np.sqrt(2 / r_count))


def test_segmented_sampler_does_not_depend_on_the_number_of_threads(monkeypatch):
    x = np.random.default_rng(4).random(17_000)
    monkeypatch.setattr(st, "BOOTSTRAP_THREADS", 1)
    one = st.resample_means(x, 300, seed=9)
    monkeypatch.setattr(st, "BOOTSTRAP_THREADS", 2)
    assert np.array_equal(one, st.resample_means(x, 300, seed=9))
    assert not np.array_equal(one, st.resample_means(x, 300, seed=10))


def test_below_the_segmented_size_the_resamples_are_the_index_draws_as_before():
    x = np.random.default_rng(6).random(1000)  # all distinct, below SEGMENTED_MIN_ITEMS: numbers unchanged
    draws = np.random.default_rng(3).integers(0, 1000, size=(500, 1000), dtype=np.int32)
    assert np.array_equal(st.resample_means(x, 500, seed=3), x[draws].mean(axis=1))


def test_bootstrap_cis_on_threads_equal_bootstrap_ci_column_by_column():
    """Each column keeps its own generator (same seed): 1 or 4 threads, the same intervals as one at a time;
    the columns cover the three samplers (few distinct values: multinomial counts, drawn on the threads;
    300 distinct items: indices; 20,000 distinct items: segments)."""
    rng = np.random.default_rng(5)
    levels = [i / 10 for i in range(11)]  # an F1-like column: 11 distinct values
    columns = [[0.0, 1.0] * 50, list(rng.choice(levels, 400)), list(rng.choice(levels, 1000)),
               list(rng.random(300)), list(rng.random(20_000)), [0.5]]
    assert [st._small_draw(c, 500) for c in columns] == [True, True, True, False, False, False]
    one_by_one = [st.bootstrap_ci(c, n_resamples=500, seed=3) for c in columns]
    assert st.bootstrap_cis(columns, n_resamples=500, seed=3, threads=4) == one_by_one
    assert st.bootstrap_cis(columns, n_resamples=500, seed=3, threads=1) == one_by_one
    assert one_by_one[5].ci_low == one_by_one[5].ci_high == 0.5  # one value: every resample's mean is 0.5


def test_pattern_resample_weights_draw_multinomial_counts_or_the_items_themselves():
    from evaluators.metrics.statistics import pattern_resample_weights, resample_weights

    # 100 items in 3 patterns (3 x 8 <= 100): row r is the r-th rng.multinomial(100, counts / 100) of the seed
    patterns = np.repeat([0, 1, 2], [50, 30, 20])
    blocks = np.concatenate(list(pattern_resample_weights(patterns, 10, seed=4, block_cells=9)))  # blocks of 3 rows
    rng = np.random.default_rng(4)
    assert np.array_equal(blocks, [rng.multinomial(100, [0.5, 0.3, 0.2]) for _ in range(10)])
    assert blocks.shape == (10, 3) and np.all(blocks.sum(axis=1) == 100)
    # 20 items in 5 patterns (5 x 8 > 20): the items drawn as resample_weights draws them, counts summed per pattern
    patterns = np.arange(20) % 5
    (got,) = list(pattern_resample_weights(patterns, 6, seed=2))
    (items,) = list(resample_weights(20, 6, seed=2))
    assert np.array_equal(got, np.stack([items[:, patterns == p].sum(axis=1) for p in range(5)], axis=1))
    with pytest.raises(ValueError):
        next(pattern_resample_weights([], 5))


def test_bootstrap_statistic_ci_with_patterns_matches_the_item_bootstrap_of_a_proportion():
    # a proportion of 240 / 400 items: the percentile interval of the resampled share, by patterns (agree or not)
    # and by items, both near the normal one 0.6 +/- 1.96 * sqrt(0.6 * 0.4 / 400) = (0.552, 0.648)
    from evaluators.metrics.statistics import bootstrap_statistic_ci

    same = np.repeat([1.0, 0.0], [240, 160])
    by_items = bootstrap_statistic_ci(400, lambda w: (w @ same) / 400, n_resamples=4000)
    by_patterns = bootstrap_statistic_ci(400, lambda w: (w @ np.array([0.0, 1.0])) / w.sum(axis=1),
                                         n_resamples=4000, patterns=same.astype(int))
    assert np.allclose(by_patterns[:2], by_items[:2], atol=0.01)
    assert np.allclose(by_patterns[:2], (0.552, 0.648), atol=0.01) and by_patterns[2] == 4000
    with pytest.raises(ValueError):
        bootstrap_statistic_ci(400, lambda w: w[:, 0], patterns=[0, 1])
