"""Boundary similarity, Pk and WindowDiff: ours against segeval on 200-sentence texts.

Target: at least 5x faster than segeval for each of B, Pk and WindowDiff (segeval measured
here at about 304 / 69 / 433 µs per 200-sentence text).

    python bench/segmentation.py [--texts 300] [--rounds 7]

Each text is a pair of random segmentations of 200 sentences with 5 to 40 segments (the
range of real event annotations).  Both implementations run on the same pairs, alternating
round by round; every value is compared (they must agree to 1e-12).  Prints the median
µs per text and the speed-up.  No assertion on time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.metrics.segmentation import boundary_similarity, pk, window_diff  # noqa: E402


def _masses(rng: random.Random, n: int) -> list[int]:
    k = rng.randint(5, 40)
    cuts = sorted(rng.sample(range(1, n), k - 1))
    b = [0, *cuts, n]
    return [b[i + 1] - b[i] for i in range(len(b) - 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    import segeval

    rng = random.Random(2013)
    pairs = [(_masses(rng, 200), _masses(rng, 200)) for _ in range(args.texts)]
    ours = {"boundary_similarity": boundary_similarity, "pk": pk, "window_diff": window_diff}
    theirs = {"boundary_similarity": lambda h, r: float(segeval.boundary_similarity(h, r)),
              "pk": lambda h, r: float(segeval.pk(h, r)),
              "window_diff": lambda h, r: float(segeval.window_diff(h, r))}
    for name in ours:
        for h, r in pairs:
            a, b = ours[name](h, r), theirs[name](h, r)
            if abs(a - b) > 1e-12:
                raise SystemExit(f"{name} disagrees with segeval on {h} / {r}: {a} vs {b}")
    print(f"{args.texts} pairs of 200-sentence segmentations; all values equal segeval's")
    for name in ours:
        t_ours, t_ref = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for h, r in pairs:
                theirs[name](h, r)
            t_ref.append((time.perf_counter() - t0) / len(pairs))
            t0 = time.perf_counter()
            for h, r in pairs:
                ours[name](h, r)
            t_ours.append((time.perf_counter() - t0) / len(pairs))
        o, s = statistics.median(t_ours), statistics.median(t_ref)
        print(f"{name:20s} segeval {s * 1e6:7.1f} µs   ours {o * 1e6:6.1f} µs   speed-up {s / o:5.1f}x (target >= 5x)")


if __name__ == "__main__":
    main()
