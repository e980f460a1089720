"""What the Runs page reads from the registry (``pages/8_Runs.py``), in the engine so the page only draws.

- :func:`summary_points`: a metric's points over runs from the summary rows each run logged
  (:attr:`~evaluators.runs.store.RunRecord.summary`): no per-item table is read, so the "as scored" line of a
  trend over 1,000 runs costs one query (``bench/runs.py``);
- :func:`page_trend`: those points and the steps between consecutive runs tested on their items
  (:func:`evaluators.runs.trend.trend`), the same :class:`~evaluators.runs.trend.Trend` as ``runs trend --format
  json --ci-resamples 1000`` (the summary rows' intervals are 1,000-resample bootstraps, seed 0); only the latest
  ``tested_steps`` steps are tested, the earlier ones say so;
- :func:`trend_results`: the runs' results as ``runs trend`` reads them (the columns of the metrics and slices,
  or every run re-scored on the current GT);
- :func:`gt_changes`: where the dataset's GT version changes between consecutive runs.

(Owned by the Runs page's branch; ``evaluators/cli/runs.py`` has its own copies of the column choice.)
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluators.run_result import ALL
from evaluators.runs.trend import Trend, TrendPoint, TrendStep, trend

#: Bootstrap resamples of the summary rows a run logs (:meth:`evaluators.run_result.RunResult.summary`'s
#: default): the page tests steps with as many, so its trend is ``runs trend --ci-resamples 1000``.
SUMMARY_RESAMPLES = 1000

def columns_of(record, metrics: Sequence[str], slices: Sequence[str] = ()) -> list[str]:
    """The columns of ``record`` that a trend of ``metrics`` by ``slices`` reads (those it has).

    Parameters
    ----------
    record : RunRecord
    metrics, slices : sequence of str

    Returns
    -------
    list of str
        Metric columns first, then slice columns.
    """
    have = {s["slice"] for s in record.summary if s["slice"]}
    return [m for m in metrics if m in record.metrics] + [s for s in slices if s in have]


def slices_of(records: Sequence) -> list[str]:
    """The slice columns any of ``records`` logged (``question_type``, ``lang`` ...), sorted."""
    return sorted({s["slice"] for r in records for s in r.summary if s["slice"]})


def metrics_of(records: Sequence) -> list[str]:
    """The metrics of ``records`` in first-seen order."""
    return list(dict.fromkeys(m for r in records for m in r.metrics))


def summary_points(records: Sequence, metric: str, slices: Sequence[str] = ()) -> tuple[TrendPoint, ...]:
    """A metric's points over runs from the runs' logged summary rows (no item is read).

    Parameters
    ----------
    records : sequence of RunRecord
        In time order, each of one system (a multi-system run gives its first system's rows).
    metric : str
    slices : sequence of str
        Slice columns: beside every item (``""`` / ``all``), each of their values.

    Returns
    -------
    tuple of TrendPoint
        In the order of :func:`evaluators.runs.trend.trend`'s points: by run, then every item, then each slice's
        values sorted; a run without the metric has none.
    """
    out = []
    for index, r in enumerate(records):
        system = r.systems[0] if r.systems else ""
        rows = [s for s in r.summary if s["metric"] == metric and s["system"] == system]
        groups = [s for s in rows if s["slice"] == ""]
        for name in slices:
            groups += sorted((s for s in rows if s["slice"] == name), key=lambda s: s["slice_value"])
        out += [TrendPoint(r.name, index, metric, s["slice"], s["slice_value"] if s["slice"] else ALL, s["n"],
                           s["mean"], s["ci_low"], s["ci_high"]) for s in groups]
    return tuple(out)


def trend_results(store, records: Sequence, metrics: Sequence[str], slices: Sequence[str] = (), *,
                  current_gt: bool = False) -> list:
    """``(name, RunResult)`` of each record as ``runs trend`` reads them.

    Parameters
    ----------
    store : RunStore
    records : sequence of RunRecord
    metrics, slices : sequence of str
        The columns read (as logged).
    current_gt : bool
        Every run re-scored on its dataset's current GT version (:func:`evaluators.runs.rescore.on_current_gt`;
        whole runs are read).

    Returns
    -------
    list of (str, RunResult)

    Raises
    ------
    ValueError
        A run that cannot be re-scored (``current_gt``).
    """
    if current_gt:
        from evaluators.runs.rescore import on_current_gt

        return [(r.name, on_current_gt(store, r.name)[0]) for r in records]
    return [(r.name, store.load(r.name, columns_of(r, metrics, slices))) for r in records]


def page_trend(store, records: Sequence, metric: str, *, slices: Sequence[str] = (), correction: str = "holm",
               alpha: float = 0.05, test: str = "randomization", seed: int = 0, min_overlap: float = 0.8,
               tested_steps: int | None = None, noise_bands=None) -> Trend:
    """The page's "as scored" trend: points from the summary rows, the latest steps tested on their items.

    Parameters
    ----------
    store : RunStore
    records : sequence of RunRecord
        One dataset's runs in time order (at least one).
    metric : str
    slices : sequence of str
    correction : {"holm", "bh"}
    alpha : float
    test : {"randomization", "bootstrap"}
    seed : int
    min_overlap : float
    tested_steps : int, optional
        Test only the latest this many steps (all by default); the earlier ones are not joined, with the reason.
    noise_bands : mapping of str to float, optional
        As :func:`evaluators.runs.trend.trend`.

    Returns
    -------
    Trend
        Equal to ``runs trend --metric METRIC [--slice S] --ci-resamples 1000 --format json`` over the same runs
        when every step is tested.

    Raises
    ------
    ValueError
        No run, or the trend's own errors (an unknown test or correction).
    """
    if not records:
        raise ValueError("a trend needs at least one run")
    points = summary_points(records, metric, slices)
    first = 0 if tested_steps is None else max(0, len(records) - 1 - tested_steps)
    tested = list(records[first:])
    results = trend_results(store, tested, [metric], slices)
    t = trend(results, [metric], slices=slices, correction=correction, alpha=alpha, test=test,
              n_resamples=SUMMARY_RESAMPLES, point_resamples=0, seed=seed, min_overlap=min_overlap,
              noise_bands=noise_bands)
    skipped = tuple(TrendStep(a.name, b.name, a.n_items, b.n_items, 0, False,
                              f"not tested on the page (only the latest {tested_steps} steps are)", (), False)
                    for a, b in zip(records[:first], records[1:first + 1]))
    return Trend(tuple(r.name for r in records), (metric,), tuple(slices), t.test, t.correction, t.alpha,
                 SUMMARY_RESAMPLES, seed, points, skipped + t.steps)


def rescored_trend(store, records: Sequence, metric: str, *, slices: Sequence[str] = (), correction: str = "holm",
                   alpha: float = 0.05, test: str = "randomization", seed: int = 0,
                   min_overlap: float = 0.8) -> Trend:
    """The "on the current GT" trend: every run re-scored (``runs trend --current-gt --ci-resamples 1000``).

    Parameters
    ----------
    store : RunStore
    records : sequence of RunRecord
    metric : str
    slices : sequence of str
    correction, alpha, test, seed, min_overlap
        As :func:`page_trend`.

    Returns
    -------
    Trend

    Raises
    ------
    ValueError
        A run whose task cannot be re-scored.
    """
    results = trend_results(store, records, [metric], slices, current_gt=True)
    return trend(results, [metric], slices=slices, correction=correction, alpha=alpha, test=test,
                 n_resamples=SUMMARY_RESAMPLES, seed=seed, min_overlap=min_overlap)


def gt_changes(records: Sequence) -> list[tuple[int, int, int]]:
    """Where the GT version changes between consecutive runs.

    Parameters
    ----------
    records : sequence of RunRecord
        In time order.

    Returns
    -------
    list of (int, int, int)
        ``(index of the later run, version before, version after)``.
    """
    return [(i, a.dataset_version, b.dataset_version) for i, (a, b) in enumerate(zip(records, records[1:]), 1)
            if a.dataset_version != b.dataset_version]


__all__ = ["SUMMARY_RESAMPLES", "columns_of", "gt_changes", "metrics_of",
           "page_trend", "rescored_trend", "slices_of", "summary_points", "trend_results"]
