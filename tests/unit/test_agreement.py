"""Agreement statistics (evaluators.metrics.agreement): hand-derived values and parity with
scikit-learn (Cohen), statsmodels (Fleiss) and the krippendorff package (alpha).

The one test file of the one module that classification, review and memory call.
"""

from __future__ import annotations

import json
import random

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluators.metrics.agreement import cohen_kappa, cohen_kappa_from_counts, fleiss_kappa, krippendorff_alpha
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
