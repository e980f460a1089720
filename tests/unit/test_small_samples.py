"""Small samples (issue 29): exact paired tests where they are cheap, and a flag on the bootstrap p-value
where it is not trustworthy (few items, few discordant pairs)."""

import itertools

import numpy as np
import pytest

from evaluators.metrics import statistics as st
from evaluators.metrics.before_after import score_effect


def brute_force_sign_flip_p(d):
    """Every sign assignment of every difference (zeros included), counted by hand."""
    d = [float(x) for x in d]
    observed = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-9
               for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


@pytest.mark.parametrize("seed", range(6))
def test_exact_sign_flip_p_equals_a_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    d = np.round(rng.normal(0.2, 0.5, n), 2) * (rng.random(n) < 0.8)  # some zeros, some ties in |d|
    assert st.exact_sign_flip_p(d) == pytest.approx(brute_force_sign_flip_p(d), abs=1e-12)


def test_exact_sign_flip_p_by_hand():
    # d = (1, 1, 1): |sum| = 3 only for all + or all -: 2 of 8 = 0.25
    assert st.exact_sign_flip_p([1, 1, 1]) == 0.25
    # zeros do not count: (1, 1, 1, 0, 0) is the same test
    assert st.exact_sign_flip_p([1, 0, 1, 0, 1]) == 0.25
    assert st.exact_sign_flip_p([0, 0]) == 1.0
    with pytest.raises(ValueError):
        st.exact_sign_flip_p(np.ones(st.EXACT_SIGN_FLIP_MAX + 1))


def test_twenty_changes_are_enumerated_quickly_and_agree_with_monte_carlo():
    rng = np.random.default_rng(3)
    d = rng.normal(0.15, 0.5, 20)
    exact = st.exact_sign_flip_p(d)
    # the Monte Carlo test on 21 changes vs 20: compare with a direct Monte Carlo on these 20 instead
    signs = rng.choice((-1, 1), size=(20_000, 20))
    mc = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-9)
    assert exact == pytest.approx(mc, abs=4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4)


# The two cases of the issue: 5 stories (bootstrap p = 0.0004 vs randomization 0.1244) and 4 changed
# records of many (0.0294 vs 0.1276).  Either the p-values agree (exact test) or the bootstrap one is flagged.
FIVE_A = [0.41, 0.52, 0.38, 0.47, 0.55]
FIVE_B = [0.49, 0.60, 0.45, 0.56, 0.61]          # B higher on every story


def test_five_items_randomization_is_exact_and_bootstrap_is_flagged():
    boot = st.paired_bootstrap(FIVE_A, FIVE_B)
    rand = st.approximate_randomization(FIVE_A, FIVE_B)
    assert boot.p_value < 0.01                      # what the bootstrap says on 5 items
    assert rand.exact and rand.p_value == 2 / 32    # all 5 positive: 2 of 2^5 flips as extreme
    assert rand.p_value == brute_force_sign_flip_p(np.subtract(FIVE_B, FIVE_A))
    assert "exact sign-flip" in rand.method and not rand.p_value_is_bound
    assert boot.small_sample.startswith("5 items < 30")
    assert "5 discordant pairs" in boot.small_sample
    assert rand.small_sample == ""


def test_four_changed_records_of_many_are_flagged_and_exact():
    before = [1.0] * 60 + [0.0] * 40
    after = list(before)
    for i in (60, 61, 62, 63):                      # 4 records fixed by the corrections
        after[i] = 1.0
    boot = st.paired_bootstrap(before, after)
    rand = st.approximate_randomization(before, after)
    mc = st.mcnemar(before, after)
    assert boot.small_sample == "4 discordant pairs (items whose scores differ) < 25"
    assert rand.exact and rand.p_value == 2 / 16 == mc.p_value  # exact sign flip = exact McNemar here
    effect = score_effect({"run": {"exact_match": before}}, {"run": {"exact_match": after}}, ["exact_match"],
                          binary=["exact_match"], n_resamples=2000)
    m = effect.changes[0].metric("exact_match")
    assert m.change.small_sample and m.randomization.exact and m.randomization.p_value == 0.125
    assert m.trusted_p == (pytest.approx(0.125), "McNemar exact")


def test_exact_mcnemar_equals_statsmodels_on_few_discordant_pairs():
    from statsmodels.stats.contingency_tables import mcnemar

    for only_a, only_b in ((0, 4), (1, 3), (2, 7), (5, 5), (0, 1)):
        a = [1] * only_a + [0] * only_b + [1] * 10 + [0] * 3
        b = [0] * only_a + [1] * only_b + [1] * 10 + [0] * 3
        table = [[10, only_a], [only_b, 3]]
        assert st.mcnemar(a, b).p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)


def test_large_samples_are_not_flagged_and_keep_the_monte_carlo_test():
    rng = np.random.default_rng(1)
    a = rng.random(200)
    b = np.clip(a + rng.normal(0.02, 0.1, 200), 0, 1)
    boot = st.paired_bootstrap(a, b, n_resamples=500)
    rand = st.approximate_randomization(a, b, n_resamples=500)
    assert boot.small_sample == "" and not rand.exact and "approximate randomization" in rand.method


def test_reports_show_the_flag_and_the_exact_p():
    from evaluators.reports.corrections import effect_rows, patch_effect_text

    before = [1.0] * 60 + [0.0] * 40
    after = before[:60] + [1.0] * 4 + [0.0] * 36
    effect = score_effect({"run": {"exact_match": before}}, {"run": {"exact_match": after}}, ["exact_match"],
                          binary=["exact_match"], n_resamples=2000)
    text = patch_effect_text(effect)
    assert "[!]" in text and "4 discordant pairs" in text and "(exact)" in text and "McNemar exact p = 0.125" in text
    row = effect_rows(effect)[0]
    assert row["p_randomization"] == 0.125 and row["p_randomization_exact"] and row["small_sample"]
