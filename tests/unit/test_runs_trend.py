"""Trends over runs (evaluators.runs.trend) and two runs compared (evaluators.runs.compare): the points'
intervals, the steps' paired tests, the corrections (Holm, Benjamini-Hochberg), the overlap rule, and a
seeded simulation of the acceptance criterion."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from evaluators.metrics.statistics import adjust_p_values, approximate_randomization, bootstrap_ci, paired_bootstrap
from evaluators.run_result import ItemTable, RunResult
from evaluators.runs.compare import TooFewCommon, compare_runs
from evaluators.runs.trend import trend


def test_holm_and_benjamini_hochberg_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm, m = 4, sorted 0.005, 0.01, 0.03, 0.04: 4 x 0.005 = 0.02; 3 x 0.01 = 0.03; 2 x 0.03 = 0.06;
    # 1 x 0.04 = 0.04, raised to the running maximum 0.06
    assert adjust_p_values(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: p(i) m / i = 0.02, 0.02, 0.04, 0.04, then the running minimum from the largest down
    assert adjust_p_values(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust_p_values(p, "bh") == pytest.approx(list(false_discovery_control(p, method="bh")))
    assert adjust_p_values([0.6, 0.9], "holm") == [1.0, 1.0]  # capped at 1
    assert adjust_p_values([], "holm") == []
    with pytest.raises(ValueError, match="one of holm, bh"):
        adjust_p_values(p, "bonferroni")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_p_values([float("nan")])


def _run(values: dict, ids=None, lang=None, system="s") -> RunResult:
    n = len(next(iter(values.values())))
    ids = ids or tuple(f"q{i}" for i in range(n))
    lang = lang or tuple(("en", "zh")[i % 2] for i in range(n))
    return RunResult("qa", ItemTable(tuple(ids), (system,) * n, values, {"lang": lang}), unit="record")


def test_points_and_steps_are_the_paired_tests_of_compare():
    rng = np.random.default_rng(3)
    a = [float(x) for x in rng.integers(0, 2, 40)]
    b = [float(x) for x in rng.integers(0, 2, 40)]
    f = [float(x) for x in rng.random(40)]
    g = [float(x) for x in rng.random(40)]
    runs = [("v1", _run({"exact_match": a, "token_f1": f})), ("v2", _run({"exact_match": b, "token_f1": g}))]
    t = trend(runs, ["exact_match", "token_f1"], slices=["lang"], n_resamples=500, seed=2, test="bootstrap")
    (overall,) = [p for p in t.points if p.run == "v1" and p.metric == "exact_match" and p.slice == ""]
    ci = bootstrap_ci(a, n_resamples=500, seed=2)
    assert (overall.n, overall.mean, overall.ci_low, overall.ci_high) == (40, sum(a) / 40, ci.ci_low, ci.ci_high)
    (step,) = t.steps
    assert step.joined and step.n_common == 40 and len(step.tests) == 2 * 3  # 2 metrics x (all, en, zh)
    (em,) = [x for x in step.tests if x.metric == "exact_match" and x.slice == ""]
    ref = paired_bootstrap(a, b, n_resamples=500, seed=2)
    assert (em.delta, em.ci_low, em.ci_high, em.p_value) == (ref.delta, ref.ci_low, ref.ci_high, ref.p_value)
    (zh,) = [x for x in step.tests if x.metric == "token_f1" and x.slice_value == "zh"]
    ref = paired_bootstrap(f[1::2], g[1::2], n_resamples=500, seed=2)  # zh: the odd items
    assert (zh.n, zh.delta, zh.p_value) == (20, ref.delta, ref.p_value)
    raw = [x.p_value for x in step.tests]
    assert [x.p_adjusted for x in step.tests] == adjust_p_values(raw, "holm")
    assert step.flagged == any(x.p_adjusted <= 0.05 for x in step.tests)
    # the default test: approximate randomization's p-value, the bootstrap's interval, BH on request
    (em,) = [x for x in trend(runs, ["exact_match"], n_resamples=500, seed=2, correction="bh").steps[0].tests]
    ref = approximate_randomization(a, b, n_resamples=500, seed=2)
    boot = paired_bootstrap(a, b, n_resamples=500, seed=2)
    assert (em.p_value, em.p_adjusted, em.ci_low) == (ref.p_value, ref.p_value, boot.ci_low)  # a family of 1
    # compare_runs gives the same bootstrap numbers
    c = compare_runs(runs[0][1], runs[1][1], "v1", "v2", n_resamples=500, seed=2)
    assert c.metric("exact_match").bootstrap == paired_bootstrap(a, b, n_resamples=500, seed=2)
    assert c.metric("exact_match").mcnemar is not None and c.metric("token_f1").mcnemar is None


def test_two_runs_overlapping_40_percent_are_not_joined():
    ones = [1.0] * 1000
    a = _run({"exact_match": ones}, ids=[f"q{i}" for i in range(1000)])
    b = _run({"exact_match": ones}, ids=[f"q{i}" for i in range(600, 1600)])  # 400 common of 1000 and 1000
    with pytest.raises(TooFewCommon, match="n common = 400 of 1000 and 1000 items; at least 800 needed"):
        compare_runs(a, b, "old", "new")
    (step,) = trend([("old", a), ("new", b)], ["exact_match"], n_resamples=0).steps
    assert (step.joined, step.flagged, step.n_common, step.tests) == (False, False, 400, ())
    assert "n common = 400 of 1000 and 1000" in step.reason
    # at 40% asked for, they are compared on the 400
    assert compare_runs(a, b, min_overlap=0.4, n_resamples=0).metric("exact_match").n_paired == 400


def test_a_metric_no_item_has_in_both_runs_is_named_not_fatal():
    """Two persona runs logged where the embedding model was not installed: semantic_similarity is None on every
    item of both.  Comparing all metrics compares the others and names it; asking for it alone is refused."""
    a = _run({"exact_match": [1.0, 0.0, 1.0, 1.0], "semantic_similarity": [None] * 4})
    b = _run({"exact_match": [1.0, 1.0, 1.0, 1.0], "semantic_similarity": [None] * 4})
    c = compare_runs(a, b, "old", "new", n_resamples=0)
    assert [m.metric for m in c.metrics] == ["exact_match"] and c.not_compared == ("semantic_similarity",)
    em = c.metric("exact_match").bootstrap
    assert (em.mean_a, em.mean_b, em.won, em.lost, em.tied) == (0.75, 1.0, 1, 0, 3)  # 3/4 -> 4/4, q1 won
    from evaluators.reports.runs import comparison_text

    assert "not compared (no item has a value in both runs): semantic_similarity" in comparison_text(c)
    with pytest.raises(TooFewCommon, match="no item with a semantic_similarity value in both"):
        compare_runs(a, b, "old", "new", metrics=["semantic_similarity"], n_resamples=0)
    none = _run({"semantic_similarity": [None] * 4})
    with pytest.raises(TooFewCommon, match="for any metric \\(semantic_similarity\\)"):
        compare_runs(none, none, "old", "new", n_resamples=0)


def _history(seed: int, n_runs: int = 10, n: int = 1000, step_at: int = 5, drop: float = 0.05):
    """10 runs of 1,000 items, 4 metrics, a 3-valued slice.  Each item has, per metric, a latent chance of a right
    answer drawn from Beta(0.35, 0.15) (mean 0.7, most items nearly always right or always wrong, as repeated
    runs of one system are); each run draws every item's 0/1 outcome afresh.  From run ``step_at`` on every chance
    is scaled by (1 - 0.05 / 0.7): a real step of -5 points in expectation; the other 8 steps are noise only."""
    rng = np.random.default_rng(seed)
    ids = tuple(f"q{i}" for i in range(n))
    part = tuple(("a", "b", "c")[i % 3] for i in range(n))
    p = rng.beta(0.35, 0.15, size=(4, n))
    runs = []
    for r in range(n_runs):
        q = p * (1 - drop / 0.7) if r >= step_at else p
        draws = (rng.random((4, n)) < q).astype(float)
        runs.append((f"r{r}", RunResult("sim", ItemTable(ids, ("s",) * n, {f"m{k}": tuple(draws[k]) for k in range(4)},
                                                          {"part": part}))))
    return runs


#: Replicates of the simulation (the acceptance's 200; about 45 s on a busy 2-core machine).
REPLICATES = 200


def test_simulation_the_real_step_is_flagged_and_noise_steps_are_not():
    real = false = 0
    for rep in range(REPLICATES):
        t = trend(_history(rep), ["m0", "m1", "m2", "m3"], slices=["part"], n_resamples=1000, point_resamples=0,
                  seed=rep, intervals=False)  # the default test: approximate randomization, Holm
        assert len(t.steps) == 9 and all(len(s.tests) == 4 * 4 for s in t.steps)  # 4 metrics x (all + 3 parts)
        flags = [s.flagged for s in t.steps]
        real += flags[4]
        false += sum(flags[:4]) + sum(flags[5:])
    # the real step (r4 -> r5) flagged in >= 95% of replicates; a noise step's family (16 tests) falsely
    # flagged in <= 5% of the 8 x 200 noise families
    assert real >= 0.95 * REPLICATES, real
    assert false <= 0.05 * 8 * REPLICATES, false
