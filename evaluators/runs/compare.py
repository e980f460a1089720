"""Two logged runs compared on the items both scored, with the paired tests of ``compare``.

For each metric the values of the items where both runs have one, in run A's order, go through the same
functions as :func:`evaluators.qa.compare.compare_records` (``python -m evaluators compare``) with the
same arguments: :func:`~evaluators.metrics.statistics.paired_bootstrap` (interval and p-value of the mean
difference B - A), :func:`~evaluators.metrics.statistics.approximate_randomization` and, for a metric whose
values are all 0 or 1, :func:`~evaluators.metrics.statistics.mcnemar`; so a QA run's exact_match and token_f1
numbers equal ``compare``'s on the same files.  Two runs sharing fewer than ``min_overlap`` of their items
(of the larger run) are not joined (:class:`TooFewCommon`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.metrics.statistics import (
    McNemarResult,
    PairedComparison,
    approximate_randomization,
    mcnemar,
    paired_bootstrap,
)
from evaluators.results import DictMixin
from evaluators.run_result import RunResult

#: Share of the larger run's items two runs must share to be compared (the default of ``--min-overlap``).
MIN_OVERLAP = 0.8


class TooFewCommon(ValueError):
    """Two runs share too few items to be compared; the message names the counts."""


@dataclass(frozen=True)
class MetricComparison(DictMixin):
    """One metric of run B against run A on the items where both have a value.

    Attributes
    ----------
    metric : str
    n_paired : int
    only_a, only_b : int
        Items with a value in one run only (left out).
    bootstrap : PairedComparison
        Paired bootstrap of the mean difference B - A (interval, p-value).
    randomization : PairedComparison
        Approximate randomization (exact sign-flip test when cheap) of the same difference.
    mcnemar : McNemarResult or None
        McNemar's exact test when every paired value is 0 or 1.
    """

    metric: str
    n_paired: int
    only_a: int
    only_b: int
    bootstrap: PairedComparison
    randomization: PairedComparison
    mcnemar: McNemarResult | None


@dataclass(frozen=True)
class RunsComparison(DictMixin):
    """Run B against run A.

    Attributes
    ----------
    name_a, name_b : str
    n_a, n_b : int
        Items of each run (of the compared system).
    n_common : int
        Items in both (by item id).
    metrics : tuple of MetricComparison
        One per metric both runs have, in run A's column order.
    not_compared : tuple of str
        Metrics both runs have but no common item has a value of in both (e.g. ``semantic_similarity`` where
        its model was not installed): left out of an all-metrics comparison, named here.
    """

    name_a: str
    name_b: str
    n_a: int
    n_b: int
    n_common: int
    metrics: tuple[MetricComparison, ...]
    not_compared: tuple[str, ...] = ()

    def metric(self, name: str) -> MetricComparison:
        """The comparison of metric ``name`` (KeyError when neither run has it)."""
        for m in self.metrics:
            if m.metric == name:
                return m
        raise KeyError(f"no metric {name!r}; compared: {', '.join(m.metric for m in self.metrics)}")


def rows_of(result: RunResult, system: str | None = None) -> dict[str, int]:
    """Item id -> row index of one system's rows of ``result``.

    Raises
    ------
    ValueError
        ``system`` is not in the run, or it is not given and the run has several systems.
    """
    systems = result.systems
    if system is None:
        if len(systems) > 1:
            raise ValueError(f"the run has {len(systems)} systems ({', '.join(systems)}): name the one to compare")
        system = systems[0] if systems else ""
    elif system not in systems:
        raise ValueError(f"no system {system!r} in the run; its systems: {', '.join(systems)}")
    table = result.items
    return {i: n for n, (i, s) in enumerate(zip(table.item_id, table.system)) if s == system}


def overlap_error(name_a: str, name_b: str, n_a: int, n_b: int, n_common: int,
                  min_overlap: float) -> str | None:
    """Why two runs are not joined (``None`` when they share at least ``min_overlap`` of the larger run's items)."""
    larger = max(n_a, n_b)
    needed = max(1, math.ceil(min_overlap * larger - 1e-9))
    if n_common >= needed:
        return None
    return (f"{name_a} and {name_b} are not joined: n common = {n_common} of {n_a} and {n_b} items; at least "
            f"{needed} needed (--min-overlap {min_overlap} of the larger run)")


def compare_runs(a: RunResult, b: RunResult, name_a: str = "A", name_b: str = "B", *,
                 metrics: Sequence[str] | None = None, system_a: str | None = None, system_b: str | None = None,
                 min_overlap: float = MIN_OVERLAP, n_resamples: int = 10_000, seed: int = 0) -> RunsComparison:
    """Run B against run A, metric by metric, on the items both scored.

    Parameters
    ----------
    a, b : RunResult
    name_a, name_b : str
    metrics : sequence of str, optional
        Default: the metrics of A that B has too.
    system_a, system_b : str, optional
        The system of each run to compare (needed when a run has several).
    min_overlap : float
        In [0, 1]: the share of the larger run's items that must be common.
    n_resamples, seed
        Of the paired bootstrap and the randomization test (as ``compare``'s ``--ci-resamples``, ``--seed``).

    Returns
    -------
    RunsComparison

    Raises
    ------
    TooFewCommon
        Fewer common items than ``min_overlap`` asks (the message: "n common = k of a and b").
    ValueError
        A metric that a run lacks, a system that is not there, or ``min_overlap`` outside [0, 1].
    """
    if not 0 <= min_overlap <= 1:
        raise ValueError("min_overlap must be in [0, 1]")
    rows_a, rows_b = rows_of(a, system_a), rows_of(b, system_b)
    common = [i for i in rows_a if i in rows_b]
    error = overlap_error(name_a, name_b, len(rows_a), len(rows_b), len(common), min_overlap)
    if error:
        raise TooFewCommon(error)
    names = list(metrics) if metrics is not None else [m for m in a.metrics if m in b.items.values]
    out, not_compared = [], []
    for metric in names:
        for result, name in ((a, name_a), (b, name_b)):
            if metric not in result.items.values:
                raise ValueError(f"run {name} has no metric {metric!r}; its metrics: {', '.join(result.metrics)}")
        col_a, col_b = a.items.values[metric], b.items.values[metric]
        defined_a = [i for i in rows_a if col_a[rows_a[i]] is not None]
        defined_b = {i for i in rows_b if col_b[rows_b[i]] is not None}
        ids = [i for i in defined_a if i in defined_b]
        if not ids:
            if metrics is None:  # all metrics asked: one no item has in both is named, not fatal
                not_compared.append(metric)
                continue
            raise TooFewCommon(f"{name_a} and {name_b} have no item with a {metric} value in both")
        xa = [col_a[rows_a[i]] for i in ids]
        xb = [col_b[rows_b[i]] for i in ids]
        binary = all(x in (0, 1) for x in xa + xb)
        out.append(MetricComparison(
            metric, len(ids), len(defined_a) - len(ids), len(defined_b) - len(ids),
            paired_bootstrap(xa, xb, n_resamples=n_resamples, seed=seed),
            approximate_randomization(xa, xb, n_resamples=n_resamples, seed=seed),
            mcnemar(xa, xb) if binary else None))
    if not out and not_compared:
        raise TooFewCommon(f"{name_a} and {name_b} have no item with a value in both for any metric "
                           f"({', '.join(not_compared)})")
    return RunsComparison(name_a, name_b, len(rows_a), len(rows_b), len(common), tuple(out), tuple(not_compared))


def tokenizer_changes(name_a: str, signature_a: str, name_b: str, signature_b: str) -> list[str]:
    """``tokenizer changed since run A: ...`` lines when run B's text was cut differently from run A's.

    The facts both runs' signatures state (tokenizer versions, jieba dictionary and user dictionary digests,
    HMM, stop-word list, script conversion: :func:`evaluators.text.provenance.signature_differences`) are
    compared; the Runs page shows the lines above a side-by-side comparison and ``runs compare`` prints them
    on stderr.

    Parameters
    ----------
    name_a, name_b : str
        The runs' names (A the earlier, the baseline).
    signature_a, signature_b : str
        Their signatures (:attr:`evaluators.runs.store.RunRecord.signature`).

    Returns
    -------
    list of str
        One line per differing fact, naming it (``jieba dict: sha256:… -> sha256:…``); empty when they agree.
    """
    from evaluators.text.provenance import signature_differences

    return [f"tokenizer changed since run {name_a} (run {name_b}): {d}"
            for d in signature_differences(signature_a, signature_b)]


__all__ = ["MIN_OVERLAP", "MetricComparison", "RunsComparison", "TooFewCommon", "compare_runs", "overlap_error",
           "rows_of", "tokenizer_changes"]
