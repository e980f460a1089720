"""Paired comparison of two systems of the HotpotQA comparison file (evaluators.qa.compare)."""

from __future__ import annotations

import pytest

from evaluators.qa import QAConfig, evaluate_qa_file
from evaluators.qa.compare import compare_groups, compare_records
from tests.conftest import require_shared

pytestmark = pytest.mark.realdata


def test_two_systems_of_one_file():
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    report = evaluate_qa_file(path, QAConfig(ci_resamples=0))
    c = compare_groups(report, "Decomp_FullPipeline", "Decomp_SearchFallback")
    assert (c.n_paired, c.only_a, c.only_b) == (50, 0, 0)
    em = c.exact_match_bootstrap
    assert (em.mean_a, em.mean_b) == pytest.approx((0.66, 0.44))  # 33 and 22 of 50 (the repository's own summary)
    assert em.delta == pytest.approx(-0.22) and em.ci_low <= -0.22 <= em.ci_high < 0
    m = c.exact_match_mcnemar
    # 13 questions right only with FullPipeline, 2 only with SearchFallback:
    # exact two-sided p = 2 * (C(15,0) + C(15,1) + C(15,2)) / 2**15 = 2 * 121 / 32768
    assert (m.only_a, m.only_b, m.both, m.neither) == (13, 2, 20, 15)
    assert m.p_value == pytest.approx(242 / 32768)
    assert c.token_f1_randomization.p_value < 0.01 and c.token_f1_bootstrap.p_value < 0.01
    outcomes = [r.outcome for r in c.records]
    assert len(outcomes) == 50 and outcomes.count("won") + outcomes.count("lost") + outcomes.count("tied") == 50
    assert outcomes.count("won") == c.token_f1_bootstrap.won and outcomes.count("lost") == c.token_f1_bootstrap.lost
    # a run against itself: nothing changes
    same = compare_records(report.records, report.records)
    assert same.token_f1_bootstrap.delta == 0 and same.exact_match_mcnemar.p_value == 1.0
