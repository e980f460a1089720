"""A judge against the team's own final labels: calibration set, a stable dev/test split, figures with intervals.

A *calibration set* is a list of :class:`HumanLabel` (item id, the human verdict 1 right / 0 wrong, the item's
slice, the guidelines version the label was made under) and, for each :class:`JudgeVersion` (model, prompt
hash, parameters, parser), the judge's verdicts on those items.

The split (:func:`assign_split`) is made once and kept: within each stratum (human label x slice) the items
are taken in the order of ``sha256(f"{seed}:{item_id}")`` and each goes to the side that keeps the stratum's
dev share closest to ``dev_fraction`` (a tie goes to test), so a fresh split is stratified exactly
(``|dev - fraction * n| <= 1/2``, rounded, in every stratum).  Given the ``previous`` split, every item
already in it keeps its side, whatever its label or slice is now, and only the new items are placed, the
same way, on top of the stratum's current counts: an item never changes side when items are added.

:func:`calibrate` computes for each judge version on dev and on test: accuracy, Cohen's kappa (Cohen 1960,
:func:`evaluators.metrics.agreement.cohen_kappa_ci`), sensitivity (share of human-right items the judge calls
right), specificity (share of human-wrong items the judge calls wrong), the base rate (share of human-right
items), the judge's positive rate, the confusion matrix (rows human wrong / right, columns judge wrong /
right: ``sklearn.metrics.confusion_matrix(human, judge, labels=[0, 1])``) and the disagreeing item ids; each
figure with a percentile bootstrap interval over the split's items (Efron & Tibshirani 1993, ch. 13; items
resampled with replacement by :func:`evaluators.metrics.statistics.resample_weights`, one seed, so every
figure of a split is computed on the same resamples) and ``small_sample`` when fewer than
:data:`~evaluators.metrics.statistics.SMALL_SAMPLE_ITEMS` items stand behind its denominator.

Overfitting: a prompt tuned on the dev items shows a dev kappa above what the held-out test items support.
The lab warns when the dev kappa lies above the upper end of the test kappa's interval.

Labels made under different guidelines versions are refused unless pooled explicitly (``pool_guidelines``):
a one-clause change of the labelling policy can move the best prompt by tens of points, so agreement is
only meaningful against one guideline.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluators.metrics.agreement import cohen_kappa_ci
from evaluators.metrics.statistics import SMALL_SAMPLE_ITEMS, bootstrap_statistic_ci
from evaluators.results import DictMixin

#: The two sides of the split.
DEV, TEST = "dev", "test"
#: Bootstrap resamples behind a figure's interval.
CALIBRATION_RESAMPLES = 2000


# ------------------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class HumanLabel(DictMixin):
    """One final human label of the calibration set.

    Attributes
    ----------
    item_id : str
    label : int
        1: the output is right (``correct`` / ``acceptable_variant``), 0: wrong (``model_error``).
    slice : str
        The item's slice (task category, language ...); the split is stratified by label x slice.
    guidelines_version : str
        The labelling guidelines' version the label was made under.
    """

    item_id: str
    label: int
    slice: str = ""
    guidelines_version: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.item_id, str) or not self.item_id:
            raise ValueError(f"item_id must be a non-empty string, not {self.item_id!r}")
        if isinstance(self.label, bool) or self.label not in (0, 1):
            raise ValueError(f"label of {self.item_id!r} must be 0 (wrong) or 1 (right), not {self.label!r}")
        object.__setattr__(self, "label", int(self.label))  # a numpy integer becomes a plain int (JSON)


def prompt_hash(prompt: str) -> str:
    """SHA-256 (hex) of a judge prompt's text, UTF-8: the prompt's identity in a :class:`JudgeVersion`.

    >>> prompt_hash("判断回答是否正确")[:12] == prompt_hash("判断回答是否正确。")[:12]
    False
    """
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JudgeVersion(DictMixin):
    """What makes a judge's verdicts reproducible: model, prompt, parameters, parser.

    Attributes
    ----------
    model : str
    prompt_hash : str
        :func:`prompt_hash` of the prompt text.
    parameters : tuple of (str, value)
        Sorted ``(name, value)`` pairs (temperature, max_tokens ...); give a dict to :meth:`make`.
    parser : str
        How a reply becomes a verdict (``"yes" in reply.lower()`` ...), by name.
    name : str
        A label for display (``prompt v2``); not part of :attr:`key`.
    """

    model: str
    prompt_hash: str
    parameters: tuple = ()
    parser: str = ""
    name: str = ""

    @classmethod
    def make(cls, model: str, prompt: str, parameters: Mapping[str, Any] | None = None, parser: str = "",
             name: str = "") -> "JudgeVersion":
        """A version from the prompt's text and a parameters dict.

        Parameters
        ----------
        model : str
        prompt : str
            The prompt text (template); only its :func:`prompt_hash` is kept.
        parameters : mapping, optional
            Request parameters (temperature, max_tokens ...), kept sorted by name.
        parser : str
        name : str

        Returns
        -------
        JudgeVersion
        """
        return cls(model, prompt_hash(prompt), tuple(sorted((parameters or {}).items())), parser, name)

    @property
    def key(self) -> str:
        """The first 12 hex digits of the SHA-256 of ``[model, prompt_hash, parameters, parser]`` as JSON."""
        text = json.dumps([self.model, self.prompt_hash, [list(p) for p in self.parameters], self.parser],
                          ensure_ascii=False, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @property
    def label(self) -> str:
        """The name for display: :attr:`name`, else the model and :attr:`key`."""
        return self.name or f"{self.model} {self.key}"


def check_guidelines(labels: Sequence[HumanLabel], *, pool_guidelines: bool = False) -> tuple[str, ...]:
    """The guidelines versions of ``labels``; refuses several unless ``pool_guidelines``.

    Returns
    -------
    tuple of str
        The versions, sorted.

    Raises
    ------
    ValueError
        Labels under more than one version (with the count of each) and ``pool_guidelines`` false.
    """
    counts = Counter(lab.guidelines_version for lab in labels)
    if len(counts) > 1 and not pool_guidelines:
        listed = ", ".join(f"{v or '(none)'}: {c}" for v, c in sorted(counts.items()))
        raise ValueError(f"labels were made under {len(counts)} guidelines versions ({listed}); agreement is only "
                         "meaningful against one: keep one version, or pool them explicitly (pool_guidelines=True)")
    return tuple(sorted(counts))


def _unique(labels: Sequence[HumanLabel]) -> None:
    seen = Counter(lab.item_id for lab in labels)
    twice = sorted(i for i, c in seen.items() if c > 1)
    if twice:
        raise ValueError(f"item ids must be unique in a calibration set: {', '.join(twice[:5])} more than once")


# ------------------------------------------------------------------------------------------------ split


@dataclass(frozen=True)
class Split(DictMixin):
    """Each item's side, dev or test.

    Attributes
    ----------
    seed : int
    dev_fraction : float
    sides : tuple of (str, str)
        ``(item_id, "dev" | "test")``, sorted by id.
    """

    seed: int
    dev_fraction: float
    sides: tuple[tuple[str, str], ...]

    def side(self, item_id: str) -> str | None:
        """The side of ``item_id`` (``"dev"`` or ``"test"``), ``None`` when the split does not hold it."""
        return self._map().get(item_id)

    def _map(self) -> dict[str, str]:
        return dict(self.sides)

    def ids(self, side: str) -> list[str]:
        """The ids on ``side``, sorted."""
        return [i for i, s in self.sides if s == side]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Split":
        """The inverse of ``to_dict()`` (a stored split)."""
        sides = tuple(sorted((str(i), str(s)) for i, s in data["sides"]))
        if any(s not in (DEV, TEST) for _, s in sides):
            raise ValueError("a split's sides are 'dev' or 'test'")
        return cls(int(data["seed"]), float(data["dev_fraction"]), sides)


def item_hash(seed: int, item_id: str) -> str:
    """The order of items within a stratum: SHA-256 (hex) of ``f"{seed}:{item_id}"``."""
    return hashlib.sha256(f"{seed}:{item_id}".encode("utf-8")).hexdigest()


def assign_split(labels: Sequence[HumanLabel], *, seed: int = 0, dev_fraction: float = 0.5,
                 previous: Split | None = None) -> Split:
    """Split the calibration items into dev and test, stratified by human label x slice, stable under additions.

    Within each stratum the items not in ``previous`` are taken in :func:`item_hash` order; each goes to dev
    when that brings the stratum's dev count closer to ``dev_fraction`` times its size than test does
    (``|d + 1 - f (t + 1)| < |d - f (t + 1)|`` with ``d`` dev items among ``t`` placed so far; a tie goes to
    test).  Items in ``previous`` keep their side and count in their (current) stratum.

    Parameters
    ----------
    labels : sequence of HumanLabel
        Unique item ids.
    seed : int
        Orders the items (a different seed, a different split).
    dev_fraction : float
        In (0, 1): the share of each stratum on the dev side.
    previous : Split, optional
        A split made before; must have the same ``seed`` and ``dev_fraction``.  Its items keep their sides;
        items of it that are no longer labelled are dropped.

    Returns
    -------
    Split

    Raises
    ------
    ValueError
        A fraction outside (0, 1), repeated item ids, a ``previous`` split made with another seed or fraction.

    Examples
    --------
    >>> labels = [HumanLabel(f"q{i}", i % 2, "zh" if i < 6 else "en") for i in range(12)]
    >>> first = assign_split(labels, seed=1)
    >>> len(first.ids("dev")), len(first.ids("test"))  # each of the 4 strata of 3 items: 1 dev, 2 test
    (4, 8)
    >>> more = assign_split(labels + [HumanLabel("q12", 1, "en")], seed=1, previous=first)
    >>> all(more.side(i) == s for i, s in first.sides)
    True
    """
    if not 0 < dev_fraction < 1:
        raise ValueError("dev_fraction must be in (0, 1)")
    _unique(labels)
    kept = previous._map() if previous is not None else {}
    if previous is not None and (previous.seed != seed or previous.dev_fraction != dev_fraction):
        raise ValueError(f"the previous split was made with seed={previous.seed}, dev_fraction="
                         f"{previous.dev_fraction:g}; extend it with the same ones")
    strata: dict[tuple[int, str], list[HumanLabel]] = {}
    for lab in labels:
        strata.setdefault((lab.label, lab.slice), []).append(lab)
    sides: dict[str, str] = {}
    for members in strata.values():
        placed = [lab for lab in members if lab.item_id in kept]
        dev = sum(kept[lab.item_id] == DEV for lab in placed)
        total = len(placed)
        for lab in placed:
            sides[lab.item_id] = kept[lab.item_id]
        for lab in sorted((m for m in members if m.item_id not in kept), key=lambda m: item_hash(seed, m.item_id)):
            target = dev_fraction * (total + 1)
            to_dev = abs(dev + 1 - target) < abs(dev - target)
            sides[lab.item_id] = DEV if to_dev else TEST
            dev += to_dev
            total += 1
    return Split(seed, dev_fraction, tuple(sorted(sides.items())))


# ------------------------------------------------------------------------------------------------ figures


@dataclass(frozen=True)
class JudgeFigure(DictMixin):
    """One figure of a judge against the human labels, with its bootstrap interval over items.

    Attributes
    ----------
    statistic : str
        ``accuracy``, ``cohen_kappa``, ``sensitivity``, ``specificity``, ``base_rate``, ``judge_positive_rate``.
    value : float or None
        ``None`` when undefined (``note`` says why).
    ci_low, ci_high : float or None
        Percentile bootstrap interval; ``None`` when the value is undefined or the statistic is undefined on
        more than half of the resamples.
    n : int
        Items behind the figure's denominator (all items; human-right ones for sensitivity; human-wrong ones
        for specificity).
    small_sample : bool
        ``n < SMALL_SAMPLE_ITEMS``.
    note : str or None
    """

    statistic: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    small_sample: bool
    note: str | None = None


@dataclass(frozen=True)
class SplitFigures(DictMixin):
    """A judge version's figures on one side of the split.

    Attributes
    ----------
    side : {"dev", "test"}
    n_items : int
        Items with a human label and a verdict on this side.
    confusion : list of list of int, shape (2, 2)
        ``[[tn, fp], [fn, tp]]``: rows human wrong / right, columns judge wrong / right.
    confusion_ci : list of list of (float, float), shape (2, 2)
        Percentile bootstrap interval of each cell's count.
    accuracy, cohen_kappa, sensitivity, specificity, base_rate, judge_positive_rate : JudgeFigure
    false_positive_ids, false_negative_ids : tuple of str
        Items the judge calls right and people wrong; wrong and people right (sorted).
    method : str
        How the intervals were made.
    """

    side: str
    n_items: int
    confusion: list
    confusion_ci: list
    accuracy: JudgeFigure
    cohen_kappa: JudgeFigure
    sensitivity: JudgeFigure
    specificity: JudgeFigure
    base_rate: JudgeFigure
    judge_positive_rate: JudgeFigure
    false_positive_ids: tuple[str, ...]
    false_negative_ids: tuple[str, ...]
    method: str

    @property
    def disagreeing_ids(self) -> tuple[str, ...]:
        """Every item where judge and people disagree, sorted."""
        return tuple(sorted(self.false_positive_ids + self.false_negative_ids))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


#: Each figure as a function of the cell counts ``c`` (..., 4) = tn, fp, fn, tp; and its denominator.
_STATISTICS = {
    "accuracy": (lambda c: _ratio(c[..., 0] + c[..., 3], c.sum(-1)), lambda c: c.sum(-1)),
    "sensitivity": (lambda c: _ratio(c[..., 3], c[..., 2] + c[..., 3]), lambda c: c[..., 2] + c[..., 3]),
    "specificity": (lambda c: _ratio(c[..., 0], c[..., 0] + c[..., 1]), lambda c: c[..., 0] + c[..., 1]),
    "base_rate": (lambda c: _ratio(c[..., 2] + c[..., 3], c.sum(-1)), lambda c: c.sum(-1)),
    "judge_positive_rate": (lambda c: _ratio(c[..., 1] + c[..., 3], c.sum(-1)), lambda c: c.sum(-1)),
}
_UNDEFINED = {"accuracy": "undefined: no items", "sensitivity": "undefined: no human-right item",
              "specificity": "undefined: no human-wrong item", "base_rate": "undefined: no items",
              "judge_positive_rate": "undefined: no items"}


def _small_note(n: int) -> str | None:
    return f"small sample: {n} item{'s' if n != 1 else ''} (fewer than {SMALL_SAMPLE_ITEMS})" \
        if n < SMALL_SAMPLE_ITEMS else None


def split_figures(human: Sequence[int], judge: Sequence[int], ids: Sequence[str], side: str = TEST, *,
                  n_resamples: int = CALIBRATION_RESAMPLES, confidence_level: float = 0.95,
                  seed: int = 0) -> SplitFigures:
    """A judge's figures against human labels on one set of items, each with its bootstrap interval.

    Parameters
    ----------
    human, judge : sequence of int (0 or 1), shape (n,)
        The human verdict and the judge's on the same items, in the order of ``ids``.
    ids : sequence of str, shape (n,)
    side : str
        Named in the result.
    n_resamples : int
        Bootstrap resamples (items drawn with replacement); the same resamples for every figure; 0: no
        intervals.
    confidence_level : float
        In (0, 1).
    seed : int

    Returns
    -------
    SplitFigures

    Raises
    ------
    ValueError
        Sequences of different lengths or verdicts other than 0 and 1.

    References
    ----------
    Cohen (1960) for kappa; Efron & Tibshirani (1993), ch. 13 (percentile interval);
    ``sklearn.metrics.confusion_matrix`` / ``cohen_kappa_score`` (the same numbers, tested).
    """
    y_raw, v_raw = np.asarray(human).ravel(), np.asarray(judge).ravel()
    ids = [str(i) for i in ids]
    if not (y_raw.size == v_raw.size == len(ids)):
        raise ValueError(f"human, judge and ids must have one entry per item: {y_raw.size}, {v_raw.size}, {len(ids)}")
    if not (np.isin(y_raw, (0, 1)).all() and np.isin(v_raw, (0, 1)).all()):  # before the cast: 0.5 is no verdict
        raise ValueError("verdicts must be 0 (wrong) or 1 (right)")
    y, v = y_raw.astype(int), v_raw.astype(int)
    n = int(y.size)
    cell = 2 * y + v  # 0 tn, 1 fp, 2 fn, 3 tp
    counts = np.bincount(cell, minlength=4).astype(float)
    onehot = np.zeros((n, 4))
    onehot[np.arange(n), cell] = 1.0
    method = (f"bootstrap(percentile, items resampled, n_resamples={n_resamples}, level={confidence_level:g}, "
              f"seed={seed})") if n_resamples else "no interval (n_resamples=0)"

    def interval(fn) -> tuple[float | None, float | None]:
        if n == 0 or not n_resamples:
            return None, None
        low, high, _ = bootstrap_statistic_ci(n, lambda w: fn(w @ onehot), n_resamples=n_resamples,
                                              confidence_level=confidence_level, seed=seed)
        return low, high

    figures = {}
    for name, (fn, den) in _STATISTICS.items():
        value = float(fn(counts))
        d = int(den(counts))
        if np.isnan(value):
            figures[name] = JudgeFigure(name, None, None, None, d, d < SMALL_SAMPLE_ITEMS, _UNDEFINED[name])
        else:
            low, high = interval(fn)
            figures[name] = JudgeFigure(name, value, low, high, d, d < SMALL_SAMPLE_ITEMS, _small_note(d))
    if n:
        k = cohen_kappa_ci(y.tolist(), v.tolist(), labels=[0, 1], n_resamples=n_resamples,
                           confidence_level=confidence_level, seed=seed, min_items=SMALL_SAMPLE_ITEMS,
                           by_patterns=False)  # the same item resamples as the split's other figures
        kappa = JudgeFigure("cohen_kappa", k.value, k.ci_low, k.ci_high, n, n < SMALL_SAMPLE_ITEMS,
                            "undefined: one verdict only on both sides (chance agreement 1)" if k.value is None
                            else _small_note(n))
    else:
        kappa = JudgeFigure("cohen_kappa", None, None, None, 0, True, "undefined: no items")
    cells_ci = [interval(lambda c, j=j: c[..., j]) for j in range(4)]
    order = np.argsort(ids, kind="stable")
    fp = tuple(ids[i] for i in order if cell[i] == 1)
    fn_ = tuple(ids[i] for i in order if cell[i] == 2)
    return SplitFigures(side, n, [[int(counts[0]), int(counts[1])], [int(counts[2]), int(counts[3])]],
                        [cells_ci[:2], cells_ci[2:]], figures["accuracy"], kappa, figures["sensitivity"],
                        figures["specificity"], figures["base_rate"], figures["judge_positive_rate"], fp, fn_,
                        method)


# ------------------------------------------------------------------------------------------------ calibrate


@dataclass(frozen=True)
class JudgeCalibration(DictMixin):
    """One judge version against the calibration set, on dev and on test.

    Attributes
    ----------
    version : JudgeVersion
    dev, test : SplitFigures
    overfit : bool
        The dev kappa lies above the upper end of the test kappa's interval.
    warning : str or None
        The overfit warning, for display.
    missing_ids : tuple of str
        Labelled items without a verdict of this version (left out of its figures).
    unlabelled_verdicts : int
        Verdicts on items that are not in the calibration set (ignored).
    """

    version: JudgeVersion
    dev: SplitFigures
    test: SplitFigures
    overfit: bool
    warning: str | None
    missing_ids: tuple[str, ...]
    unlabelled_verdicts: int


@dataclass(frozen=True)
class CalibrationReport(DictMixin):
    """Every judge version against one calibration set.

    Attributes
    ----------
    judges : tuple of JudgeCalibration
        In the order given.
    split : Split
    n_labels : int
    guidelines_versions : tuple of str
        More than one only when pooled explicitly.
    pooled_guidelines : bool
    strata : tuple of (str, int, int)
        ``("label|slice", dev items, test items)`` per stratum.
    signature : str
    """

    judges: tuple[JudgeCalibration, ...]
    split: Split
    n_labels: int
    guidelines_versions: tuple[str, ...]
    pooled_guidelines: bool
    strata: tuple[tuple[str, int, int], ...]
    signature: str
    notes: tuple[str, ...] = field(default=())


def overfit_warning(dev: JudgeFigure, test: JudgeFigure) -> str | None:
    """The warning when the dev kappa lies above the upper end of the test kappa's interval, else ``None``."""
    if dev.value is None or test.ci_high is None or dev.value <= test.ci_high:
        return None
    return (f"overfit: dev kappa {dev.value:.3f} lies above the test kappa's interval "
            f"[{test.ci_low:.3f}, {test.ci_high:.3f}] (test kappa {test.value:.3f}); the prompt fits its dev "
            "examples better than held-out items")


