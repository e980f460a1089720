"""Classification metrics: hand-worked values and parity with scikit-learn."""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest
from sklearn.metrics import (accuracy_score, cohen_kappa_score, confusion_matrix, precision_recall_fscore_support)

from evaluators.metrics.classification import classification_report
from evaluators.metrics.classification import confusion_matrix as our_confusion_matrix

# The earlier script's ten-sample example (rows = predicted):
#   T row 2 1 1, F row 1 2 0, uncertain row 0 1 2.
TEN_TRUE = ["T", "T", "T", "F", "F", "F", "F", "uncertain", "uncertain", "uncertain"]
TEN_PRED = ["T", "T", "F", "F", "F", "T", "uncertain", "uncertain", "uncertain", "T"]
LABELS = ["T", "F", "uncertain"]


def test_ten_sample_matrix_both_layouts():
    r = classification_report(TEN_TRUE, TEN_PRED, LABELS)
    assert r.matrix("predicted") == [[2, 1, 1], [1, 2, 0], [0, 1, 2]]
    assert r.matrix("true") == [[2, 1, 0], [1, 2, 1], [1, 0, 2]]  # the transpose
    assert r.matrix("true") == confusion_matrix(TEN_TRUE, TEN_PRED, labels=LABELS).tolist()


def test_ten_sample_per_class_hand_worked():
    r = classification_report(TEN_TRUE, TEN_PRED, LABELS)
    t, f, u = r.per_class
    # T: tp 2, predicted 4, support 3 -> P 2/4, R 2/3, F1 2*2/(2*2+2+1) = 4/7
    assert (t.tp, t.fp, t.fn, t.support) == (2, 2, 1, 3)
    assert t.precision == pytest.approx(0.5) and t.recall == pytest.approx(2 / 3) and t.f1 == pytest.approx(4 / 7)
    # F: tp 2, predicted 3, support 4 -> P 2/3, R 1/2, F1 4/7
    assert (f.precision, f.recall, f.f1, f.support) == pytest.approx((2 / 3, 0.5, 4 / 7, 4))
    # uncertain: tp 2, predicted 3, support 3 -> 2/3 each
    assert (u.precision, u.recall, u.f1, u.support) == pytest.approx((2 / 3, 2 / 3, 2 / 3, 3))
    assert r.accuracy == pytest.approx(0.6) and r.correct == 6 and r.n == 10
    # kappa: po = 0.6; pe = (3*4 + 4*3 + 3*3) / 100 = 0.33; (0.6 - 0.33) / (1 - 0.33) = 27/67
    assert r.cohen_kappa == pytest.approx(27 / 67)
    assert r.macro.f1 == pytest.approx((4 / 7 + 4 / 7 + 2 / 3) / 3)
    assert r.weighted.f1 == pytest.approx((3 * 4 / 7 + 4 * 4 / 7 + 3 * 2 / 3) / 10)
    assert r.micro.f1 == pytest.approx(0.6)  # micro F1 = accuracy for single-label data over all labels


def test_chinese_labels_and_undefined_values():
    # 支持 is never predicted: its precision is undefined (None), recall 0, F1 0.
    y_true = ["支持", "支持", "反驳", "反驳"]
    y_pred = ["反驳", "反驳", "反驳", "反驳"]
    r = classification_report(y_true, y_pred, ["支持", "反驳"])
    support = r.class_metrics("支持")
    assert support.precision is None and support.recall == 0.0 and support.f1 == 0.0
    # 反驳: P 2/4, R 2/2, F1 2*2/(4+2+0) = 2/3
    assert r.class_metrics("反驳").f1 == pytest.approx(2 / 3)
    assert r.macro.precision == pytest.approx(0.5) and r.macro.n_skipped == 1
    assert r.cohen_kappa == pytest.approx(0.0)  # po = pe = 0.5
    json.dumps(r.to_dict())  # JSON-safe: no NaN


