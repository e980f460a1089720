"""Agreement statistics (evaluators.metrics.agreement): hand-derived values and parity with
scikit-learn (Cohen), statsmodels (Fleiss) and the krippendorff package (alpha).

The one test file of the one module that classification, review and memory call.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluators.metrics import agreement as st_agreement
from evaluators.metrics.agreement import (cohen_kappa, cohen_kappa_from_counts, fleiss_kappa, krippendorff_alpha,
                                          sorted_labels)
from tests.conftest import require_shared

# ---------------------------------------------------------------- Cohen


def test_cohen_kappa_by_hand_and_against_sklearn():
    a = ["model_error", "model_error", "acceptable_variant", "acceptable_variant"]
    b = ["model_error", "acceptable_variant", "acceptable_variant", "acceptable_variant"]
    # observed agreement 3/4; chance: A says model_error 2/4, B 1/4 -> 2/4*1/4 + 2/4*3/4 = 1/2
    # kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert cohen_kappa(a, b) == 0.5 == cohen_kappa_score(a, b)
    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, 80)
    y = np.clip(x + rng.integers(-1, 2, 80), 1, 5)
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa(list(x), list(y), weights=weights) == pytest.approx(cohen_kappa_score(x, y, weights=weights))
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # one label only: chance agreement 1
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])
    with pytest.raises(ValueError):
        cohen_kappa([1], [1], weights="cubic")


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_equals_scikit_learn_on_chinese_and_english_labels(seed):
    rng = random.Random(seed)
    labels = ["yes", "no", "部分"] if seed % 2 else [0, 1]
    a = [rng.choice(labels) for _ in range(40)]
    b = [x if rng.random() < 0.7 else rng.choice(labels) for x in a]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_hand_derived_and_undefined():
    # 10 items: both 1 on 4, both 0 on 3, a=1/b=0 on 2, a=0/b=1 on 1.
    a = [1] * 4 + [0] * 3 + [1] * 2 + [0]
    b = [1] * 4 + [0] * 3 + [0] * 2 + [1]
    # p_o = 7/10; p(a=1) = 6/10, p(b=1) = 5/10; p_e = .6*.5 + .4*.5 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa([1, 1], [1, 1]) is None  # p_e = 1: sklearn gives NaN, we give None
    assert cohen_kappa([], []) is None


def test_weighted_kappa_by_hand_from_counts():
    # 3 ordered labels, n = 6; counts (rows A, columns B):
    #   [[2, 1, 0],      rows 3, 2, 1; columns 2, 3, 1
    #    [0, 1, 1],
    #    [0, 1, 0]]
    # linear: observed sum |i-j| O = 1 + 1 + 1 = 3; n * sum |i-j| E = sum |i-j| row_i col_j
    #   = 3*3 + 3*1*2 + 2*2 + 2*1 + 1*2*2 + 1*3 = 9 + 6 + 4 + 2 + 4 + 3 = 28; kappa = 1 - 6*3/28 = 5/14
    # quadratic: observed 1 + 1 + 1 = 3; expected 9 + 4*3 + 4 + 2 + 4*2 + 3 = 38; kappa = 1 - 18/38 = 10/19
    # plain: observed 3; expected 9 + 3 + 4 + 2 + 2 + 3 = 23; kappa = 1 - 18/23 = 5/23
    counts = [[2, 1, 0], [0, 1, 1], [0, 1, 0]]
    a = [0, 0, 0, 1, 1, 2]
    b = [0, 0, 1, 1, 2, 1]
    for weights, expected in ((None, 5 / 23), ("linear", 5 / 14), ("quadratic", 10 / 19)):
        assert cohen_kappa_from_counts(counts, weights=weights) == pytest.approx(expected, rel=1e-15)
        assert cohen_kappa(a, b, weights=weights) == cohen_kappa_from_counts(counts, weights=weights)
        assert cohen_kappa(a, b, weights=weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights))
    assert cohen_kappa_from_counts([[0, 0], [0, 0]]) is None
    with pytest.raises(ValueError):
        cohen_kappa_from_counts([[1, 2]])


def test_labels_outside_the_given_order_are_left_out_as_sklearn():
    a = ["是", "否", "是", "否", "也许"]
    b = ["是", "是", "是", "否", "否"]
    # without the "也许" pair: 4 items, observed 3/4; chance (2*3 + 2*1)/16 = 1/2; kappa = 1/2
    assert cohen_kappa(a, b, labels=["是", "否"]) == pytest.approx(0.5)
    assert cohen_kappa(a, b, labels=["是", "否"]) == pytest.approx(cohen_kappa_score(a, b, labels=["是", "否"]))


# ---------------------------------------------------------------- Fleiss


def test_fleiss_kappa_by_hand_and_against_statsmodels():
    # 3 items x 2 categories, 2 raters each: [2,0], [0,2], [1,1]
    # p_j = (3/6, 3/6); P_i = 1, 1, 0 -> P = 2/3; Pe = 1/2 -> kappa = (2/3 - 1/2) / (1/2) = 1/3
    table = [[2, 0], [0, 2], [1, 1]]
    assert fleiss_kappa(table) == pytest.approx(1 / 3) == pytest.approx(statsmodels_fleiss(np.array(table)))
    rng = np.random.default_rng(1)
    t = rng.multinomial(5, [0.5, 0.3, 0.2], size=40)
    assert fleiss_kappa(t) == pytest.approx(statsmodels_fleiss(t))
    assert fleiss_kappa([]) is None and fleiss_kappa([[3, 0], [3, 0]]) is None  # one category: Pe = 1
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 2]])


# ---------------------------------------------------------------- Krippendorff


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_against_the_krippendorff_package(level):
    rng = np.random.default_rng(2)
    data = rng.integers(1, 6, (4, 40)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan  # missing ratings
    ours = krippendorff_alpha(data.tolist(), level)
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_krippendorff_alpha_by_hand():
    # two raters, three units: (1,1), (2,2), (1,2); nominal coincidences o11=2, o22=2, o12=o21=1; n=6
    # D_o term: o12 + o21 = 2; expected: n1=3, n2=3 -> 2 * 3 * 3 = 18; alpha = 1 - 5 * 2 / 18 = 4/9
    assert krippendorff_alpha([[1, 2, 1], [1, 2, 2]], "nominal") == pytest.approx(4 / 9)
    # interval, same data: delta(1,2) = 1, so the same sums: 4/9
    assert krippendorff_alpha([[1, 2, 1], [1, 2, 2]], "interval") == pytest.approx(4 / 9)
    assert krippendorff_alpha([[1, None], [None, 2]]) is None  # no unit rated twice
    with pytest.raises(ValueError):
        krippendorff_alpha([[1]], "ratio")


def test_agreement_on_real_data_mem0_judge_against_its_own_f1():
    """The LLM judge's verdicts (llm_score) against mem0's token F1 >= 0.5, on the real LoCoMo run."""
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    rows = [r for block in json.loads(path.read_text(encoding="utf-8")).values() for r in block]
    judge = [int(r["llm_score"]) for r in rows]
    f1_rule = [int(float(r["f1_score"]) >= 0.5) for r in rows]
    assert len(rows) > 100
    assert cohen_kappa(judge, f1_rule) == pytest.approx(cohen_kappa_score(judge, f1_rule))
    data = np.array([judge, f1_rule], dtype=float)
    assert krippendorff_alpha(data.tolist(), "nominal") == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


# ---------------------------------------------------------------- intervals over items


def _loop_bootstrap(n, statistic, seed=0, n_resamples=2000, level=0.95):
    """The bootstrap over items written out: resample r draws n item indices with replacement
    (``rng.integers(0, n, n)``), the statistic is recomputed with the public scalar function on
    the resampled items, undefined resamples are skipped, and the interval is the percentile one."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        v = statistic(rng.integers(0, n, n))
        if v is not None:
            values.append(v)
    return tuple(np.percentile(values, [100 * (1 - level) / 2, 100 * (1 + level) / 2]))


