"""Which items to review first, and how wide the reviewed estimate's interval will be.

:func:`informative_order` puts first the items whose human label can change a conclusion:

0. *discordant pairs*: the same record answered right by one system and wrong by another (by
   exact match), the only records that move a paired comparison (McNemar's test uses only them);
1. *partial credit*: token F1 strictly between 0 and 1, where the metric itself is unsure;
2. *judge and metric disagree*: an LLM judge's verdict and the answer metric's differ
   (threshold 0.5);
3. everything else.

Within a tier the order is a seeded shuffle.  An order that is not random biases an estimate
made from the reviewed items alone, and the interval of prediction-powered inference
(:mod:`evaluators.metrics.ppi`) assumes a uniformly random sample: to *estimate* a run's
human-verified score, review in the random order (``order="random"``); the informative order is
for correcting the GT and deciding a comparison quickly.

:func:`projected_width` gives the expected PPI interval width after ``k`` more labels, from the
variances seen so far (the standard error formula of :func:`evaluators.metrics.ppi.ppi_mean`
with ``n + k`` labelled and ``N - k`` unlabelled records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import norm


TIERS = ("discordant", "partial_credit", "judge_disagrees", "other")
ORDERS = ("informative", "random")


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def tier_of(payload: Mapping[str, Any], discordant_ids: set[str], threshold: float = 0.5) -> str:
    """The tier (:data:`TIERS`) of one review item payload."""
    if str(payload.get("id")) in discordant_ids:
        return "discordant"
    scores = payload.get("scores") if isinstance(payload.get("scores"), Mapping) else {}
    f1 = _num(payload.get("token_f1", scores.get("token_f1", scores.get("f1"))))
    if f1 is not None and 0 < f1 < 1:
        return "partial_credit"
    judge = _num(scores.get("judge_score", payload.get("judge_score")))
    metric = _num(payload.get("exact_match", scores.get("exact_match", f1)))
    if judge is not None and metric is not None and (judge >= threshold) != (metric >= threshold):
        return "judge_disagrees"
    return "other"


def informative_order(payloads: Sequence[Mapping[str, Any]], *, order: str = "informative", seed: int = 0
                      ) -> list[int]:
    """Review order of item payloads (positions into ``payloads``).

    Parameters
    ----------
    payloads : sequence of mapping
        Review item payloads (:mod:`evaluators.review.items`): ``id``, ``system``, ``exact_match``,
        ``token_f1``, ``scores`` ... as present.
    order : {"informative", "random"}
        ``random``: a seeded uniform shuffle (use it for the reviewed estimate).
    seed : int

    Returns
    -------
    list of int
        A permutation of ``range(len(payloads))``.

    Raises
    ------
    ValueError
        For an unknown ``order``.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    rng = np.random.default_rng(seed)
    shuffled = [int(i) for i in rng.permutation(len(payloads))]
    if order == "random":
        return shuffled
    em_by_id: dict[str, set[float]] = {}
    for p in payloads:
        em = _num(p.get("exact_match"))
        if em is not None and p.get("system") is not None:
            em_by_id.setdefault(str(p.get("id")), set()).add(em >= 0.5)
    discordant = {i for i, verdicts in em_by_id.items() if len(verdicts) > 1}
    rank = {t: n for n, t in enumerate(TIERS)}
    return sorted(shuffled, key=lambda i: rank[tier_of(payloads[i], discordant)])


def projected_width(y, yhat, yhat_unlabeled, extra: int | Sequence[int], *, confidence_level: float = 0.95
                    ) -> np.ndarray:
    """Expected width of the PPI interval after ``extra`` more human labels.

    Parameters
    ----------
    y, yhat : array-like, shape (n,)
        Human labels so far and the metric on the same records (n >= 2).
    yhat_unlabeled : array-like, shape (N,)
        The metric on the records not reviewed yet.
    extra : int or sequence of int
        More labels (0 <= extra < N); 0 gives the current width.
    confidence_level : float

    Returns
    -------
    numpy.ndarray, shape (len(extra),)
        ``2 z sqrt(lam^2 var(yhat_unlabeled) / (N - k) + var(y - lam yhat) / (n + k))`` with the
        variances of the labels so far and ``lam`` power-tuned for ``n + k`` and ``N - k`` (PPI++).

    Raises
    ------
    ValueError
        Fewer than 2 labels, ``extra`` outside [0, N), or a level outside (0, 1).
    """
    y, yhat, yu = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabeled))
    if y.size < 2 or y.shape != yhat.shape:
        raise ValueError("y and yhat need the same length, at least 2")
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    k = np.atleast_1d(np.asarray(extra, dtype=float))
    if (k < 0).any() or (k >= yu.size).any():
        raise ValueError(f"extra must be in [0, {yu.size})")
    n, big_n = y.size + k, yu.size - k
    # the power tuning of PPI++ (evaluators.metrics.ppi.power_tuning) for n + k labelled and N - k unlabelled
    cov = ((y - y.mean()) * (yhat - yhat.mean())).mean()
    var = np.concatenate([yhat, yu]).var(ddof=1)
    lam = np.clip(cov / ((1 + n / big_n) * var), 0, 1) if var > 0 else np.zeros_like(k)
    z = norm.ppf(0.5 + confidence_level / 2)
    vu = yu.var()
    rect = np.array([(y - lm * yhat).var() for lm in np.broadcast_to(lam, k.shape)])
    return 2 * z * np.sqrt(lam ** 2 * vu / big_n + rect / n)
