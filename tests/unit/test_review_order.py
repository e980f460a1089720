"""Most-informative-first review order and the projected interval width (evaluators.review.order)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.metrics.ppi import ppi_mean
from evaluators.review.order import informative_order, projected_width, tier_of

PAYLOADS = [
    {"kind": "qa", "id": "q1", "system": "A", "exact_match": 1.0, "token_f1": 1.0},   # 0 discordant with 1
    {"kind": "qa", "id": "q1", "system": "B", "exact_match": 0.0, "token_f1": 0.0},   # 1 discordant
    {"kind": "qa", "id": "q2", "system": "A", "exact_match": 0.0, "token_f1": 0.5},   # 2 partial credit
    {"kind": "qa", "id": "q2", "system": "B", "exact_match": 0.0, "token_f1": 0.0},   # 3 other (both wrong)
    {"kind": "memory", "id": "m1", "scores": {"judge_score": 1.0, "exact_match": 0.0}},  # 4 judge disagrees
    {"kind": "memory", "id": "m2", "scores": {"judge_score": 1.0, "exact_match": 1.0}},  # 5 other
    {"kind": "qa", "id": "中3", "system": "A", "exact_match": 1.0, "token_f1": 1.0},   # 6 other (one system only)
]


def test_tiers_and_order():
    order = informative_order(PAYLOADS, seed=3)
    assert sorted(order) == list(range(7))
    assert set(order[:2]) == {0, 1} and order[2] == 2 and order[3] == 4 and set(order[4:]) == {3, 5, 6}
    assert tier_of(PAYLOADS[4], set()) == "judge_disagrees" and tier_of(PAYLOADS[5], set()) == "other"
    # seeded: the same seed gives the same order; within a tier another seed may reorder
    assert informative_order(PAYLOADS, seed=3) == order
    assert {tuple(informative_order(PAYLOADS, seed=s)[4:]) for s in range(20)} != {tuple(order[4:])}
    random = informative_order(PAYLOADS, order="random", seed=1)
    assert sorted(random) == list(range(7)) and random == [int(i) for i in np.random.default_rng(1).permutation(7)]
    with pytest.raises(ValueError, match="order must be"):
        informative_order(PAYLOADS, order="smart")


def test_projected_width():
    rng = np.random.default_rng(5)
    y = (rng.random(60) < 0.7).astype(float)
    yhat = np.where(rng.random(60) < 0.1, 1 - y, y)
    yu = (rng.random(900) < 0.68).astype(float)
    widths = projected_width(y, yhat, yu, [0, 50, 200, 800])
    assert widths[0] == pytest.approx(ppi_mean(y, yhat, yu).width)   # no more labels: today's interval
    assert np.all(np.diff(widths) < 0)                                 # more labels, narrower
    with pytest.raises(ValueError, match="extra"):
        projected_width(y, yhat, yu, 900)
