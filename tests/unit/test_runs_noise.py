"""The noise floor of repeated runs (evaluators.runs.noise): flip rates, flaky items, pass@k / pass^k, the noise
band, a candidate judged against it, and the band in a trend."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluators.run_result import ItemTable, RunResult
from evaluators.runs.noise import beyond_noise, noise_floor, repeat_groups
from evaluators.runs.trend import trend


def _run(values, ids=None) -> RunResult:
    ids = ids or tuple(f"q{i}" for i in range(len(values)))
    return RunResult("qa", ItemTable(tuple(ids), ("s",) * len(values), {"exact_match": tuple(values)}))


def test_a_noise_floor_by_hand():
    # items (over 3 repeats): q0 1,1,1  q1 1,0,1  q2 0,0,0  q3 0,1,1
    reps = [("a", _run([1.0, 1.0, 0.0, 0.0])), ("b", _run([1.0, 0.0, 0.0, 1.0])), ("c", _run([1.0, 1.0, 0.0, 1.0]))]
    f = noise_floor(reps, "exact_match")
    assert f.n_items == 4 and f.flaky == ("q1", "q3")
    assert f.flip_rate == pytest.approx((0 + 2 / 3 + 0 + 2 / 3) / 4)  # 2 of the 3 pairs differ on q1 and q3
    # passes c = 3, 2, 0, 2 of n = 3: pass@k = mean(1 - C(3-c, k) / C(3, k)); pass^k = mean(C(c, k) / C(3, k))
    assert f.pass_at_k == pytest.approx({1: 7 / 12, 2: 3 / 4, 3: 3 / 4})
    assert f.pass_hat_k == pytest.approx({1: 7 / 12, 2: (1 + 1 / 3 + 0 + 1 / 3) / 4, 3: 1 / 4})
    # s^2 of q1 and q3: ((1/3)^2 + (2/3)^2 + (1/3)^2) / 2 = 1/3; band = 1.959964 * sqrt(2 * (1/3 + 1/3)) / 4
    assert f.band == pytest.approx(1.959963984540054 * math.sqrt(4 / 3) / 4)
    with pytest.raises(ValueError, match="at least 2 repeats"):
        noise_floor(reps[:1], "exact_match")


def _repeats(seed=0, n=1000):
    """3 repeats of 1,000 items: 5% of the items (50) flip, 25 in the second repeat, 25 in the third."""
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.6).astype(float)
    flipped = rng.choice(n, 50, replace=False)
    runs = []
    for part in (np.array([], dtype=int), flipped[:25], flipped[25:]):
        v = base.copy()
        v[part] = 1 - v[part]
        runs.append(v)
    return base, set(int(i) for i in flipped), [(f"rep{k}", _run(list(v))) for k, v in enumerate(runs)]


def _better(base, flipped, k):
    """The base run with ``k`` wrong items outside the flaky ones made right."""
    v = base.copy()
    wrong = [i for i in range(len(v)) if v[i] == 0 and i not in flipped][:k]
    v[wrong] = 1.0
    return _run(list(v))


def test_repeats_with_5_percent_flips_give_a_band_that_one_item_does_not_pass_and_4_points_do():
    base, flipped, reps = _repeats()
    floor = noise_floor(reps, "exact_match")
    assert set(floor.flaky) == {f"q{i}" for i in flipped}  # the flaky list is the items that flipped
    # 50 flaky items each with s^2 = 1/3: band = 1.96 * sqrt(50 * 2/3) / 1000 = 0.0113
    assert floor.band == pytest.approx(1.959963984540054 * math.sqrt(50 * 2 / 3) / 1000)
    one = beyond_noise(reps, ("one", _better(base, flipped, 1)), "exact_match", floor=floor, n_resamples=2000)
    assert not one.flagged and abs(one.delta) < floor.band
    four = beyond_noise(reps, ("four", _better(base, flipped, 40)), "exact_match", floor=floor, n_resamples=2000)
    assert four.flagged and four.delta > floor.band and four.p_value < 0.05
    assert four.flaky_changed == ()  # only non-flaky items changed


def test_a_step_inside_the_noise_band_is_not_flagged():
    rng = np.random.default_rng(1)
    a = (rng.random(1000) < 0.5).astype(float)
    b = a.copy()
    b[np.flatnonzero(a == 0)[:30]] = 1.0  # +3 points, 30 items gained, none lost
    runs = [("a", _run(list(a))), ("b", _run(list(b)))]
    assert trend(runs, ["exact_match"], n_resamples=2000).steps[0].flagged
    assert not trend(runs, ["exact_match"], n_resamples=2000, noise_bands={"exact_match": 0.05}).steps[0].flagged


def test_repeat_groups_share_task_system_dataset_version_and_config():
    from evaluators.runs.store import RunRecord

    def rec(name, config, patches=()):
        return RunRecord(name, "qa", "record", "hp", "d" * 64, len(patches), patches, "", config, "", "x", name, {},
                         False, "", 1, ("s",), ("exact_match",))

    groups = repeat_groups([rec("1", {"lang": "en"}), rec("2", {"lang": "zh"}), rec("3", {"lang": "en"}),
                            rec("4", {"lang": "en"}, ("p",))])
    assert [[r.name for r in g] for g in groups] == [["1", "3"]]
