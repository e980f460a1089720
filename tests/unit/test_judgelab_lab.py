"""The lab's run function and the comparison of two judge versions, on examples worked by hand."""

import pytest

from evaluators.judgelab import HumanLabel, JudgeVersion
from evaluators.judgelab.lab import compare_versions, run_lab
from evaluators.review.links import parse_link, review_url


def test_compare_versions_by_hand():
    before = {"a": 1, "b": 0, "c": 1, "d": 0, "问": 1}
    after = {"a": 1, "b": 1, "c": 0, "d": 0, "问": 1, "e": 1}
    c = compare_versions(before, after, names=("v1", "v2 中文"), n_resamples=200)
    # e is judged by v2 only; on a, b, c, d, 问: before 1 0 1 0 1, after 1 1 0 0 1
    assert c.drift.missing_ids == ("e",) and c.n_items == 5
    assert c.drift.up_ids == ("b",) and c.drift.down_ids == ("c",) and c.drift.moved_share == pytest.approx(2 / 5)
    assert c.agreement == pytest.approx(3 / 5)
    # p_o = 3/5; both versions say right on 3 of 5: p_e = 0.6^2 + 0.4^2 = 0.52; kappa = 0.08 / 0.48 = 1/6
    assert c.cohen_kappa.value == pytest.approx(1 / 6, abs=1e-12) and c.cohen_kappa.small_sample
    assert (c.drift.mcnemar.only_a, c.drift.mcnemar.only_b, c.drift.mcnemar.p_value) == (1, 1, 1.0)
    # the anchors fixed: only a and b compared
    fixed = compare_versions(before, after, anchor_ids=["a", "b", "b"], n_resamples=0)
    assert fixed.n_items == 2 and fixed.agreement == pytest.approx(1 / 2) and fixed.drift.moved_ids == ("b",)


def test_run_lab_refuses_two_versions_of_one_name_and_notes_unmatched_targets():
    labels = [HumanLabel(f"q{i}", i % 2, "en" if i < 20 else "zh") for i in range(40)]
    v = JudgeVersion.make("m", "prompt", name="same")
    verdicts = {lab.item_id: lab.label for lab in labels}
    with pytest.raises(ValueError, match="both named 'same'"):
        run_lab(labels, [(v, verdicts), (v, verdicts)], n_resamples=0)
    lab = run_lab(labels, [(v, verdicts)], target={"other": {"t1": 1}}, n_resamples=0)
    assert lab.corrected == () and lab.comparisons == ()
    assert lab.corrected_notes == ("target verdicts of 'other' have no calibrated version of that name",)
    # a perfect judge on its own: kappa 1 on both sides, no warning; no lengths, no length bias
    assert [cal.test.cohen_kappa.value for cal in lab.report.judges] == [1.0] and not lab.report.judges[0].overfit
    assert lab.length_bias == () and lab.review_ref("q1") is None


def test_review_url_round_trips_and_refuses_what_a_link_would():
    assert parse_link({"session": "7", "item": "42"}).item == 42 and review_url(7, 42) == "/Review?session=7&item=42"
    assert review_url(7) == "/Review?session=7"
    for bad in (0, -1, 2 ** 63, True):
        with pytest.raises(ValueError):
            review_url(bad, 1)
