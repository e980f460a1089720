"""max_weight_assignment equals scipy's linear_sum_assignment (maximize) on its positive pairs."""

import random

import numpy as np
from scipy.optimize import linear_sum_assignment

from evaluators.metrics.assignment import max_weight_assignment


def _total(weights, pairs):
    return sum(weights[r][c] for r, c in pairs)


def test_conflict_free_problems_need_no_solver():
    w = [[0.0, 0.9, 0.0], [0.0, 0.0, 0.0], [0.6, 0.0, 0.0]]
    assert max_weight_assignment(w) == [(0, 1), (2, 0)]


def test_conflicts_are_solved_optimally():
    # Greedy would take (0, 0) = .82 and leave row 1 with nothing; the optimum is .8 + .54.
    w = [[0.82, 0.8], [0.54, 0.0]]
    assert max_weight_assignment(w) == [(0, 1), (1, 0)]


def test_random_parity_with_scipy():
    rng = random.Random(3)
    for _ in range(300):
        n, m = rng.randint(0, 7), rng.randint(0, 7)
        w = [[rng.choice([0.0, 0.0, round(rng.random(), 3)]) for _ in range(m)] for _ in range(n)]
        ours = max_weight_assignment(w)
        if n and m:
            rr, cc = linear_sum_assignment(np.array(w), maximize=True)
            ref = [(int(r), int(c)) for r, c in zip(rr, cc) if w[r][c] > 0]
        else:
            ref = []
        assert abs(_total(w, ours) - _total(w, ref)) < 1e-9
        assert len({r for r, _ in ours}) == len(ours) == len({c for _, c in ours})
