"""The judge lab in one call: what the *Judge lab* page shows and ``judge compare`` prints.

:func:`run_lab` puts together, for one calibration set and one or more judge versions: the calibration
report (:func:`~evaluators.judgelab.calibration.calibrate`: figures on dev and test with intervals, the
overfit warning), each version's corrected scores on the model's unlabelled outputs when its verdicts on
them are given (:func:`~evaluators.judgelab.corrected.corrected_for_version`, calibrated on the held-out
test side), each version's length bias when the answers' lengths are known
(:func:`~evaluators.judgelab.bias.length_bias`, on every labelled item), and each version against the one
before it (:func:`compare_versions`).

:func:`compare_versions` is two judge versions' verdicts on the same items: the items whose verdict moved,
the share moved, McNemar's exact test (:func:`~evaluators.judgelab.bias.drift`), and how much the two
versions agree with each other (percent agreement and Cohen's kappa with a bootstrap interval).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluators.judgelab.bias import BIAS_RESAMPLES, Drift, LengthBias, drift, length_bias
from evaluators.judgelab.calibration import (CALIBRATION_RESAMPLES, CalibrationReport, HumanLabel, JudgeFigure,
                                              JudgeVersion, Split, calibrate)
from evaluators.judgelab.corrected import CorrectedScores, corrected_for_version
from evaluators.judgelab.from_review import ReviewRef
from evaluators.metrics.agreement import cohen_kappa_ci
from evaluators.metrics.statistics import SMALL_SAMPLE_ITEMS
from evaluators.results import DictMixin


@dataclass(frozen=True)
class VersionComparison(DictMixin):
    """Two judge versions' verdicts on the same items.

    Attributes
    ----------
    before, after : str
        The versions' display names (the old one first).
    n_items : int
        Items both versions judged (among the anchors).
    agreement : float or None
        Share of those items with the same verdict.
    cohen_kappa : JudgeFigure
        Cohen's kappa between the two versions with its percentile bootstrap interval over items.
    drift : Drift
        Moved items (``up_ids``: wrong to right, ``down_ids``: right to wrong), the share moved with its
        Wilson interval, McNemar's exact test.
    """

    before: str
    after: str
    n_items: int
    agreement: float | None
    cohen_kappa: JudgeFigure
    drift: Drift


def compare_versions(before: Mapping[str, int], after: Mapping[str, int], *, names: tuple[str, str] = ("before", "after"),
                     anchor_ids: Sequence[str] | None = None, n_resamples: int = CALIBRATION_RESAMPLES,
                     confidence_level: float = 0.95, seed: int = 0) -> VersionComparison:
    """Drift, agreement and McNemar's test between two judge versions.

    Parameters
    ----------
    before, after : mapping item id -> verdict (0 or 1)
        The old and the new version's verdicts.
    names : (str, str)
        Their display names.
    anchor_ids : sequence of str, optional
        The items to compare on (default: every item either version judged); items only one version
        judged are listed in ``drift.missing_ids``.
    n_resamples, confidence_level, seed
        Of the kappa's percentile bootstrap interval (items resampled).

    Returns
    -------
    VersionComparison

    Raises
    ------
    ValueError
        As :func:`~evaluators.judgelab.bias.drift` (a verdict that is not 0, 1 or a bool).

    References
    ----------
    McNemar (1947) and Wilson (1927) through :func:`~evaluators.judgelab.bias.drift`; Cohen (1960);
    Efron & Tibshirani (1993), ch. 13.
    """
    moved = drift(before, after, anchor_ids, confidence_level=confidence_level)
    skipped = set(moved.missing_ids)
    both = sorted(i for i in (set(anchor_ids) if anchor_ids is not None else set(before) | set(after))
                  if i not in skipped)
    a, b = [int(before[i]) for i in both], [int(after[i]) for i in both]
    n = len(both)
    if n:
        k = cohen_kappa_ci(a, b, labels=[0, 1], n_resamples=n_resamples, confidence_level=confidence_level,
                           seed=seed, min_items=SMALL_SAMPLE_ITEMS)
        kappa = JudgeFigure("cohen_kappa", k.value, k.ci_low, k.ci_high, n, n < SMALL_SAMPLE_ITEMS,
                            "undefined: one verdict only on both sides (chance agreement 1)" if k.value is None
                            else None)
    else:
        kappa = JudgeFigure("cohen_kappa", None, None, None, 0, True, "undefined: no item judged by both")
    agreement = sum(x == y for x, y in zip(a, b)) / n if n else None
    return VersionComparison(names[0], names[1], n, agreement, kappa, moved)


@dataclass(frozen=True)
class JudgeLab(DictMixin):
    """Everything the Judge lab shows for one calibration set.

    Attributes
    ----------
    report : CalibrationReport
    corrected : tuple of (str, CorrectedScores)
        Version name -> its corrected scores, for the versions with verdicts on target items.
    corrected_notes : tuple of str
        Why a version with target verdicts has no corrected scores.
    length_bias : tuple of (str, LengthBias)
        Version name -> the slope of its verdict on answer length given the human label (all labelled
        items with a known length), when lengths are given and vary.
    comparisons : tuple of VersionComparison
        Each version against the one before it, on the labelled items.
    review_refs : tuple of ReviewRef
        Where the calibration items live in the review database (empty for labels from a file).
    """

    report: CalibrationReport
    corrected: tuple[tuple[str, CorrectedScores], ...]
    corrected_notes: tuple[str, ...]
    length_bias: tuple[tuple[str, LengthBias], ...]
    comparisons: tuple[VersionComparison, ...]
    review_refs: tuple[ReviewRef, ...] = ()

    def review_ref(self, item_id: str) -> ReviewRef | None:
        """The review item of a calibration id, ``None`` when the labels did not come from review."""
        return next((r for r in self.review_refs if r.item_id == item_id), None)


def run_lab(labels: Sequence[HumanLabel], judges: Sequence[tuple[JudgeVersion, Mapping[str, int]]], *,
            target: Mapping[str, Mapping[str, int]] | None = None, lengths: Mapping[str, float] | None = None,
            split: Split | None = None, seed: int = 0, dev_fraction: float = 0.5, pool_guidelines: bool = False,
            n_resamples: int = CALIBRATION_RESAMPLES, refs: Sequence[ReviewRef] = ()) -> JudgeLab:
    """Calibrate judge versions, correct their scores, measure length bias and drift: the lab's one run function.

    Parameters
    ----------
    labels : sequence of HumanLabel
        The calibration set.
    judges : sequence of (JudgeVersion, mapping item id -> verdict)
        In display order; names (``version.label``) must be unique.
    target : mapping version name -> (mapping item id -> verdict), optional
        Each version's verdicts on the model's unlabelled outputs (corrected scores).
    lengths : mapping item id -> float, optional
        Answer lengths in characters (length bias); items without one are left out of it.
    split, seed, dev_fraction, pool_guidelines, n_resamples
        As :func:`~evaluators.judgelab.calibration.calibrate` (the same defaults as ``judge calibrate``).
    refs : sequence of ReviewRef
        The review items behind the labels, kept for links.

    Returns
    -------
    JudgeLab

    Raises
    ------
    ValueError
        Two versions of the same name, or as :func:`~evaluators.judgelab.calibration.calibrate`.
    """
    names = [v.label for v, _ in judges]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two judge versions are both named {twice[0]!r}: give each its own name")
    report = calibrate(labels, judges, split=split, seed=seed, dev_fraction=dev_fraction,
                       pool_guidelines=pool_guidelines, n_resamples=n_resamples)
    corrected, notes = [], []
    for version, verdicts in judges:
        if target is None or version.label not in target:
            continue
        try:
            corrected.append((version.label, corrected_for_version(labels, report.split, verdicts,
                                                                   target[version.label])))
        except ValueError as exc:
            notes.append(f"{version.label}: no corrected scores: {exc}")
    for name in sorted(set(target or ()) - set(names)):
        notes.append(f"target verdicts of {name!r} have no calibrated version of that name")
    biases = []
    if lengths:
        for version, verdicts in judges:
            ids = [lab for lab in labels if lab.item_id in verdicts and lab.item_id in lengths]
            if len(ids) >= 3:
                bias = length_bias([int(verdicts[lab.item_id]) for lab in ids],
                                   [float(lengths[lab.item_id]) for lab in ids], [lab.label for lab in ids],
                                   n_resamples=n_resamples or BIAS_RESAMPLES, seed=seed)
                if bias.slope is not None:
                    biases.append((version.label, bias))
    anchors = [lab.item_id for lab in labels]
    comparisons = tuple(compare_versions(judges[i - 1][1], judges[i][1], names=(names[i - 1], names[i]),
                                         anchor_ids=anchors, n_resamples=n_resamples, seed=seed)
                        for i in range(1, len(judges)))
    return JudgeLab(report, tuple(corrected), tuple(notes), tuple(biases), comparisons, tuple(refs))


@dataclass(frozen=True)
class LabInputs(DictMixin):
    """What the lab reads from files (or a review database): :func:`run_lab`'s arguments and the problems found.

    Attributes
    ----------
    labels : tuple of HumanLabel
    judges : tuple of (JudgeVersion, dict)
    target : dict
        Version name -> its verdicts on unlabelled items (empty without a target file).
    lengths : dict
        Item id -> answer length in characters (from an items file or the review payloads' predictions).
    refs : tuple of ReviewRef
    issues : tuple of InputIssue
        Records left out, located.
    left_out : tuple of (str, str)
        Review items whose final label is no right / wrong verdict (GT errors), with why.
    """

    labels: tuple[HumanLabel, ...]
    judges: tuple
    target: dict
    lengths: dict
    refs: tuple[ReviewRef, ...] = ()
    issues: tuple = ()
    left_out: tuple[tuple[str, str], ...] = ()


def read_lab_inputs(*, labels: tuple[str, bytes] | None = None, verdicts: Sequence[tuple[str, bytes]] = (),
                    target: tuple[str, bytes] | None = None, items: tuple[str, bytes] | None = None,
                    review: tuple[object, Sequence[int]] | None = None) -> LabInputs:
    """Read the lab's inputs: labels from a file or from review sessions, verdict files, target verdicts, items.

    Parameters
    ----------
    labels : (name, bytes), optional
        A labels file (:func:`evaluators.judgelab.inputs.read_labels`).
    verdicts : sequence of (name, bytes)
        Judge-verdict files, in order (:func:`evaluators.judgelab.inputs.read_verdicts`).
    target : (name, bytes), optional
        The versions' verdicts on unlabelled items.
    items : (name, bytes), optional
        Items with their answers (:func:`evaluators.judgelab.inputs.read_items`): the answer lengths.
    review : (ReviewStore, session ids), optional
        Instead of ``labels``: the sessions' final labels (:func:`evaluators.judgelab.from_review.labels_from_review`),
        their items (links, and answer lengths from the payloads' ``prediction``).

    Returns
    -------
    LabInputs

    Raises
    ------
    evaluators.io.InputError
        A file that cannot be decoded.
    """
    from evaluators.judgelab.from_review import labels_from_review, review_refs
    from evaluators.judgelab.inputs import read_items, read_labels, read_verdicts

    issues: list = []
    got_labels: tuple[HumanLabel, ...] = ()
    refs: tuple[ReviewRef, ...] = ()
    left_out: tuple = ()
    lengths: dict = {}
    if review is not None:
        store, sessions = review
        from_review = labels_from_review(store, sessions)
        got_labels, left_out = from_review.labels, from_review.left_out
        refs = review_refs(store, sessions)
        lengths = {r.item_id: r.answer_length for r in refs if r.answer_length is not None}
    elif labels is not None:
        read = read_labels(labels[1], labels[0])
        got_labels, issues = read.labels, list(read.issues)
    judges: list = []
    for name, data in verdicts:
        read = read_verdicts(data, name)
        judges += read.judges
        issues += read.issues
    target_verdicts: dict = {}
    if target is not None:
        read = read_verdicts(target[1], target[0])
        target_verdicts = {v.label: d for v, d in read.judges}
        issues += read.issues
    if items is not None:
        got_items, item_issues = read_items(items[1], items[0])
        lengths.update({i.item_id: len(i.answer) for i in got_items})
        issues += item_issues
    return LabInputs(tuple(got_labels), tuple(judges), target_verdicts, lengths, refs, tuple(issues), left_out)
