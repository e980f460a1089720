"""The missing-ground-truth policy shared by every evaluator (DESIGN.md).

==================  ==============  =========  ===============  ===============
GT                  prediction      status     counts as error  in denominators
==================  ==============  =========  ===============  ===============
empty               has value       extra      no (not a FP)    no
empty               empty           matched    no               no
has value           empty           missing    yes (FN)         yes
has value           has value       compared   if different     yes
==================  ==============  =========  ===============  ===============

"Empty" is ``None``, ``""`` (also whitespace only), ``[]``, ``{}``, and a float NaN.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any


class GTStatus(str, Enum):
    """Outcome of :func:`handle_missing_ground_truth` for one field."""

    EXTRA = "extra"
    MATCHED = "matched"
    MISSING = "missing"
    COMPARED = "compared"


def is_empty(value: Any) -> bool:
    """True for ``None``, blank strings, empty containers and NaN.

    Parameters
    ----------
    value : object
        A GT or prediction field value.

    Returns
    -------
    bool
        Numbers (0 included) and bools are never empty.

    Examples
    --------
    >>> is_empty("  "), is_empty(float("nan")), is_empty(0), is_empty([])
    (True, True, False, True)
    """
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return len(value) == 0
    return False


def handle_missing_ground_truth(ground_truth: Any, prediction: Any) -> GTStatus:
    """Classify a (GT, prediction) field pair by the missing-GT policy.

    Parameters
    ----------
    ground_truth, prediction : Any
        Field values; emptiness is decided by :func:`is_empty`.

    Returns
    -------
    GTStatus
        ``EXTRA`` (GT empty, prediction present: not an error, not in denominators),
        ``MATCHED`` (both empty: not an error, not in denominators),
        ``MISSING`` (GT present, prediction empty: a false negative, counted),
        ``COMPARED`` (both present: correct or not, counted).
    """
    gt_empty = is_empty(ground_truth)
    pred_empty = is_empty(prediction)
    if gt_empty:
        return GTStatus.MATCHED if pred_empty else GTStatus.EXTRA
    return GTStatus.MISSING if pred_empty else GTStatus.COMPARED


def counts_in_denominator(status: GTStatus) -> bool:
    """Whether a field with this status enters accuracy / recall denominators.

    Parameters
    ----------
    status : GTStatus

    Returns
    -------
    bool
        True for ``MISSING`` and ``COMPARED`` (the GT has a value), as DESIGN.md's table says.
    """
    return status in (GTStatus.MISSING, GTStatus.COMPARED)
