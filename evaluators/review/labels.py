"""The review labels and what each says about a prediction: one home, read by the store and the agreement figures."""

from __future__ import annotations

LABELS = ("model_error", "gt_error", "acceptable_variant", "correct")
#: Labels that say the prediction is right (``correct``: as it stands; ``acceptable_variant``: in other words
#: than the GT) and wrong; ``gt_error`` is neither (the reference itself is wrong).
RIGHT_LABELS = ("acceptable_variant", "correct")
WRONG_LABELS = ("model_error",)
#: Labels of a two-sided (A/B) item, always about the stored sides (the page maps screen sides back).
PAIR_LABELS = ("a_better", "b_better", "tie")
ALL_LABELS = LABELS + PAIR_LABELS


def human_verdict(label: str | None) -> int | None:
    """A label as a verdict on the prediction: 1 right (:data:`RIGHT_LABELS`), 0 wrong (:data:`WRONG_LABELS`),
    ``None`` otherwise (a GT error, an A/B label, no label).

    Parameters
    ----------
    label : str or None
        A decision's label.

    Returns
    -------
    int or None

    Examples
    --------
    >>> human_verdict("acceptable_variant"), human_verdict("model_error"), human_verdict("gt_error")
    (1, 0, None)
    """
    return 1 if label in RIGHT_LABELS else 0 if label in WRONG_LABELS else None