"""Which records a review session's labels are a sample of, and how they were drawn.

A reviewed estimate (:mod:`evaluators.review.estimate`) is only valid for the sample design it
assumes.  A session's design is read from its settings (:func:`session_design`):

- ``settings["order"]``: ``"random"`` (the default: the queue is the session's seeded shuffle,
  :func:`evaluators.review.store.seeded_rank`) or ``"informative"`` (discordant pairs, partial
  credit and judge disagreements first, :func:`evaluators.review.order.informative_order`);
- ``settings["filter"]``: the queue restricted to some items (:class:`~evaluators.review.store.QueueFilter`
  fields: ``system``, ``label``, ``disagreement``, ``metric_min``, ``metric_max``);
- ``settings["sampling"]``: a design drawn by :func:`draw_sample`: ``{"design": "uniform" |
  "stratified" | "active", "by": ..., "seed": ..., "n": ..., "selected": {key: inclusion
  probability}, "strata": {key: stratum}}`` (keys ``"<system>|<id>"``, :func:`key_text`).

An informative order or a filter gives a sample that is **not random**: an estimate from it is
biased in an unknown direction and is refused (:attr:`SampleDesign.random` false, with the reason).
A uniform, stratified or active design is random with known inclusion probabilities: uniform PPI
(:func:`evaluators.metrics.ppi.ppi_mean`), stratified PPI (:func:`~evaluators.metrics.ppi.stratified_ppi_mean`,
Fisch et al. 2024) and active PPI (:func:`~evaluators.metrics.ppi.active_ppi_mean`, Zrnic & Candès 2024).

Strata (:func:`stratum_of`): ``by="metric"`` bins the metric's value (``0``, ``(0, 0.5)``,
``[0.5, 1)``, ``1``); ``by="label"`` is the metric's verdict (``>= 0.5``) x the slice (the system,
else the question type or category).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluators.results import DictMixin

DESIGNS = ("uniform", "stratified", "active")
STRATA_BY = ("metric", "label")


def key_text(key: tuple[str | None, str]) -> str:
    """``(system, id)`` as the text key of a sampling record: ``"system|id"`` (``"|id"`` without a system)."""
    system, rid = key
    return f"{system or ''}|{rid}"


@dataclass(frozen=True)
class SampleDesign(DictMixin):
    """How a session's reviewed items were drawn.

    Attributes
    ----------
    design : str
        ``uniform``, ``stratified``, ``active``, or ``informative`` / ``filtered`` (not random).
    random : bool
        Whether an estimate from the reviewed items is valid.
    description : str
        One sentence for the output: the design, or why it is not random.
    inclusion : dict
        Text key -> inclusion probability (``stratified`` and ``active``; empty for uniform).
    strata : dict
        Text key -> stratum (``stratified``, and ``active`` when drawn with strata).
    """

    design: str
    random: bool
    description: str
    inclusion: dict = field(default_factory=dict)
    strata: dict = field(default_factory=dict)


def _active_filter(value: Any) -> dict:
    if not isinstance(value, Mapping):
        return {}
    return {k: v for k, v in value.items() if v not in (None, False, "", [], {})}


def session_design(settings: Mapping[str, Any] | None) -> SampleDesign:
    """The sample design of a session from its settings (module docstring)."""
    settings = settings or {}
    order = settings.get("order", "random")
    if order not in (None, "random"):
        return SampleDesign("informative", False,
                            f"the session's queue is in the {order!r} order (discordant pairs, partial credit and "
                            "judge disagreements first), so its reviewed items are not a random sample of the run")
    active = _active_filter(settings.get("filter") or settings.get("filters"))
    if active:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(active.items()))
        return SampleDesign("filtered", False,
                            f"the session's queue was filtered ({shown}), so its reviewed items are not a random "
                            "sample of the run")
    sampling = settings.get("sampling")
    if isinstance(sampling, Mapping) and sampling.get("design") in DESIGNS and sampling.get("design") != "uniform":
        design = sampling["design"]
        selected = {str(k): float(v) for k, v in (sampling.get("selected") or {}).items()}
        strata = {str(k): str(v) for k, v in (sampling.get("strata") or {}).items()}
        by = sampling.get("by", "metric")
        return SampleDesign(design, True, f"{design} sample of {len(selected)} items (strata by {by}, seed "
                                          f"{sampling.get('seed', 0)}), drawn with known inclusion probabilities",
                            selected, strata)
    return SampleDesign("uniform", True, "uniformly random sample (the session's seeded random order, no filter)")


def stratum_of(payload: Mapping[str, Any], value: float | None, by: str = "metric") -> str:
    """The stratum of an item with metric ``value`` (module docstring)."""
    if by not in STRATA_BY:
        raise ValueError(f"strata by must be one of {', '.join(STRATA_BY)}, not {by!r}")
    if value is None:
        return "no metric"
    if by == "metric":
        return "0" if value <= 0 else "1" if value >= 1 else "(0, 0.5)" if value < 0.5 else "[0.5, 1)"
    slice_ = payload.get("system") or payload.get("question_type") or payload.get("category") or ""
    return f"{'right' if value >= 0.5 else 'wrong'} x {slice_}"


def _spread(value: float) -> float:
    """The expected spread of a human 0/1 verdict around a metric value (its Bernoulli sd), floored at 0.1
    (a metric that looks certain still errs sometimes)."""
    v = min(max(value, 0.0), 1.0)
    return max(float(np.sqrt(v * (1 - v))), 0.1)


def draw_sample(keys: Sequence[tuple[str | None, str]], values: Sequence[float], n: int, *, design: str = "uniform",
                payloads: Sequence[Mapping[str, Any]] | None = None, by: str = "metric", seed: int = 0,
                spreads: Mapping[str, float] | None = None, uniform_share: float = 0.2) -> dict[str, Any]:
    """Draw the records to review, and the ``settings["sampling"]`` record that makes the estimate valid.

    Parameters
    ----------
    keys : sequence of (system, id), length N
        The run's records.
    values : sequence of float, length N
        The metric on each (in [0, 1]).
    n : int
        Reviews wanted (expected number for ``active``).
    design : {"uniform", "stratified", "active"}
        ``stratified``: a uniform sample within each stratum, ``n`` allocated by Neyman
        (:func:`evaluators.metrics.ppi.neyman_allocation`) from each stratum's expected spread
        (``spreads``, else the Bernoulli sd of its mean metric value, floored at 0.1);
        ``active``: each record independently with probability proportional to its uncertainty
        (the same spread), mixed with uniform (:func:`evaluators.metrics.ppi.active_probabilities`).
    payloads : sequence of mapping, optional
        The records' review payloads (for ``by="label"`` slices).
    by : {"metric", "label"}
        Strata (:func:`stratum_of`).
    seed : int
    spreads : mapping, optional
        Stratum -> expected spread of the human label around the metric (e.g. from a pilot).
    uniform_share : float
        For ``active``.

    Returns
    -------
    dict
        ``{"design", "by", "seed", "n", "selected": {key_text: inclusion probability}, "strata":
        {key_text: stratum}}`` for every selected record; store it as the session's
        ``settings["sampling"]``.

    References
    ----------
    Fisch et al. (2024), stratified PPI; Zrnic & Candès (2024), active statistical inference;
    Cochran (1977), *Sampling Techniques*, ch. 5.
    """
    from evaluators.metrics.ppi import active_probabilities, neyman_allocation

    if design not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, not {design!r}")
    big_n = len(keys)
    if big_n != len(values) or not 0 < n <= big_n:
        raise ValueError("one metric value per record, and 0 < n <= the number of records")
    vals = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    payloads = payloads or [{}] * big_n
    strata = [stratum_of(p, float(v), by) for p, v in zip(payloads, vals)]
    names = list(dict.fromkeys(strata))
    index = np.array([names.index(s) for s in strata])
    spread = {h: (spreads or {}).get(h, _spread(float(vals[index == j].mean()))) for j, h in enumerate(names)}
    chosen: dict[int, float] = {}
    if design == "uniform":
        for i in rng.choice(big_n, n, replace=False):
            chosen[int(i)] = n / big_n
    elif design == "stratified":
        sizes = np.bincount(index, minlength=len(names))
        alloc = neyman_allocation(n, sizes, [spread[h] for h in names])
        for j, k in enumerate(alloc):
            members = np.flatnonzero(index == j)
            for i in rng.choice(members, int(k), replace=False):
                chosen[int(i)] = k / sizes[j]
    else:
        pi = active_probabilities([spread[s] for s in strata], n, uniform_share=uniform_share)
        for i in np.flatnonzero(rng.random(big_n) < pi):
            chosen[int(i)] = float(pi[i])
    return {"design": design, "by": by, "seed": seed, "n": n,
            "selected": {key_text(keys[i]): p for i, p in sorted(chosen.items())},
            "strata": {key_text(keys[i]): strata[i] for i in sorted(chosen)},
            "population_strata": dict(zip(names, np.bincount(index, minlength=len(names)).tolist()))}