def test_all_one_class_kappa_undefined_and_row_normalized():
    r = classification_report(["yes", "yes"], ["yes", "yes"])
    assert r.accuracy == 1.0 and r.cohen_kappa is None  # chance agreement 1: undefined
    r = classification_report(TEN_TRUE, TEN_PRED, LABELS + ["unparsed"])
    rows = r.row_normalized("predicted")
    assert rows[0] == pytest.approx([0.5, 0.25, 0.25, 0.0]) and rows[3] == [None] * 4


def test_errors():
    with pytest.raises(ValueError):
        classification_report(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        classification_report(["a"], ["a"]).matrix("columns")
    with pytest.raises(ValueError):
        classification_report(["a"], ["a"], ["a"], average_labels=["b"])


def _close(ours, theirs) -> bool:
    if ours is None:
        return bool(np.isnan(theirs))
    return not np.isnan(theirs) and abs(ours - theirs) < 1e-12


@pytest.mark.parametrize("seed", range(40))
def test_parity_with_sklearn_on_random_labels(seed):
    rng = random.Random(seed)
    vocab = rng.choice([["T", "F", "uncertain"], ["支持", "反驳", "证据不足", "无法判断"], ["a", "b", "c", "d", "e"]])
    n = rng.randint(1, 60)
    y_true = [rng.choice(vocab[:-1]) for _ in range(n)]
    y_pred = [rng.choice(vocab) for _ in range(n)]
    labels = sorted(set(y_true) | set(y_pred))
    if seed % 3 == 0:
        labels = labels + ["never-seen"]
    if seed % 4 == 1 and len(labels) > 2:
        labels = [lab for lab in labels if lab != y_pred[0] or lab in y_true][:-1] or labels
    if not set(labels) & set(y_true):
        labels = sorted(set(y_true))
    r = classification_report(y_true, y_pred, labels)
    assert r.matrix("true") == confusion_matrix(y_true, y_pred, labels=labels).tolist()
    assert r.matrix("predicted") == confusion_matrix(y_true, y_pred, labels=labels).T.tolist()
    assert r.accuracy == pytest.approx(accuracy_score(y_true, y_pred))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, rc, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=np.nan)
        kappa = cohen_kappa_score(y_true, y_pred, labels=labels)
        for m, pi, ri, fi, si in zip(r.per_class, p, rc, f, s):
            assert _close(m.precision, pi) and _close(m.recall, ri) and _close(m.f1, fi) and m.support == si
        for avg in ("micro", "macro", "weighted"):
            ap, ar, af, _ = precision_recall_fscore_support(y_true, y_pred, labels=labels, average=avg,
                                                            zero_division=np.nan)
            ours = getattr(r, avg)
            assert _close(ours.precision, ap) and _close(ours.recall, ar) and _close(ours.f1, af), avg
    assert _close(r.cohen_kappa, kappa)


def test_average_labels_match_sklearn_label_subset():
    y_true = ["T", "F", "uncertain", "T", "F"]
    y_pred = ["T", "unparsed", "uncertain", "F", "F"]
    r = classification_report(y_true, y_pred, ["T", "F", "uncertain", "unparsed"], average_labels=LABELS)
    p, rc, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=LABELS, average="macro", zero_division=np.nan)
    assert (r.macro.precision, r.macro.recall, r.macro.f1) == pytest.approx((p, rc, f))
    assert r.matrix("predicted")[3] == [0, 1, 0, 0]  # the unparsed row: one F claim without a verdict


def test_confusion_matrix_function_layout():
    assert our_confusion_matrix(TEN_TRUE, TEN_PRED, LABELS, rows="predicted") == [[2, 1, 1], [1, 2, 0], [0, 1, 2]]
    # default label order is sorted, as scikit-learn's unique_labels
    assert our_confusion_matrix(["b", "a"], ["a", "a"]) == confusion_matrix(["b", "a"], ["a", "a"]).tolist()
