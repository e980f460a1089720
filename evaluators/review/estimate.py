"""The reviewed estimate of a whole run from a reviewed sample: human labels where people looked,
the automatic metric everywhere (prediction-powered inference, :mod:`evaluators.metrics.ppi`),
beside the human-only estimate, so the user sees how much the metric tightens the interval.

Records are keyed by ``(system, record id)`` (a review item's ``system`` and ``id``; ``system``
is ``None`` for a single run).  The human label of a reviewed record (:func:`human_labels`):
``acceptable_variant`` and ``correct`` -> 1 (the answer is right), ``model_error`` -> 0, ``gt_error`` -> the
metric against the corrected GT when it is given (``rescored``), else the record counts as not
reviewed.  The reviewed records must be a random sample of the run with known inclusion
probabilities for the interval to be valid: uniform (:func:`reviewed_estimate`), or stratified /
active (:func:`design_estimate`, designs of :mod:`evaluators.review.sampling`); a session in the
informative order or reviewed through a filter is refused.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

from evaluators.metrics.ppi import MeanEstimate, classical_mean, ppi_mean
from evaluators.results import DictMixin

Key = tuple[str | None, str]


def item_key(payload: Mapping) -> Key:
    """``(system, record id)`` of a review item payload."""
    system = payload.get("system")
    return (None if system is None else str(system), str(payload.get("id")))


def human_labels(final: Iterable, rescored: Mapping[Key, float] | None = None) -> dict[Key, float]:
    """Human verdicts on the reviewed records, 1 right / 0 wrong (module docstring).

    Parameters
    ----------
    final : iterable of :class:`~evaluators.review.gt_patch.FinalLabel`
    rescored : mapping, optional
        ``(system, id)`` -> the metric after the GT patch (for ``gt_error`` records).
    """
    from evaluators.review.store import human_verdict

    out: dict[Key, float] = {}
    for f in final:
        key = item_key(f.item.payload)
        if human_verdict(f.label) is not None:
            out[key] = float(human_verdict(f.label))
        elif f.label == "gt_error" and rescored is not None and key in rescored:
            out[key] = float(rescored[key])
    return out


@dataclass(frozen=True)
class ReviewedEstimate(DictMixin):
    """Human-verified mean of a run, estimated from a reviewed sample.

    Attributes
    ----------
    metric : str
        The automatic metric (``exact_match`` ...).
    n_records, n_reviewed : int
        Records of the run; reviewed ones among them.
    n_unknown : int
        Human labels whose record is not in the run (left out).
    automatic : float
        The metric's mean over the whole run (no human input, biased by the metric's errors).
    human_only : MeanEstimate
        Mean of the human labels and its normal interval.
    reviewed : MeanEstimate
        Prediction-powered estimate and interval (equal to ``human_only`` when every record was
        reviewed): uniform, stratified or active PPI by ``design``.
    design : str
        ``uniform``, ``stratified`` or ``active`` (:mod:`evaluators.review.sampling`).
    sample : str
        Which sample the estimate used, in words.
    n_disagreements : int
        Reviewed records whose reviewers disagree and that nobody adjudicated: not in the estimate
        (no human label), reported here.
    disagreements_range : (float, float) or None
        The estimate with every such record counted wrong, and counted right (how much they could
        move it); ``None`` without any.
    n_unlabelled : int
        Final labels that give no verdict (a GT error with no rescored value).
    width_curve : tuple of (int, float)
        ``(k more reviews, expected interval width)`` (:func:`evaluators.review.order.projected_width`;
        uniform design).
    """

    metric: str
    n_records: int
    n_reviewed: int
    n_unknown: int
    automatic: float
    human_only: MeanEstimate
    reviewed: MeanEstimate
    design: str = "uniform"
    sample: str = ""
    n_disagreements: int = 0
    disagreements_range: tuple[float, float] | None = None
    n_unlabelled: int = 0
    width_curve: tuple[tuple[int, float], ...] = ()


def reviewed_estimate(automatic: Mapping[Hashable, float], human: Mapping[Hashable, float], *, metric: str = "",
                      confidence_level: float = 0.95, lam: float | None = None) -> ReviewedEstimate:
    """Estimate the human-verified mean of a run (PPI) beside the human-only estimate.

    Parameters
    ----------
    automatic : mapping of key to float
        The automatic metric of every record of the run, in [0, 1] (``None`` values left out).
    human : mapping of key to float
        Human labels (1 right, 0 wrong, or a human score in [0, 1]) of the reviewed records.
    metric : str
    confidence_level : float
    lam : float, optional
        See :func:`evaluators.metrics.ppi.ppi_mean` (default power-tuned).

    Raises
    ------
    ValueError
        Fewer than 2 reviewed records of the run, or a level outside (0, 1).
    """
    auto = {k: float(v) for k, v in automatic.items() if v is not None}
    labelled = [k for k in human if k in auto]
    if len(labelled) < 2:
        raise ValueError(f"a reviewed estimate needs at least 2 reviewed records of the run, got {len(labelled)}")
    y = [float(human[k]) for k in labelled]
    yhat = [auto[k] for k in labelled]
    seen = set(labelled)
    yu = [v for k, v in auto.items() if k not in seen]
    human_only = classical_mean(y, confidence_level=confidence_level)
    reviewed = ppi_mean(y, yhat, yu, confidence_level=confidence_level, lam=lam) if yu else human_only
    return ReviewedEstimate(metric, len(auto), len(labelled), len(human) - len(labelled),
                            sum(auto.values()) / len(auto), human_only, reviewed)


#: More reviews shown in the expected-width curve.
CURVE_STEPS = (0, 10, 25, 50, 100, 200, 500, 1000)


def design_estimate(automatic: Mapping[Hashable, float], human: Mapping[Hashable, float], design, *,
                    strata: Mapping[Hashable, str] | None = None, metric: str = "",
                    disagreements: Iterable[Hashable] = (), n_unlabelled: int = 0,
                    confidence_level: float = 0.95) -> ReviewedEstimate:
    """The reviewed estimate for a session's sample design (:class:`~evaluators.review.sampling.SampleDesign`).

    ``uniform``: :func:`reviewed_estimate` (PPI++ as ``ppi_py``) and the expected width after more
    reviews; ``stratified``: :func:`~evaluators.metrics.ppi.stratified_ppi_mean` with ``strata`` (every
    record's stratum); ``active``: :func:`~evaluators.metrics.ppi.active_ppi_mean` with the design's
    inclusion probabilities (scaled by the share of the selected records reviewed so far, which the
    random queue leaves a random subset of them).  Unadjudicated ``disagreements`` are counted and
    the estimate is recomputed with all of them wrong and all right (``disagreements_range``).

    Raises
    ------
    ValueError
        A design that is not random (with its reason), fewer than 2 reviewed records, a stratum with
        fewer than 2, reviewed records outside an active design's selection.
    """
    from evaluators.metrics.ppi import active_ppi_mean, stratified_ppi_mean
    from evaluators.review.order import projected_width
    from evaluators.review.sampling import key_text

    if not design.random:
        raise ValueError(f"not a random sample: {design.description}")
    auto = {k: float(v) for k, v in automatic.items() if v is not None}
    disagree = [k for k in disagreements if k in auto and k not in human]

    def one(labels: Mapping[Hashable, float]) -> ReviewedEstimate:
        base = reviewed_estimate(auto, labels, metric=metric, confidence_level=confidence_level)
        labelled = [k for k in labels if k in auto]
        if design.design == "stratified":
            if strata is None:
                raise ValueError("a stratified estimate needs every record's stratum")
            seen = set(labelled)
            rest = [k for k in auto if k not in seen]
            est = stratified_ppi_mean([labels[k] for k in labelled], [auto[k] for k in labelled],
                                      [strata[k] for k in labelled], [auto[k] for k in rest], [strata[k] for k in rest],
                                      confidence_level=confidence_level)
        elif design.design == "active":
            outside = [k for k in labelled if key_text(k) not in design.inclusion]
            if outside:
                raise ValueError(f"{len(outside)} reviewed record(s) are outside the active design's selection "
                                 f"(e.g. {key_text(outside[0])}): their inclusion probability is unknown")
            selected = [k for k in auto if key_text(k) in design.inclusion]
            share = len(labelled) / max(1, len(selected))
            keys = list(auto)
            lab = set(labelled)
            est = active_ppi_mean([auto[k] for k in keys],
                                  [max(1e-12, design.inclusion.get(key_text(k), 1.0) * share) for k in keys],
                                  [k in lab for k in keys], [labels.get(k, float("nan")) for k in keys],
                                  confidence_level=confidence_level,
                                  strata=[strata[k] for k in keys] if strata else None)
        else:
            return base
        return ReviewedEstimate(base.metric, base.n_records, base.n_reviewed, base.n_unknown, base.automatic,
                                base.human_only, est)

    main = one(human)
    rng = None
    if disagree:
        low = one({**human, **{k: 0.0 for k in disagree}}).reviewed.estimate
        high = one({**human, **{k: 1.0 for k in disagree}}).reviewed.estimate
        rng = (low, high)
    curve: tuple[tuple[int, float], ...] = ()
    if design.design == "uniform":
        labelled = [k for k in human if k in auto]
        seen = set(labelled)
        rest = [auto[k] for k in auto if k not in seen]
        steps = [k for k in CURVE_STEPS if k < len(rest)]
        if steps and len(labelled) >= 2:
            widths = projected_width([human[k] for k in labelled], [auto[k] for k in labelled], rest, steps,
                                     confidence_level=confidence_level)
            curve = tuple((int(k), float(w)) for k, w in zip(steps, widths))
    import dataclasses

    return dataclasses.replace(main, design=design.design, sample=design.description, n_disagreements=len(disagree),
                               disagreements_range=rng, n_unlabelled=n_unlabelled, width_curve=curve)
