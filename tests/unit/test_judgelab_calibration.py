"""The judge lab's calibration figures: parity with scikit-learn, intervals equal to a bootstrap written here,
the overfit warning, the stable stratified split, guidelines versions never pooled silently."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from evaluators.judgelab import (HumanLabel, JudgeVersion, Split, assign_split, calibrate, check_guidelines,
                                 split_figures)
from evaluators.metrics.statistics import SMALL_SAMPLE_ITEMS
from tests.helpers.judge_stub import StubJudge

SLICES = ("temporal-reasoning 时间", "multi-session 多会话", "knowledge-update")


def _labels(n=200, seed=7, guidelines="g1"):
    rng = np.random.default_rng(seed)
    return [HumanLabel(f"q{i:03d}", int(rng.random() < 0.45), SLICES[i % 3], guidelines) for i in range(n)]


def _versions(labels, split):
    """Three prompt versions through the stub: two honest ones and one that memorised its dev items."""
    dev = frozenset(split.ids("dev"))
    stubs = [
        (JudgeVersion.make("stub-judge", "Is the answer right? Say yes or no.", {"temperature": 0}, "yes-in-reply",
                           "v1 plain"), StubJudge(sensitivity=0.85, specificity=0.8, seed=1)),
        (JudgeVersion.make("stub-judge", "判断回答是否正确，只回答 yes 或 no。", {"temperature": 0}, "yes-in-reply",
                           "v2 zh"), StubJudge(sensitivity=0.92, specificity=0.6, seed=2)),
        (JudgeVersion.make("stub-judge", "Examples: ... (the dev items)", {"temperature": 0}, "yes-in-reply",
                           "v3 tuned on dev"), StubJudge(sensitivity=0.65, specificity=0.65, memorised=dev, seed=3)),
    ]
    items = [(lab.item_id, lab.label) for lab in labels]
    return [(version, stub.verdicts(items)) for version, stub in stubs]


@pytest.fixture(scope="module")
def lab():
    labels = _labels()
    split = assign_split(labels, seed=11)
    judges = _versions(labels, split)
    report = calibrate(labels, judges, split=split, seed=11, n_resamples=400)
    return labels, split, judges, report


def test_every_figure_equals_scikit_learn(lab):
    labels, split, judges, report = lab
    by_id = {lab_.item_id: lab_.label for lab_ in labels}
    assert [j.version.name for j in report.judges] == ["v1 plain", "v2 zh", "v3 tuned on dev"]
    for (version, verdicts), cal in zip(judges, report.judges):
        assert cal.version == version and cal.missing_ids == () and cal.unlabelled_verdicts == 0
        for figs in (cal.dev, cal.test):
            ids = split.ids(figs.side)
            y = [by_id[i] for i in ids]
            v = [verdicts[i] for i in ids]
            assert figs.n_items == len(ids)
            assert figs.cohen_kappa.value == pytest.approx(cohen_kappa_score(y, v), abs=1e-12)
            assert figs.confusion == confusion_matrix(y, v, labels=[0, 1]).tolist()
            (tn, fp), (fn, tp) = figs.confusion
            assert figs.accuracy.value == pytest.approx((tn + tp) / len(ids), abs=1e-12)
            assert figs.sensitivity.value == pytest.approx(tp / (tp + fn), abs=1e-12)
            assert figs.specificity.value == pytest.approx(tn / (tn + fp), abs=1e-12)
            assert figs.base_rate.value == pytest.approx(np.mean(y), abs=1e-12)
            assert figs.judge_positive_rate.value == pytest.approx(np.mean(v), abs=1e-12)
            assert figs.sensitivity.n == tp + fn and figs.specificity.n == tn + fp
            assert set(figs.disagreeing_ids) == {i for i in ids if by_id[i] != verdicts[i]}
            assert set(figs.false_positive_ids) == {i for i in ids if by_id[i] == 0 and verdicts[i] == 1}


def _hand_bootstrap(y, v, statistic, n_resamples, seed, level=0.95):
    """The percentile bootstrap by hand: n indices drawn with replacement per resample, NaN resamples dropped."""
    y, v = np.asarray(y), np.asarray(v)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        idx = rng.integers(0, y.size, y.size)
        values.append(statistic(y[idx], v[idx]))
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    a = (1 - level) / 2
    return tuple(np.percentile(values, [100 * a, 100 * (1 - a)]))


def _kappa(y, v):
    with np.errstate(invalid="ignore", divide="ignore"):
        return cohen_kappa_score(y, v, labels=[0, 1])


HAND = {
    "cohen_kappa": _kappa,
    "accuracy": lambda y, v: np.mean(y == v),
    "sensitivity": lambda y, v: np.mean(v[y == 1]) if (y == 1).any() else np.nan,
    "specificity": lambda y, v: np.mean(v[y == 0] == 0) if (y == 0).any() else np.nan,
    "base_rate": lambda y, v: np.mean(y),
    "judge_positive_rate": lambda y, v: np.mean(v),
}


def test_every_interval_equals_a_bootstrap_written_here(lab):
    labels, split, judges, report = lab
    by_id = {lab_.item_id: lab_.label for lab_ in labels}
    for (version, verdicts), cal in zip(judges, report.judges):
        for figs in (cal.dev, cal.test):
            ids = split.ids(figs.side)
            y = [by_id[i] for i in ids]
            v = [verdicts[i] for i in ids]
            for name, fn in HAND.items():
                fig = getattr(figs, name)
                low, high = _hand_bootstrap(y, v, fn, 400, 11)
                assert (fig.ci_low, fig.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12)), name
            # the confusion cells' counts: true-positive cell
            low, high = _hand_bootstrap(y, v, lambda a, b: np.sum((a == 1) & (b == 1)), 400, 11)
            assert figs.confusion_ci[1][1] == (pytest.approx(low), pytest.approx(high))


def test_a_prompt_that_memorised_its_dev_items_is_flagged_and_honest_ones_are_not(lab):
    _, _, _, report = lab
    honest_1, honest_2, tuned = report.judges
    assert tuned.dev.cohen_kappa.value == 1.0
    assert 0.15 < tuned.test.cohen_kappa.value < 0.45  # sens = spec = 0.65 on held-out items: kappa about 0.3
    assert tuned.overfit and "overfit" in tuned.warning and "1.000" in tuned.warning
    for honest in (honest_1, honest_2):
        assert not honest.overfit and honest.warning is None
        assert honest.dev.cohen_kappa.value <= honest.test.cohen_kappa.ci_high
    assert tuned.dev.cohen_kappa.value > tuned.test.cohen_kappa.ci_high


def test_figures_by_hand_on_six_items():
    # human  1 1 1 0 0 0 ; judge 1 1 0 1 0 0  -> tn 2, fp 1, fn 1, tp 2
    # accuracy 4/6; sensitivity 2/3; specificity 2/3; base rate 3/6; judge positive rate 3/6
    # kappa: po = 4/6, pe = (3*3 + 3*3)/36 = 1/2 -> (2/3 - 1/2) / (1/2) = 1/3
    f = split_figures([1, 1, 1, 0, 0, 0], [1, 1, 0, 1, 0, 0], ["a", "b", "c", "d", "e", "f"], n_resamples=200)
    assert f.confusion == [[2, 1], [1, 2]]
    assert f.accuracy.value == pytest.approx(4 / 6)
    assert f.sensitivity.value == pytest.approx(2 / 3) and f.specificity.value == pytest.approx(2 / 3)
    assert f.base_rate.value == 0.5 and f.judge_positive_rate.value == 0.5
    assert f.cohen_kappa.value == pytest.approx(1 / 3)
    assert f.false_positive_ids == ("d",) and f.false_negative_ids == ("c",) and f.disagreeing_ids == ("c", "d")
    assert f.accuracy.small_sample and f.sensitivity.n == 3 and "fewer than 30" in f.accuracy.note
    # no human-wrong item: specificity undefined, said so
    g = split_figures([1, 1], [1, 0], ["x", "y"], n_resamples=50)
    assert g.specificity.value is None and g.specificity.ci_low is None and "no human-wrong" in g.specificity.note
    # no resamples: no intervals. tn 1, fp 0, fn 1, tp 1: po = 2/3, pe = (1*2 + 2*1)/9 = 4/9, kappa = (2/9)/(5/9)
    none = split_figures([1, 1, 0], [1, 0, 0], ["x", "y", "z"], n_resamples=0)
    assert none.accuracy.ci_low is None and none.cohen_kappa.ci_high is None and none.confusion_ci[0][0] == (None, None)
    assert none.method == "no interval (n_resamples=0)" and none.cohen_kappa.value == pytest.approx(0.4)
    with pytest.raises(ValueError, match="0 \\(wrong\\) or 1"):
        split_figures([1, 2], [1, 0], ["x", "y"])
    with pytest.raises(ValueError, match="0 \\(wrong\\) or 1"):
        split_figures([1, 0], [0.5, 0], ["x", "y"])  # not cast to 0


def test_the_split_is_stratified_and_an_item_keeps_its_side_when_items_are_added():
    labels = _labels(150)
    first = assign_split(labels, seed=3, dev_fraction=0.5)
    for (label, slice_) in {(lab.label, lab.slice) for lab in labels}:
        members = [lab.item_id for lab in labels if (lab.label, lab.slice) == (label, slice_)]
        dev = sum(first.side(i) == "dev" for i in members)
        assert abs(dev - 0.5 * len(members)) <= 0.5  # exact: floor or ceil of half the stratum
    more = labels + [HumanLabel(f"new{i:02d}", i % 2, SLICES[i % 3], "g1") for i in range(40)]
    second = assign_split(more, seed=3, dev_fraction=0.5, previous=first)
    assert all(second.side(i) == s for i, s in first.sides)
    assert len(second.sides) == 190
    # the same items, split again from scratch, with the same seed: the same sides (no hidden state)
    assert assign_split(labels, seed=3) == first
    assert assign_split(labels, seed=4) != first
    # a stored split round-trips through JSON-like data
    assert Split.from_dict(first.to_dict()) == first
    with pytest.raises(ValueError, match="same ones"):
        assign_split(more, seed=5, previous=first)
    # calibrate extends a stored split the same way
    rep = calibrate(more, [], split=first, n_resamples=10)
    assert rep.split == second


def test_split_of_a_stratum_follows_the_rule_by_hand():
    # one stratum, fraction 0.3, items in hash order: targets 0.3, 0.6, 0.9, 1.2 ... -> dev when it gets closer
    labels = [HumanLabel(f"i{k}", 1) for k in range(10)]
    split = assign_split(labels, seed=0, dev_fraction=0.3)
    assert len(split.ids("dev")) == 3  # 0.3 * 10
    from evaluators.judgelab.calibration import item_hash
    order = sorted((lab.item_id for lab in labels), key=lambda i: item_hash(0, i))
    # d after each item: t=1 target .3 -> test (|1-.3| > |0-.3|); t=2 .6 -> dev; t=3 .9 -> test (|2-.9|>|1-.9|);
    # t=4 1.2 -> test; t=5 1.5 -> tie -> test; t=6 1.8 -> dev; t=7 2.1 test; t=8 2.4 test; t=9 2.7 dev; t=10 3.0 test
    expected = ["test", "dev", "test", "test", "test", "dev", "test", "test", "dev", "test"]
    assert [split.side(i) for i in order] == expected


def test_labels_under_two_guidelines_versions_are_refused_unless_pooled():
    labels = _labels(40, guidelines="g1") + [HumanLabel("extra", 1, "", "g2")]
    with pytest.raises(ValueError, match="2 guidelines versions \\(g1: 40, g2: 1\\)"):
        calibrate(labels, [])
    assert check_guidelines(labels, pool_guidelines=True) == ("g1", "g2")
    rep = calibrate(labels, [], pool_guidelines=True, n_resamples=10)
    assert rep.pooled_guidelines and rep.guidelines_versions == ("g1", "g2") and "pooled" in rep.notes[0]


def test_missing_and_unlabelled_verdicts_are_reported_and_left_out():
    labels = _labels(60)
    version = JudgeVersion.make("m", "p")
    verdicts = {lab.item_id: lab.label for lab in labels[5:]}
    verdicts["not-labelled"] = 1
    rep = calibrate(labels, [(version, verdicts)], n_resamples=50)
    cal = rep.judges[0]
    assert cal.missing_ids == tuple(lab.item_id for lab in labels[:5])
    assert cal.unlabelled_verdicts == 1
    assert cal.dev.n_items + cal.test.n_items == 55
    assert cal.test.cohen_kappa.value == 1.0 and cal.test.accuracy.value == 1.0
    with pytest.raises(ValueError, match="verdict of"):
        calibrate(labels, [(version, {labels[0].item_id: "yes"})])


def test_judge_version_identity():
    a = JudgeVersion.make("gpt-4o-2024-08-06", "prompt", {"temperature": 0, "max_tokens": 10}, "yes-in-reply")
    b = JudgeVersion.make("gpt-4o-2024-08-06", "prompt", {"max_tokens": 10, "temperature": 0}, "yes-in-reply", "x")
    c = JudgeVersion.make("gpt-4o-2024-08-06", "prompt.", {"temperature": 0, "max_tokens": 10}, "yes-in-reply")
    assert a.key == b.key != c.key and len(a.key) == 12
    import hashlib
    assert a.prompt_hash == hashlib.sha256(b"prompt").hexdigest()


def test_small_sample_flag_uses_the_projects_limit():
    assert SMALL_SAMPLE_ITEMS == 30
    f = split_figures([1] * 15 + [0] * 15, [1] * 30, [f"x{i}" for i in range(30)], n_resamples=50)
    assert not f.accuracy.small_sample and f.sensitivity.small_sample and f.sensitivity.n == 15
