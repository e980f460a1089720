"""A seeded history of logged runs for the Runs page's tests, its browser test and ``bench/runs.py``.

:func:`history` logs runs of one dataset: per run, each item right (1.0) or wrong (0.0) with a run's own rate, a
token F1 beside it and a ``lang`` slice (``zh`` for the odd items, ``en`` for the even ones), in time order one
minute apart; items are redrawn only where a run's rate changes, so consecutive runs at one rate are identical
and a rate change is a real step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluators.run_result import ItemTable, RunResult

#: The dataset every :func:`history` run is of.
GT_DIGEST = "0" * 63 + "1"


def run_result(values: Sequence[float], f1: Sequence[float], ids: Sequence[str], system: str = "model") -> RunResult:
    """A one-system QA-shaped run result: ``exact_match`` and ``token_f1`` per item and its ``lang`` slice."""
    lang = tuple("zh" if int(i.rsplit("-", 1)[-1]) % 2 else "en" for i in ids)
    table = ItemTable(tuple(ids), (system,) * len(ids), {"exact_match": list(values), "token_f1": list(f1)},
                      {"lang": lang})
    return RunResult("qa", table, unit="record", signature="test history")


def history(store, rates: Sequence[float], *, n_items: int = 400, seed: int = 0, prefix: str = "v",
            overlap_last: float | None = None) -> list:
    """Log ``len(rates)`` runs named ``{prefix}1``, ``{prefix}2`` ... into ``store``.

    Parameters
    ----------
    store : RunStore
    rates : sequence of float
        Each run's share of right items; a run at the previous run's rate repeats its values exactly.
    n_items : int
    seed : int
    prefix : str
    overlap_last : float, optional
        The last run keeps only this share of the items (the rest replaced by new ids), so that its step is
        not joined.

    Returns
    -------
    list of RunRecord
    """
    rng = np.random.default_rng(seed)
    ids = [f"q-{i}" for i in range(n_items)]
    records, values, f1, previous = [], None, None, None
    for k, rate in enumerate(rates):
        if rate != previous:
            values = [float(x) for x in (rng.random(n_items) < rate)]
            f1 = [v if v else float(round(x, 3)) for v, x in zip(values, rng.random(n_items) * 0.6)]
        previous = rate
        run_ids = ids
        if overlap_last is not None and k == len(rates) - 1:
            keep = int(overlap_last * n_items)
            run_ids = ids[:keep] + [f"new-{i}" for i in range(n_items - keep)]
        result = run_result(values, f1, run_ids)
        records.append(store.log_run(result, name=f"{prefix}{k + 1}", who="test", gt_name="history.jsonl",
                                     gt_digest=GT_DIGEST, created_at=f"2026-11-{1 + k // 1440:02d}T"
                                     f"{(k // 60) % 24:02d}:{k % 60:02d}:00Z", tags={"seed": str(seed)}))
    return records