def _verdict(value: Any, item_id: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if value in (0, 1):
        return int(value)
    raise ValueError(f"verdict of {item_id!r} must be 0 or 1 (or a bool), not {value!r}")


def calibrate(labels: Sequence[HumanLabel], judges: Iterable[tuple[JudgeVersion, Mapping[str, Any]]], *,
              split: Split | None = None, seed: int = 0, dev_fraction: float = 0.5, pool_guidelines: bool = False,
              n_resamples: int = CALIBRATION_RESAMPLES, confidence_level: float = 0.95) -> CalibrationReport:
    """Each judge version's figures on dev and test against the human final labels.

    Parameters
    ----------
    labels : sequence of HumanLabel
        The calibration set (unique ids).
    judges : iterable of (JudgeVersion, mapping item id -> verdict)
        Verdicts 1 (right) / 0 (wrong) or bools.
    split : Split, optional
        A stored split; items it does not hold are added to it (:func:`assign_split` with ``previous``).
        Default: a fresh split with ``seed`` and ``dev_fraction``.
    seed, dev_fraction
        Of a fresh split (a stored one keeps its own); ``seed`` also seeds the bootstrap.
    pool_guidelines : bool
        Accept labels of several guidelines versions (:func:`check_guidelines`).
    n_resamples, confidence_level
        Of every interval.

    Returns
    -------
    CalibrationReport

    Raises
    ------
    ValueError
        Several guidelines versions not pooled, repeated ids, verdicts other than 0/1, no labels.
    """
    labels = list(labels)
    if not labels:
        raise ValueError("a calibration set needs at least one human label")
    versions = check_guidelines(labels, pool_guidelines=pool_guidelines)
    if split is not None:
        split = assign_split(labels, seed=split.seed, dev_fraction=split.dev_fraction, previous=split)
    else:
        split = assign_split(labels, seed=seed, dev_fraction=dev_fraction)
    sides = split._map()
    by_id = {lab.item_id: lab for lab in labels}
    out = []
    for version, verdicts in judges:
        missing = tuple(sorted(i for i in by_id if i not in verdicts))
        extra = sum(1 for i in verdicts if i not in by_id)
        figs = {}
        for side in (DEV, TEST):
            ids = sorted(i for i in by_id if sides[i] == side and i in verdicts)
            figs[side] = split_figures([by_id[i].label for i in ids], [_verdict(verdicts[i], i) for i in ids], ids,
                                       side, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
        warning = overfit_warning(figs[DEV].cohen_kappa, figs[TEST].cohen_kappa)
        out.append(JudgeCalibration(version, figs[DEV], figs[TEST], warning is not None, warning, missing, extra))
    strata: dict[str, list[int]] = {}
    for lab in labels:
        counts = strata.setdefault(f"{lab.label}|{lab.slice}", [0, 0])
        counts[sides[lab.item_id] == TEST] += 1
    notes = (f"labels pooled over guidelines versions {', '.join(versions)}",) if len(versions) > 1 else ()
    signature = (f"judgelab.calibrate(split: sha256 order within label x slice, seed={split.seed}, "
                 f"dev_fraction={split.dev_fraction:g}; bootstrap n_resamples={n_resamples}, "
                 f"level={confidence_level:g}, seed={seed})")
    return CalibrationReport(tuple(out), split, len(labels), versions, len(versions) > 1,
                             tuple((k, d, t) for k, (d, t) in sorted(strata.items())), signature, notes)
