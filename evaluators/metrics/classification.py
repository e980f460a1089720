"""Single-label classification metrics: confusion matrix, per-class P/R/F1, accuracy, kappa.

The definitions are scikit-learn's (``confusion_matrix``, ``precision_recall_fscore_support``,
``accuracy_score``, ``cohen_kappa_score``), computed from raw counts in plain Python so a
report carries its counts beside the ratios.  Where scikit-learn would divide by zero
(and return 0 with a warning, or NaN with ``zero_division=np.nan``), the value here is
``None``; averages skip ``None`` values and say how many they skipped, which equals
scikit-learn with ``zero_division=np.nan``.

Layouts: scikit-learn puts true labels on rows and predictions on columns
(``rows="true"``).  The earlier fact-check script printed predictions on rows
(``rows="predicted"``); :meth:`ClassificationReport.matrix` gives either.

References
----------
- F. Pedregosa et al. 2011. "Scikit-learn: Machine Learning in Python". JMLR 12.
  ``sklearn.metrics`` (confusion_matrix, precision_recall_fscore_support, cohen_kappa_score).
- J. Cohen. 1960. "A Coefficient of Agreement for Nominal Scales". Educational and
  Psychological Measurement 20(1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.metrics.agreement import cohen_kappa_from_counts, sorted_labels
from evaluators.results import DictMixin, safe_div, to_jsonable

ROWS = ("true", "predicted")

SIGNATURE = (
    "classification=sklearn-compatible(per-class P/R/F1 from counts, F1=2tp/(2tp+fp+fn); "
    "undefined -> no value, skipped in averages (sklearn zero_division=nan); kappa unweighted)"
)


@dataclass(frozen=True)
class ClassMetrics(DictMixin):
    """Counts and ratios of one class (one-vs-rest over all pairs).

    Attributes
    ----------
    label : hashable
        The class.
    tp, fp, fn : int
        True positives, false positives (predicted this class, true other), false negatives.
    support : int
        Number of pairs whose true label is this class (``tp + fn``).
    predicted : int
        Number of pairs predicted as this class (``tp + fp``).
    precision, recall, f1 : float or None
        ``tp / predicted``, ``tp / support``, ``2 tp / (2 tp + fp + fn)``; ``None`` when the
        denominator is 0.
    """

    label: Any
    tp: int
    fp: int
    fn: int
    support: int
    predicted: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass(frozen=True)
class Average(DictMixin):
    """An averaged precision / recall / F1.

    Attributes
    ----------
    kind : str
        ``"micro"`` (pooled counts), ``"macro"`` (unweighted mean over classes) or
        ``"weighted"`` (mean over classes weighted by support).
    precision, recall, f1 : float or None
        ``None`` when no class has a defined value.
    n_classes : int
        Classes averaged over.
    n_skipped : int
        Classes left out of at least one of the means because their value was undefined.
    """

    kind: str
    precision: float | None
    recall: float | None
    f1: float | None
    n_classes: int
    n_skipped: int


@dataclass(frozen=True)
class ClassificationReport(DictMixin):
    """Everything about a set of (true, predicted) label pairs.

    Attributes
    ----------
    labels : tuple
        Row/column order of the confusion matrix.
    counts : tuple of tuple of int
        Confusion matrix, shape ``(len(labels), len(labels))``, rows = true labels,
        columns = predicted labels (scikit-learn's layout).  Pairs with a label outside
        ``labels`` are not in it (``n_outside_labels`` counts them).
    per_class : tuple of ClassMetrics
        One entry per label, in ``labels`` order.
    n : int
        Number of pairs.
    correct : int
        Pairs with ``true == predicted``.
    accuracy : float or None
        ``correct / n`` over all pairs (as ``accuracy_score``); ``None`` if ``n == 0``.
    micro, macro, weighted : Average
        Averages over ``average_labels``.
    average_labels : tuple
        Labels the averages run over (default: all labels).
    cohen_kappa : float or None
        Cohen's kappa of the confusion matrix; ``None`` when chance agreement is 1.
    n_outside_labels : int
        Pairs left out of the matrix because a label is not in ``labels``.
    signature : str
        Definitions used (:data:`SIGNATURE`).
    """

    labels: tuple
    counts: tuple[tuple[int, ...], ...]
    per_class: tuple[ClassMetrics, ...]
    n: int
    correct: int
    accuracy: float | None
    micro: Average
    macro: Average
    weighted: Average
    average_labels: tuple
    cohen_kappa: float | None
    n_outside_labels: int
    signature: str = SIGNATURE

    def matrix(self, rows: str = "true") -> list[list[int]]:
        """The confusion matrix as a list of rows.

        Parameters
        ----------
        rows : {"true", "predicted"}
            ``"true"``: rows are true labels, columns predictions (scikit-learn).
            ``"predicted"``: rows are predictions, columns true labels (the earlier script).

        Raises
        ------
        ValueError
            For another ``rows`` value.
        """
        return _layout(self.counts, rows)

    def row_normalized(self, rows: str = "true") -> list[list[float | None]]:
        """The matrix in the given layout with each row divided by its sum (``None`` for an empty row).

        Parameters
        ----------
        rows : {"true", "predicted"}
            Rows are the true labels (scikit-learn's layout: each row sums to 1, the recall view) or
            the predicted ones (the precision view).

        Returns
        -------
        list of list of (float or None), shape (n_labels, n_labels)
            Fractions in [0, 1]; every cell of a row with no count is ``None``.

        Raises
        ------
        ValueError
            For another ``rows`` value.
        """
        out = []
        for row in self.matrix(rows):
            total = sum(row)
            out.append([safe_div(v, total) for v in row])
        return out

    def class_metrics(self, label: Hashable) -> ClassMetrics:
        """The :class:`ClassMetrics` of ``label``; raises ``KeyError`` if it is not a label.

        Parameters
        ----------
        label : hashable
            One of :attr:`labels`.

        Returns
        -------
        ClassMetrics

        Raises
        ------
        KeyError
            ``label`` is not one of the report's labels.
        """
        for m in self.per_class:
            if m.label == label:
                return m
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        out = {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["confusion_matrix"] = {"rows": "true", "columns": "predicted", "labels": to_jsonable(self.labels),
                                   "counts": self.matrix("true")}
        out["confusion_matrix_rows_predicted"] = {"rows": "predicted", "columns": "true",
                                                  "labels": to_jsonable(self.labels),
                                                  "counts": self.matrix("predicted")}
        return out


def _layout(counts: Sequence[Sequence[int]], rows: str) -> list[list[int]]:
    """A true-by-predicted matrix as new lists, rows true (``"true"``) or predicted (``"predicted"``)."""
    if rows == "true":
        return [list(r) for r in counts]
    if rows == "predicted":
        return [list(col) for col in zip(*counts)] if counts else []
    raise ValueError(f"rows must be one of {ROWS}, got {rows!r}")


def _paired(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
            labels: Sequence[Hashable] | None) -> tuple[list, list, list]:
    """The two label lists (same length, else ``ValueError``) and the matrix labels (default: sorted union)."""
    y_true = list(y_true)
    y_pred = list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} labels but y_pred has {len(y_pred)}")
    labels = list(labels) if labels is not None else sorted_labels(y_true + y_pred)
    return y_true, y_pred, labels


def _mean(values: Sequence[float | None]) -> tuple[float | None, int]:
    vals = [v for v in values if v is not None]
    return (sum(vals) / len(vals) if vals else None), len(values) - len(vals)


def _weighted(values: Sequence[float | None], weights: Sequence[int]) -> tuple[float | None, int]:
    pairs = [(v, w) for v, w in zip(values, weights) if v is not None]
    total = sum(w for _, w in pairs)
    skipped = len(values) - len(pairs)
    if not pairs:
        return None, skipped
    if total == 0:
        # Every class with a value has support 0 (so tp = 0 and the value is 0): the
        # unweighted mean, as scikit-learn's ``_nanaverage`` falls back to.
        return sum(v for v, _ in pairs) / len(pairs), skipped
    return sum(v * w for v, w in pairs) / total, skipped


def _f1(tp: int, fp: int, fn: int) -> float | None:
    return safe_div(2 * tp, 2 * tp + fp + fn)


def confusion_counts(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                     labels: Sequence[Hashable]) -> tuple[list[list[int]], int]:
    """Confusion matrix (rows = true, columns = predicted) over ``labels``.

    Parameters
    ----------
    y_true, y_pred : sequence of hashable
        True and predicted label of each item, same length n (not checked here: ``zip`` stops at
        the shorter; the public callers check).
    labels : sequence of hashable
        The matrix's label order, k labels.

    Returns
    -------
    (counts, n_outside)
        The k x k matrix as lists of int (``counts[i][j]``: items of true ``labels[i]`` predicted
        ``labels[j]``) and the number of pairs skipped because a label is not in ``labels``.

    References
    ----------
    ``sklearn.metrics.confusion_matrix`` (same layout and counts).
    """
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    counts = [[0] * k for _ in range(k)]
    outside = 0
    for (t, p), c in Counter(zip(y_true, y_pred)).items():
        i = index.get(t)
        j = index.get(p)
        if i is None or j is None:
            outside += c
            continue
        counts[i][j] += c
    return counts, outside


def classification_report(
    y_true: Sequence[Hashable],
    y_pred: Sequence[Hashable],
    labels: Sequence[Hashable] | None = None,
    *,
    average_labels: Sequence[Hashable] | None = None,
) -> ClassificationReport:
    """Confusion matrix, per-class metrics, accuracy, micro/macro/weighted averages and kappa.

    Parameters
    ----------
    y_true, y_pred : sequence of hashable, shape (n,)
        True and predicted labels, paired by position.
    labels : sequence of hashable, optional
        Matrix order.  Default: the sorted union of both label sets (scikit-learn's
        ``unique_labels``).  Labels in the data but not here are left out of the matrix
        and of kappa, as scikit-learn does; per-class counts still see every pair.
    average_labels : sequence of hashable, optional
        Classes the averages run over (default ``labels``), e.g. the gold classes only
        when ``labels`` also has an "unparsed" column.  Same as scikit-learn's ``labels``
        argument of ``precision_recall_fscore_support(average=...)``.

    Returns
    -------
    ClassificationReport

    Raises
    ------
    ValueError
        If the two sequences differ in length, or ``average_labels`` has a label that is
        not in ``labels``.

    Notes
    -----
    Per class ``c``: ``precision = tp / (tp + fp)``, ``recall = tp / (tp + fn)``,
    ``f1 = 2 tp / (2 tp + fp + fn)`` (equal to the harmonic mean when both are defined).
    Kappa: ``1 - (n - trace) / (n - sum_i row_i col_i / n)`` on the matrix (Cohen 1960), by
    :func:`evaluators.metrics.agreement.cohen_kappa_from_counts`.
    """
    y_true, y_pred, labels = _paired(y_true, y_pred, labels)
    avg_labels = list(average_labels) if average_labels is not None else list(labels)
    missing = [a for a in avg_labels if a not in labels]
    if missing:
        raise ValueError(f"average_labels not among labels: {missing}")

    true_count = Counter(y_true)
    pred_count = Counter(y_pred)
    tp_count = Counter(t for t, p in zip(y_true, y_pred) if t == p)
    per_class = class_metrics(labels, tp_count, true_count, pred_count)
    avg_set = set(avg_labels)
    chosen = [m for m in per_class if m.label in avg_set]

    tp_sum = sum(m.tp for m in chosen)
    pred_sum = sum(m.predicted for m in chosen)
    true_sum = sum(m.support for m in chosen)
    micro_p = safe_div(tp_sum, pred_sum)
    micro_r = safe_div(tp_sum, true_sum)
    micro_f = _f1(tp_sum, pred_sum - tp_sum, true_sum - tp_sum)
    micro = Average("micro", micro_p, micro_r, micro_f, len(chosen), 0)

    macro = macro_average(chosen)
    supports = [m.support for m in chosen]
    wp, swp = _weighted([m.precision for m in chosen], supports)
    wr, swr = _weighted([m.recall for m in chosen], supports)
    wf, swf = _weighted([m.f1 for m in chosen], supports)
    weighted = Average("weighted", wp, wr, wf, len(chosen), max(swp, swr, swf))

    counts, outside = confusion_counts(y_true, y_pred, labels)
    n = len(y_true)
    correct = sum(tp_count.values())
    return ClassificationReport(
        labels=tuple(labels),
        counts=tuple(tuple(r) for r in counts),
        per_class=tuple(per_class),
        n=n,
        correct=correct,
        accuracy=safe_div(correct, n),
        micro=micro,
        macro=macro,
        weighted=weighted,
        average_labels=tuple(avg_labels),
        cohen_kappa=cohen_kappa_from_counts(counts),
        n_outside_labels=outside,
    )


def class_metrics(labels: Sequence[Hashable], tp: Mapping[Hashable, int], support: Mapping[Hashable, int],
                  predicted: Mapping[Hashable, int]) -> list[ClassMetrics]:
    """Per-class precision / recall / F1 from counts: the one definition behind every per-class table.

    Parameters
    ----------
    labels : sequence
        Classes, shape (k,), in output order.
    tp, support, predicted : mapping of label -> int
        True positives, pairs whose true label is the class, pairs predicted as the class
        (missing labels count 0).

    Returns
    -------
    list of ClassMetrics
        ``precision = tp / predicted`` and ``recall = tp / support`` (``None`` when the denominator
        is 0), ``f1 = 2 tp / (2 tp + fp + fn)`` (``None`` when that denominator is 0).

    References
    ----------
    ``sklearn.metrics.precision_recall_fscore_support`` with ``zero_division=np.nan`` (the same
    values, ``None`` for NaN); van Rijsbergen (1979), *Information Retrieval* (F-measure).
    """
    out = []
    for label in labels:
        t, s, p = tp.get(label, 0), support.get(label, 0), predicted.get(label, 0)
        out.append(ClassMetrics(label, t, p - t, s - t, s, p, safe_div(t, p), safe_div(t, s), _f1(t, p - t, s - t)))
    return out


def macro_average(per_class: Sequence[ClassMetrics]) -> Average:
    """Unweighted mean over classes of precision, recall and F1, undefined values skipped (``n_skipped``).

    Parameters
    ----------
    per_class : sequence of ClassMetrics
        One per class, as :func:`class_metrics` gives them.

    Returns
    -------
    Average
        ``kind="macro"``; each mean over the classes whose value is defined (``None`` when none is),
        equal to scikit-learn's ``average="macro"`` with ``zero_division=np.nan``.
    """
    mp, sp = _mean([m.precision for m in per_class])
    mr, sr = _mean([m.recall for m in per_class])
    mf, sf = _mean([m.f1 for m in per_class])
    return Average("macro", mp, mr, mf, len(per_class), max(sp, sr, sf))


def confusion_matrix(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                     labels: Sequence[Hashable] | None = None, rows: str = "true") -> list[list[int]]:
    """Confusion matrix in either layout; see :func:`classification_report` and :meth:`ClassificationReport.matrix`.

    Same matrix as ``classification_report(y_true, y_pred, labels).matrix(rows)``, computed from
    the counts alone (no per-class metrics).

    Parameters
    ----------
    y_true, y_pred : sequence of hashable
        True and predicted label of each item, same length n.
    labels : sequence of hashable, optional
        The label order (k labels); default the sorted union of both sequences. Pairs with a label
        outside it are not counted.
    rows : {"true", "predicted"}
        Rows are true labels (scikit-learn's layout) or predicted labels (the earlier fact-check
        script's).

    Returns
    -------
    list of list of int, shape (k, k)

    Raises
    ------
    ValueError
        ``y_true`` and ``y_pred`` differ in length, or another ``rows`` value.

    References
    ----------
    ``sklearn.metrics.confusion_matrix`` (Pedregosa et al. 2011).

    Examples
    --------
    >>> confusion_matrix(["T", "F", "T"], ["T", "T", "F"])  # rows F, T (true); columns F, T
    [[0, 1], [1, 1]]
    """
    y_true, y_pred, labels = _paired(y_true, y_pred, labels)
    return _layout(confusion_counts(y_true, y_pred, labels)[0], rows)
