"""Judge lab simulations (issue 33): coverage of the bias-adjusted accuracy's interval, and the length-bias
interval's power and coverage through the stub judge.

    python bench/judgelab.py [RUNS] [SEED]

1. Bias-adjusted accuracy (Lee et al. 2025, :func:`evaluators.judgelab.bias_adjusted_accuracy`): for each
   setting (true accuracy theta, specificity q0, sensitivity q1, n target items, m calibration items with
   base rate theta) RUNS seeded evaluations drawn as counts (binomial draws, the same distribution as the
   item-level simulation of tests/unit/test_judgelab_corrected.py), and the share of 95% intervals that cover
   theta; beside it the naive interval (the raw judge share's Wald interval) and the correction with the
   test set's uncertainty only.
2. Length bias (:func:`evaluators.judgelab.length_bias`): RUNS // 10 seeds of 200 items (lengths 100-500
   characters) through the stub judge (sensitivity = specificity = 0.8), with +0.1 per 100 characters and
   without: the share of intervals that exclude 0, and that cover 0.  The test runs 200 seeds of each.

Measured (10,000 runs, seed 0; binomial sd of a 95% coverage 0.0022 at 10,000 runs, 0.0069 at 1,000; "raw
judge": the Wald interval of the judge's share, which covers theta only where the judge's errors happen to
cancel, p = theta q1 + (1 - theta)(1 - q0) close to theta; "no interval": runs whose calibration draw left
the judge no better than chance, counted as misses):

    theta  q0    q1    n     m     adjusted  test-only  raw judge  no interval
    0.60   0.70  0.90  1000  200   0.9563    0.6674     0.0219     0
    0.60   0.80  0.85  500   200   0.9509    0.7904     0.9233     0
    0.30   0.80  0.90  1000  300   0.9544    0.7615     0.0000     0
    0.70   0.75  0.90  2000  400   0.9527    0.6832     0.9210     0
    0.90   0.70  0.95  1000  100   0.9667    0.5309     0.7111     8
    0.10   0.95  0.70  1000  100   0.9673    0.5259     0.7081     9
    0.50   0.90  0.90  300   60    0.9589    0.7576     0.9465     0

The adjusted interval is close to nominal with a calibration set of a few hundred items and conservative
(0.96-0.97) when one of its two kinds is rare (about 10 items behind q0 or q1 above).

    length bias, 1,000 seeds x 200 items: +0.1 judge excludes 0 in 0.995; clean judge covers 0 in 0.955

The test (1,000 item-level runs, theta 0.6, q0 0.7, q1 0.9, n 1000, m 200, seed 0) measured 0.952.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.judgelab import bias_adjusted_accuracy, length_bias  # noqa: E402
from tests.helpers.judge_stub import StubJudge, scores_array  # noqa: E402

SETTINGS = [(0.6, 0.7, 0.9, 1000, 200), (0.6, 0.8, 0.85, 500, 200), (0.3, 0.8, 0.9, 1000, 300),
            (0.7, 0.75, 0.9, 2000, 400), (0.9, 0.7, 0.95, 1000, 100), (0.1, 0.95, 0.7, 1000, 100),
            (0.5, 0.9, 0.9, 300, 60)]


def coverage(theta, q0, q1, n, m, runs, seed):
    rng = np.random.default_rng(seed)
    z = norm.ppf(0.975)
    adjusted = test_only = raw = undefined = 0
    for _ in range(runs):
        n_true = rng.binomial(n, theta)
        positives = rng.binomial(n_true, q1) + rng.binomial(n - n_true, 1 - q0)
        m1 = rng.binomial(m, theta)
        m0 = m - m1
        if not m0 or not m1:
            continue  # the calibration set needs both kinds (vanishingly rare here)
        a = bias_adjusted_accuracy(positives / n, n, rng.binomial(m0, q0) / m0, m0, rng.binomial(m1, q1) / m1, m1)
        if a.ci_low is None:  # judge no better than chance on this calibration draw: no interval, a miss
            undefined += 1
        else:
            adjusted += a.ci_low <= theta <= a.ci_high
        p = positives / n
        se_p = np.sqrt(p * (1 - p) / n)
        raw += p - z * se_p <= theta <= p + z * se_p
        if a.estimate is not None:
            se = se_p / (a.q0 + a.q1 - 1)
            test_only += a.estimate - z * se <= theta <= a.estimate + z * se
    return adjusted / runs, test_only / runs, raw / runs, undefined


def length_bias_rates(bias, seeds):
    judge = StubJudge(sensitivity=0.8, specificity=0.8, length_bias=bias)
    excluded = covered = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        labels = (rng.random(200) < 0.5).astype(int)
        lengths = rng.uniform(100, 500, 200)
        r = length_bias(scores_array(judge, labels, lengths, rng), lengths, labels, n_resamples=1000, seed=seed)
        excluded += r.excludes_zero
        covered += r.ci_low <= 0 <= r.ci_high
    return excluded / len(seeds), covered / len(seeds)


def main(runs: int = 10_000, seed: int = 0) -> None:
    print(f"bias-adjusted accuracy, {runs:,} runs per setting, seed {seed}")
    print("theta  q0    q1    n     m     adjusted  test-only  raw judge  no interval")
    for theta, q0, q1, n, m in SETTINGS:
        t = time.perf_counter()
        adj, test_only, raw, undefined = coverage(theta, q0, q1, n, m, runs, seed)
        print(f"{theta:.2f}   {q0:.2f}  {q1:.2f}  {n:<5} {m:<5} {adj:.4f}    {test_only:.4f}     {raw:.4f}"
              f"     {undefined}   ({time.perf_counter() - t:.1f} s)")
    seeds = max(10, runs // 10)
    t = time.perf_counter()
    excluded, _ = length_bias_rates(0.1, range(seeds))
    _, covered = length_bias_rates(0.0, range(seeds, 2 * seeds))
    print(f"length bias, {seeds:,} seeds x 200 items: +0.1 judge excludes 0 in {excluded:.3f}; clean judge covers 0 "
          f"in {covered:.3f} ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
