"""The reviewed estimate of a whole run from a reviewed sample: human labels where people looked,
the automatic metric everywhere (prediction-powered inference, :mod:`evaluators.metrics.ppi`),
beside the human-only estimate, so the user sees how much the metric tightens the interval.

Records are keyed by ``(system, record id)`` (a review item's ``system`` and ``id``; ``system``
is ``None`` for a single run).  The human label of a reviewed record (:func:`human_labels`):
``acceptable_variant`` and ``correct`` -> 1 (the answer is right), ``model_error`` -> 0, ``gt_error`` -> the
metric against the corrected GT when it is given (``rescored``), else the record counts as not
reviewed.  The reviewed records must be a uniformly random sample of the run for the interval
to be valid (see :mod:`evaluators.metrics.ppi`).
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
        reviewed).
    """

    metric: str
    n_records: int
    n_reviewed: int
    n_unknown: int
    automatic: float
    human_only: MeanEstimate
    reviewed: MeanEstimate


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