def _ratings(seed, n_raters=3, n_items=60, missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n_items)
    data = np.clip(truth + rng.integers(-1, 2, (n_raters, n_items)), 1, 5).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_interval_equals_a_bootstrap_over_items(weights):
    data = _ratings(3, 2, 50, 0)
    a, b = [int(x) for x in data[0]], [int(x) for x in data[1]]
    labels = sorted(set(a) | set(b))  # each resample keeps the full data's label order
    fig = st_agreement.cohen_kappa_ci(a, b, weights=weights, seed=4)
    low, high = _loop_bootstrap(50, lambda idx: cohen_kappa([a[i] for i in idx], [b[i] for i in idx],
                                                            weights=weights, labels=labels), seed=4)
    assert fig.value == cohen_kappa(a, b, weights=weights)
    assert (fig.ci_low, fig.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert fig.ci_low < fig.value < fig.ci_high and fig.n_items == 50 and fig.meaningful and fig.note is None
    assert "n_resamples=2000" in fig.method and "seed=4" in fig.method


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_interval_equals_a_bootstrap_over_units(level):
    data = _ratings(5)
    pairable = [u for u in range(data.shape[1]) if np.sum(~np.isnan(data[:, u])) >= 2]
    units = data[:, pairable]
    fig = st_agreement.krippendorff_alpha_ci(data.tolist(), level)
    low, high = _loop_bootstrap(len(pairable), lambda idx: krippendorff_alpha(units[:, idx].tolist(), level))
    assert fig.value == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    assert (fig.ci_low, fig.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert fig.n_items == len(pairable) > 30 and fig.meaningful


def test_fleiss_and_mean_pairwise_kappa_intervals_equal_a_bootstrap_over_items():
    rng = np.random.default_rng(8)
    table = rng.multinomial(4, [0.6, 0.3, 0.1], size=45)
    fig = st_agreement.fleiss_kappa_ci(table)
    low, high = _loop_bootstrap(45, lambda idx: fleiss_kappa(table[idx]))
    assert fig.value == pytest.approx(statsmodels_fleiss(table))
    assert (fig.ci_low, fig.ci_high) == pytest.approx((low, high), abs=1e-12)

    data = _ratings(9, 3, 40, 0.3)
    shared = [u for u in range(40) if np.sum(~np.isnan(data[:, u])) >= 2]
    cols = data[:, shared]

    def mean_of_pairs(idx):
        kappas = []
        for x, y in ((0, 1), (0, 2), (1, 2)):
            both = [(cols[x, u], cols[y, u]) for u in idx if not np.isnan(cols[x, u]) and not np.isnan(cols[y, u])]
            full = [(p, q) for p, q in zip(cols[x], cols[y]) if not np.isnan(p) and not np.isnan(q)]
            labels = sorted({v for pair in full for v in pair})  # the pair's label order in the full data
            k = cohen_kappa([p for p, _ in both], [q for _, q in both], weights="quadratic", labels=labels)
            if k is not None:
                kappas.append(k)
        return float(np.mean(kappas)) if kappas else None

    fig = st_agreement.mean_pairwise_cohen_kappa_ci(data.tolist(), weights="quadratic")
    assert fig.value == pytest.approx(mean_of_pairs(range(len(shared))))
    assert (fig.ci_low, fig.ci_high) == pytest.approx(_loop_bootstrap(len(shared), mean_of_pairs), abs=1e-12)
    assert fig.n_items == len(shared)


def test_under_thirty_items_a_figure_is_flagged_not_yet_meaningful():
    a = ["对", "错", "对", "对"] * 7 + ["对"]   # 29 items
    b = ["对", "错", "错", "对"] * 7 + ["错"]
    few = st_agreement.cohen_kappa_ci(a, b)
    assert few.n_items == 29 and not few.meaningful
    assert few.note == "not yet meaningful: 29 items (fewer than 30)"
    assert few.value is not None and few.ci_low is not None  # the interval is still given
    enough = st_agreement.cohen_kappa_ci(a + ["错"], b + ["错"])
    assert enough.n_items == 30 and enough.meaningful and enough.note is None
    undefined = st_agreement.cohen_kappa_ci(["yes"] * 40, ["yes"] * 40)  # one label: chance agreement 1
    assert undefined.value is None and undefined.ci_low is None and not undefined.meaningful
    assert undefined.note.startswith("undefined")
    empty = st_agreement.krippendorff_alpha_ci([[1, None], [None, 2]])
    assert (empty.value, empty.n_items, empty.meaningful) == (None, 0, False)
    none = st_agreement.cohen_kappa_ci(a, b, n_resamples=0)
    assert none.ci_low is None and none.value == few.value and "no interval" in none.method


# ---------------------------------------------------------------- intervals from pattern counts


def _labels(seed, n, raters=2, labels=("对", "错", "部分"), agree=0.7):
    """``raters`` label lists over ``n`` items: each rater repeats a true label with probability ``agree``."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(labels), n)
    out = []
    for _ in range(raters):
        noisy = np.where(rng.random(n) < agree, truth, rng.choice(len(labels), n))
        out.append([labels[i] for i in noisy])
    return out


def _percentiles(values, level=0.95):
    ok = [v for v in values if v is not None and not np.isnan(v)]
    return tuple(np.percentile(ok, [100 * (1 - level) / 2, 100 * (1 + level) / 2]))


def test_cohen_kappa_interval_is_the_bootstrap_of_multinomial_cell_counts():
    # 300 items in at most 9 cells (3 labels x 3): 9 x 8 <= 300, so resample r is the r-th draw of
    # rng.multinomial(300, cell counts / 300), cells in label order; kappa recomputed by scikit-learn on those items
    a, b = _labels(21, 300)
    cells = sorted(Counter(zip(a, b)).items())
    assert len(cells) * 8 <= 300
    draw = np.random.default_rng(7)
    kappas = []
    for counts in draw.multinomial(300, np.array([c for _, c in cells]) / 300, size=2000):
        pairs = [pair for (pair, _), m in zip(cells, counts) for _ in range(m)]
        kappas.append(cohen_kappa_score([x for x, _ in pairs], [y for _, y in pairs]))
    fig = st_agreement.cohen_kappa_ci(a, b, seed=7)
    assert fig.value == cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    assert (fig.ci_low, fig.ci_high) == pytest.approx(_percentiles(kappas), abs=1e-12)
    # the same figure from the confusion matrix (cells listed in label order)
    labels = sorted(set(a) | set(b))
    table = [[sum(1 for x, y in zip(a, b) if (x, y) == (p, q)) for q in labels] for p in labels]
    assert st_agreement.cohen_kappa_table_ci(table, seed=7) == fig


def test_fleiss_kappa_interval_is_the_bootstrap_of_multinomial_row_counts():
    # 300 items rated by 3 raters into 2 categories: rows [3,0], [2,1], [1,2], [0,3] (4 patterns, lexicographic
    # order); resample r: rng.multinomial(300, row counts / 300); kappa by statsmodels on the drawn rows
    rng = np.random.default_rng(5)
    table = rng.multinomial(3, [0.7, 0.3], size=300)
    rows, counts = np.unique(table, axis=0, return_counts=True)
    draw = np.random.default_rng(0)
    kappas = [statsmodels_fleiss(np.repeat(rows, m, axis=0))
              for m in draw.multinomial(300, counts / 300, size=2000)]
    fig = st_agreement.fleiss_kappa_ci(table)
    assert fig.value == pytest.approx(statsmodels_fleiss(table))
    assert (fig.ci_low, fig.ci_high) == pytest.approx(_percentiles(kappas), abs=1e-12)


def _item_bootstrap(n, statistic, n_resamples, seed=11):
    rng = np.random.default_rng(seed)
    return _percentiles([statistic(rng.integers(0, n, n)) for _ in range(n_resamples)])


def test_pattern_intervals_match_the_item_bootstrap_within_monte_carlo_error():
    # n = 300, 4,000 resamples each way: the two intervals estimate the same percentiles, so their ends differ
    # only by Monte Carlo error (a few thousandths here); 0.02 is far outside it and far inside a wrong method
    b_ = 4000
    a, b = _labels(31, 300)
    fig = st_agreement.cohen_kappa_ci(a, b, n_resamples=b_)
    ref = _item_bootstrap(300, lambda idx: cohen_kappa([a[i] for i in idx], [b[i] for i in idx]), b_)
    assert np.allclose((fig.ci_low, fig.ci_high), ref, atol=0.02)

    scores = np.asarray(_labels(32, 300, raters=2, labels=(1, 2, 3, 4, 5), agree=0.6), dtype=float)
    fig = st_agreement.krippendorff_alpha_ci(scores.tolist(), "ordinal", n_resamples=b_)
    ref = _item_bootstrap(300, lambda idx: krippendorff_alpha(scores[:, idx].tolist(), "ordinal"), b_)
    assert fig.value == pytest.approx(krippendorff.alpha(reliability_data=scores, level_of_measurement="ordinal"))
    assert np.allclose((fig.ci_low, fig.ci_high), ref, atol=0.02)

    three = _labels(33, 300, raters=3, labels=("yes", "no"), agree=0.8)
    fig = st_agreement.mean_pairwise_cohen_kappa_ci(three, n_resamples=b_)

    def mean_kappa(idx):
        return np.mean([cohen_kappa([three[x][i] for i in idx], [three[y][i] for i in idx])
                        for x, y in ((0, 1), (0, 2), (1, 2))])

    assert fig.value == pytest.approx(mean_kappa(range(300)))
    assert np.allclose((fig.ci_low, fig.ci_high), _item_bootstrap(300, mean_kappa, b_), atol=0.02)


def test_pattern_intervals_degenerate_cases():
    # all agree on two labels: every resample has kappa 1 (or none, with one label only): interval (1, 1)
    a = ["对"] * 60 + ["错"] * 60
    fig = st_agreement.cohen_kappa_ci(a, a)
    assert (fig.value, fig.ci_low, fig.ci_high, fig.meaningful) == (1.0, 1.0, 1.0, True)
    # one pattern only: one label everywhere, chance agreement 1, undefined as before
    one = st_agreement.cohen_kappa_ci(["对"] * 120, ["对"] * 120)
    assert one.value is None and one.ci_low is None and one.note.startswith("undefined")
    assert st_agreement.fleiss_kappa_ci([[3, 0]] * 90).value is None
    # every unit is the pair (1, 2): N = 40 units, o_12 = o_21 = 40, n_1 = n_2 = 40, n = 80;
    # alpha = 1 - (n - 1) * sum(o delta) / sum(n_c n_k delta) = 1 - 79 * 80 / (2 * 40 * 40) = -0.975, and every
    # resample is the same 40 units: interval (-0.975, -0.975)
    fig = st_agreement.krippendorff_alpha_ci([[1] * 40, [2] * 40])
    assert fig.value == pytest.approx(-0.975) and (fig.ci_low, fig.ci_high) == pytest.approx((-0.975, -0.975))
    # under 30 items with few patterns (3 x 8 <= 29: multinomial draws): flagged, the interval still given
    a29, b29 = ["是"] * 10 + ["否"] * 19, ["是"] * 10 + ["否"] * 9 + ["是"] * 10
    few = st_agreement.cohen_kappa_ci(a29, b29)
    assert few.n_items == 29 and not few.meaningful and few.note == "not yet meaningful: 29 items (fewer than 30)"
    assert few.ci_low is not None and few.ci_low <= few.value <= few.ci_high
    # the seed fixes the interval; another seed draws other resamples
    assert st_agreement.cohen_kappa_ci(a29, b29, seed=3) == st_agreement.cohen_kappa_ci(a29, b29, seed=3)
    other = _labels(4, 300)
    assert (st_agreement.cohen_kappa_ci(*other, seed=1).ci_low != st_agreement.cohen_kappa_ci(*other, seed=2).ci_low)


def test_coded_variants_give_the_figures_of_the_list_functions():
    data = _ratings(14, 4, 200, 0.3)
    listed = data.tolist()
    labels = sorted({v for row in listed for v in row if not np.isnan(v)})
    codes = np.where(np.isnan(data), -1, np.searchsorted(labels, np.nan_to_num(data))).T
    for weights in (None, "quadratic"):
        assert (st_agreement.mean_pairwise_cohen_kappa_codes_ci(codes, weights=weights)
                == st_agreement.mean_pairwise_cohen_kappa_ci(listed, weights=weights))
    counts = np.stack([(data == v).sum(axis=0) for v in labels], axis=1)
    for level in ("nominal", "ordinal", "interval"):
        assert (st_agreement.krippendorff_alpha_counts_ci(counts, labels, level)
                == st_agreement.krippendorff_alpha_ci(listed, level))
    # a unit rated once is not pairable
    assert st_agreement.krippendorff_alpha_counts_ci([[1, 0], [0, 1]], [1, 2]).value is None
    # two raters' codes: the figure of the decoded labels (small n: items drawn by index, the same resamples)
    a, b = _labels(15, 45, labels=("对", "错", "部分"))
    order = sorted_labels(a + b)
    codes_a, codes_b = [order.index(x) + 2 for x in a], [order.index(y) + 2 for y in b]  # codes need not start at 0
    for weights in (None, "linear"):
        assert (st_agreement.cohen_kappa_codes_ci(codes_a, codes_b, weights=weights)
                == st_agreement.cohen_kappa_ci(a, b, weights=weights))
    with pytest.raises(ValueError):
        st_agreement.cohen_kappa_codes_ci([0, -1], [0, 1])


def test_row_patterns_equal_numpy_unique_rows():
    rng = np.random.default_rng(3)
    for rows in (rng.integers(-1, 5, (500, 3)), rng.integers(0, 3, (40, 70)), rng.random((30, 2)).round(1),
                 np.zeros((0, 2), dtype=np.int64)):
        distinct, inverse = st_agreement.row_patterns(rows)
        want, want_inverse = np.unique(rows, axis=0, return_inverse=True)
        assert np.array_equal(distinct, want) and np.array_equal(inverse, want_inverse.ravel())
