"""Scores before and after review corrections (a GT patch), run by run and metric by metric.

Every task that accepts a GT patch (QA, long memory, test sets, persona dialogue) scores its
records twice, against the ground truth as read and as corrected, and hands the per-record
values of each run here: :func:`score_effect` puts the two side by side on the records scored
both times — means with percentile bootstrap intervals (records resampled), the paired
difference after minus before (paired bootstrap: interval and two-sided p-value, flagged when
few records changed; the paired randomization test, exact over every sign flip when at most 20
records changed), McNemar's exact test for a binary metric (exact match), and, with two or more
runs, the pairs of systems
whose order a correction reversed (rank flips).  The renderers are in
:mod:`evaluators.reports.corrections`.

:func:`run_before_after` is the one skeleton every task's corrections go through: the task says, in a
:class:`CorrectionsAdapter`, how a patch changes its inputs, how they are run and which values of a run
are compared; the skeleton applies the patch (refused before anything is scored), runs before and
after, and returns both runs with their :class:`Corrections`.

References
----------
Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 and sec. 16.4 (percentile
intervals, paired bootstrap test); McNemar (1947), *Psychometrika* 12(2) (exact binomial form);
Fisher (1935) / Pitman (1937) (the exact sign-flip permutation test); Dror et al. (2018), "The
Hitchhiker's Guide to Testing Statistical Significance in NLP", ACL (small test sets).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from evaluators.io.errors import InputIssue
from evaluators.io.gt_patch import GTPatchSet, PatchApplication
from evaluators.metrics.statistics import (
    BootstrapCI,
    McNemarResult,
    PairedComparison,
    approximate_randomization,
    bootstrap_ci,
    mcnemar,
    paired_bootstrap,
)
from evaluators.results import DictMixin

#: Short names of metrics in tables and sentences (others are shown by their own name).
METRIC_LABELS: dict[str, str] = {"exact_match": "EM", "token_f1": "F1", "exact_match_normalized": "EM (normalized)",
                                 "token_f1_char": "F1 (char)", "judge_score": "judge", "locomo_f1": "LoCoMo F1",
                                 "keyword_score": "keyword score", "combined_score": "combined",
                                 "overall_score": "overall"}


def metric_label(metric: str) -> str:
    """The short name of ``metric`` in tables (``exact_match`` -> ``EM``).

    Parameters
    ----------
    metric : str
        A metric key.

    Returns
    -------
    str
        Its entry in :data:`METRIC_LABELS`, else ``metric`` itself.

    Examples
    --------
    >>> metric_label("token_f1_char"), metric_label("rougeL")
    ('F1 (char)', 'rougeL')
    """
    return METRIC_LABELS.get(metric, metric)


@dataclass(frozen=True)
class MetricChange(DictMixin):
    """One metric of one run before and after the corrections, on the records scored both times.

    Attributes
    ----------
    metric : str
    n_paired : int
        Records with a value before and after.
    before, after : BootstrapCI
        Means with percentile bootstrap intervals (records resampled).
    change : PairedComparison
        After minus before: paired bootstrap interval and two-sided p-value; its ``small_sample``
        says why that p-value is not to be trusted (few records, few changed records).
    mcnemar : McNemarResult or None
        McNemar's exact test (records right after only vs before only), for a binary metric.
    randomization : PairedComparison or None
        The paired randomization test of the same change where the bootstrap's p-value is flagged
        (``change.small_sample``; ``None`` otherwise): exact (every sign flip) when at most
        :data:`~evaluators.metrics.statistics.EXACT_SIGN_FLIP_MAX` records changed.
    """

    metric: str
    n_paired: int
    before: BootstrapCI
    after: BootstrapCI
    change: PairedComparison
    mcnemar: McNemarResult | None = None
    randomization: PairedComparison | None = None

    @property
    def trusted_p(self) -> tuple[float | None, str]:
        """The p-value to read and where it comes from: the paired bootstrap's, unless it is flagged
        (``change.small_sample``), then McNemar's exact one (binary metric) or the randomization test's."""
        if not self.change.small_sample:
            return self.change.p_value, "paired bootstrap"
        if self.mcnemar is not None:
            return self.mcnemar.p_value, "McNemar exact"
        if self.randomization is not None:
            return self.randomization.p_value, ("exact sign-flip" if self.randomization.exact
                                                else "approximate randomization")
        return self.change.p_value, "paired bootstrap"


@dataclass(frozen=True)
class ScoreChange(DictMixin):
    """One run's scores before and after the corrections.

    Attributes
    ----------
    run : str
    n_paired : int
        Records with a value before and after of the first metric compared.
    n_changed : int
        Records where some metric's value changed.
    metrics : tuple of MetricChange
        In the order asked for; a metric without a record scored both times is left out.
    """

    run: str
    n_paired: int
    n_changed: int
    metrics: tuple[MetricChange, ...]

    def metric(self, name: str) -> MetricChange:
        """The change of metric ``name`` (``KeyError`` when it was not compared).

        Parameters
        ----------
        name : str
            A metric key of :attr:`metrics`.

        Returns
        -------
        MetricChange

        Raises
        ------
        KeyError
            No record of this run was scored both times on ``name``.
        """
        for m in self.metrics:
            if m.metric == name:
                return m
        raise KeyError(name)


@dataclass(frozen=True)
class RankFlip(DictMixin):
    """Two systems whose order by a metric is reversed by the corrections.

    Attributes
    ----------
    metric : str
    higher_before, higher_after : str
        The system ahead before, the one ahead after.
    before, after : tuple of float
        Both systems' means (``higher_before`` first) before and after.
    """

    metric: str
    higher_before: str
    higher_after: str
    before: tuple[float, float]
    after: tuple[float, float]


@dataclass(frozen=True)
class PatchEffect(DictMixin):
    """Scores before and after the corrections, run by run.

    Attributes
    ----------
    changes : tuple of ScoreChange
        One per run, in the runs' order.
    rank_flips : tuple of RankFlip
        Pairs of runs whose order changed (any metric compared); empty with one run.
    metrics : tuple of str
        The metrics compared, in order.
    unit : str
        What a paired value is (``record``, ``question``, ``item``, ``case``).
    """

    changes: tuple[ScoreChange, ...]
    rank_flips: tuple[RankFlip, ...]
    metrics: tuple[str, ...] = ()
    unit: str = "record"


@dataclass(frozen=True)
class Corrections(DictMixin):
    """What a run's GT patches did and the scores they changed (a run function's ``corrections``).

    Attributes
    ----------
    applications : tuple of (str, PatchApplication)
        Per GT file: what each patch entry did.
    effect : PatchEffect or None
        Before / after; ``None`` when no record was scored both times (``note`` says why).
    files : tuple of str
        The patch files, in the order applied.
    note : str
    """

    applications: tuple[tuple[str, PatchApplication], ...]
    effect: PatchEffect | None
    files: tuple[str, ...] = ()
    note: str = ""


def _finite(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def score_effect(before: Mapping[str, Mapping[str, Sequence[float | None]]],
                 after: Mapping[str, Mapping[str, Sequence[float | None]]], metrics: Sequence[str], *,
                 binary: Sequence[str] = (), n_resamples: int = 10_000, confidence_level: float = 0.95,
                 seed: int = 0, unit: str = "record") -> PatchEffect:
    """Compare each run's per-record scores before and after the corrections.

    Parameters
    ----------
    before, after : mapping of str to (mapping of str to sequence of float or None)
        Run name -> metric -> one value per record, the same records in the same order before
        and after (length n_records of the run); ``None`` (not scored) leaves that record out of
        that metric.
    metrics : sequence of str
        The metrics compared, in order (a metric a run does not have is skipped for that run).
    binary : sequence of str
        Metrics whose values are 0 or 1 (McNemar's exact test is added).
    n_resamples : int
        Bootstrap resamples (>= 1) of every interval and paired test.
    confidence_level : float
        In (0, 1).
    seed : int
    unit : str
        What a record is, named in the intervals' signature.

    Returns
    -------
    PatchEffect

    Raises
    ------
    ValueError
        Runs that differ between ``before`` and ``after``, lengths that differ, or a run with no
        record scored both times in any metric.

    References
    ----------
    Means: percentile bootstrap (Efron & Tibshirani 1993, ch. 13,
    :func:`~evaluators.metrics.statistics.bootstrap_ci`); change: paired bootstrap (Koehn 2004,
    :func:`~evaluators.metrics.statistics.paired_bootstrap`, flagged on few records or few changed
    records: :func:`~evaluators.metrics.statistics.small_sample_reason`) and the paired randomization
    test (exact over all sign flips when few records changed: Fisher-Pitman,
    :func:`~evaluators.metrics.statistics.approximate_randomization`); binary metrics: McNemar's exact test
    (McNemar 1947, :func:`~evaluators.metrics.statistics.mcnemar`).
    """
    if list(before) != list(after):
        raise ValueError("before and after must have the same runs")
    settings = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed}
    changes = []
    for run in before:
        b_run, a_run = before[run], after[run]
        out, changed, n_first = [], set(), None
        for metric in metrics:
            if metric not in b_run or metric not in a_run:
                continue
            xb, xa = list(b_run[metric]), list(a_run[metric])
            if len(xb) != len(xa):
                raise ValueError(f"{run}: before and after must be the same records ({metric}: {len(xb)} vs "
                                 f"{len(xa)})")
            pairs = [(i, float(b), float(a)) for i, (b, a) in enumerate(zip(xb, xa)) if _finite(b) and _finite(a)]
            changed.update(i for i, (b, a) in enumerate(zip(xb, xa)) if b != a)
            if not pairs:
                continue
            if n_first is None:
                n_first = len(pairs)
            vb, va = [b for _, b, _ in pairs], [a for _, _, a in pairs]
            ci = {**settings, "unit": unit}
            change = paired_bootstrap(vb, va, **settings)
            # the randomization test where the bootstrap is not to be trusted (few records or few changes: cheap,
            # exact over every sign flip up to 20 changes); on many changes the bootstrap stands alone
            out.append(MetricChange(metric, len(pairs), bootstrap_ci(vb, **ci), bootstrap_ci(va, **ci), change,
                                    mcnemar(vb, va) if metric in binary else None,
                                    approximate_randomization(vb, va, n_resamples=n_resamples, seed=seed)
                                    if change.small_sample else None))
        if not out:
            raise ValueError(f"{run}: no {unit} scored before and after the corrections")
        changes.append(ScoreChange(run, n_first or 0, len(changed), tuple(out)))
    return PatchEffect(tuple(changes), rank_flips(changes, metrics), tuple(metrics), unit)


def rank_flips(changes: Sequence[ScoreChange], metrics: Sequence[str]) -> tuple[RankFlip, ...]:
    """Pairs of runs whose order by a metric is strictly reversed (a tie after is not a reversal).

    Parameters
    ----------
    changes : sequence of ScoreChange
        One per run, each with its metrics' means before and after.
    metrics : sequence of str
        Metric keys to compare; a run without a metric is left out of that metric's pairs.

    Returns
    -------
    tuple of RankFlip
        One per (metric, pair of runs) whose difference of means changes sign strictly (a tie
        before or after is no flip), the run ahead before first; metrics in the order given.
    """
    flips = []
    for metric in metrics:
        for i, x in enumerate(changes):
            for y in changes[i + 1:]:
                try:
                    mx, my = x.metric(metric), y.metric(metric)
                except KeyError:
                    continue
                xb, yb, xa, ya = mx.before.estimate, my.before.estimate, mx.after.estimate, my.after.estimate
                if (xb - yb) * (xa - ya) < 0:
                    hi, lo = (mx, my) if xb > yb else (my, mx)
                    hi_run, lo_run = (x.run, y.run) if xb > yb else (y.run, x.run)
                    flips.append(RankFlip(metric, hi_run, lo_run, (hi.before.estimate, lo.before.estimate),
                                          (hi.after.estimate, lo.after.estimate)))
    return tuple(flips)


def corrections_of(applications: Sequence[tuple[str, PatchApplication]],
                   before: Mapping[str, Mapping[str, Sequence[float | None]]],
                   after: Mapping[str, Mapping[str, Sequence[float | None]]], metrics: Sequence[str], *,
                   files: Sequence[str] = (), **settings) -> Corrections:
    """A run's :class:`Corrections`: what the patches did and :func:`score_effect` of its values before and after.

    Parameters
    ----------
    applications : sequence of (str, PatchApplication)
        Per GT file: what each patch entry did.
    before, after, metrics
        As :func:`score_effect`: run -> metric -> one value per record (shape (n_records,) of the run,
        values in [0, 1] or ``None``), the same records in the same order.
    files : sequence of str
        The patch files, in the order applied.
    **settings
        ``binary``, ``n_resamples``, ``confidence_level``, ``seed``, ``unit`` of :func:`score_effect`.

    Returns
    -------
    Corrections
        ``effect`` is ``None`` when :func:`score_effect` refuses the values (no record scored both
        times, runs or lengths that differ), with its message as ``note``; nothing is raised.
    """
    try:
        effect, note = score_effect(before, after, metrics, **settings), ""
    except ValueError as exc:
        effect, note = None, str(exc)
    return Corrections(tuple(applications), effect, tuple(files), note)


#: Values of a run as :func:`score_effect` reads them: run (system) -> metric -> one value per record.
RunValues = Mapping[str, Mapping[str, Sequence[float | None]]]


@dataclass(frozen=True)
class PatchedInputs:
    """A task's inputs with the corrections applied (what :attr:`CorrectionsAdapter.patch` returns).

    Attributes
    ----------
    inputs : object
        What the run after the corrections scores (the task's own type).
    applications : tuple of (str, PatchApplication)
        Per GT file: what each patch entry did (:func:`evaluators.io.gt_patch.apply_gt_patch`).
    issues : tuple of InputIssue
        Problems of the patching that the task adds to its report's problems (e.g. the applications'
        located conflicts and unknown ids, or lines made for no GT file of the run).
    extra : object
        Whatever else the run after the corrections needs (further references of a record); ``None``
        when nothing.
    """

    inputs: Any
    applications: tuple[tuple[str, PatchApplication], ...]
    issues: tuple[InputIssue, ...] = ()
    extra: Any = None


def per_run(values: Callable[[Any], RunValues]) -> Callable[[Any, Any], tuple[RunValues, RunValues]]:
    """A :attr:`CorrectionsAdapter.values` that reads each run on its own.

    Parameters
    ----------
    values : callable
        ``values(report)`` -> run -> metric -> one value per record (shape (n_records,) per run).

    Returns
    -------
    callable
        ``(before, after) -> (values(before), values(after))``.
    """
    return lambda before, after: (values(before), values(after))


def _static(names: Sequence[str]) -> Callable[[Any, Any], Sequence[str]]:
    return lambda before, after: tuple(names)


@dataclass(frozen=True)
class CorrectionsAdapter:
    """What :func:`run_before_after` needs to know about a task (each task builds one per run).

    Attributes
    ----------
    patch : callable
        ``patch(inputs, patches) -> PatchedInputs``: the inputs with the corrected (and accepted)
        answers.  Raises :class:`~evaluators.io.gt_patch.GTPatchMismatch` for a patch made for other
        GT files; it is called before anything is scored.
    run : callable
        ``run(inputs) -> report``: the run of the inputs as read (and of ``PatchedInputs.inputs``
        unless ``run_after`` is given); it must not apply the patch itself.
    values : callable
        ``values(before, after) -> (before_values, after_values)``, each run -> metric -> one value
        per record, the same records in the same order (``None``: not scored), as :func:`score_effect`
        reads them; :func:`per_run` makes one from a function of one report.
    metrics : sequence of str or callable
        The metrics compared, in order, or ``metrics(before, after)`` returning them (a task whose
        metrics depend on the run's config).
    binary : sequence of str or callable
        The 0/1 metrics among them (McNemar's exact test), or ``binary(before, after)``.
    run_after : callable, optional
        ``run_after(patched) -> report`` when the run after the corrections is not ``run(patched.inputs)``
        (a different cache key, progress shown for one run only, scores over further references).
    unit : str
        What one value is (``record``, ``question``, ``case``, ``item``, ``document``).
    n_resamples : int
        Bootstrap resamples (>= 1) of the intervals and paired tests.
    seed : int
    """

    patch: Callable[[Any, GTPatchSet], PatchedInputs]
    run: Callable[[Any], Any]
    values: Callable[[Any, Any], tuple[RunValues, RunValues]]
    metrics: Sequence[str] | Callable[[Any, Any], Sequence[str]]
    binary: Sequence[str] | Callable[[Any, Any], Sequence[str]] = ()
    run_after: Callable[[PatchedInputs], Any] | None = None
    unit: str = "record"
    n_resamples: int = 10_000
    seed: int = 0


class BeforeAfter(NamedTuple):
    """What :func:`run_before_after` returns (unpacks as ``before, after, corrections, issues``).

    Attributes
    ----------
    before, after : object
        The task's reports without and with the corrections.
    corrections : Corrections
    issues : tuple of InputIssue
        :attr:`PatchedInputs.issues`: for the task to add to the report after the corrections.
    """

    before: Any
    after: Any
    corrections: Corrections
    issues: tuple[InputIssue, ...]


_UNSET = object()


def run_before_after(inputs: Any, patches: GTPatchSet, adapter: CorrectionsAdapter, *,
                     before: Any = _UNSET) -> BeforeAfter:
    """Score a task's inputs before and after GT patches: the one corrections skeleton of every task.

    In order: ``adapter.patch(inputs, patches)`` (a patch for other GT files is refused here, before
    anything is scored), the run before (``adapter.run(inputs)``, or ``before`` when the task scored it
    already), the run after (``adapter.run_after(patched)`` or ``adapter.run(patched.inputs)``), then
    :func:`corrections_of` of the applications and of ``adapter.values(before, after)`` on
    ``adapter.metrics``.

    Parameters
    ----------
    inputs : object
        The task's inputs as read.
    patches : GTPatchSet
        Applied in order; ``patches.files`` become the corrections' ``files``.
    adapter : CorrectionsAdapter
    before : object, optional
        The run of ``inputs`` without the patch when the task has it already (a scored report that is
        patched rather than run again: QA, test sets); ``adapter.run`` is then not called for it.

    Returns
    -------
    BeforeAfter
        ``(before, after, corrections, issues)``; ``corrections.effect`` is ``None`` (with a ``note``) when
        no record was scored both times.

    Raises
    ------
    GTPatchMismatch
        From ``adapter.patch``; and whatever the task's run raises.

    Examples
    --------
    Two systems, one exact-match value per item, one correction that makes system B right on item 2:

    >>> from evaluators.io.gt_patch import GTPatchSet
    >>> adapter = CorrectionsAdapter(
    ...     patch=lambda x, p: PatchedInputs(x + "*", ()), run=lambda x: x,
    ...     values=lambda b, a: ({"A": {"em": [1, 0]}, "B": {"em": [0, 0]}},
    ...                          {"A": {"em": [1, 0]}, "B": {"em": [0, 1]}}),
    ...     metrics=("em",), binary=("em",), n_resamples=10)
    >>> b, a, corrections, _ = run_before_after("gt", GTPatchSet(), adapter)
    >>> (b, a, corrections.effect.changes[1].metric("em").after.estimate)
    ('gt', 'gt*', 0.5)
    """
    patched = adapter.patch(inputs, patches)
    if before is _UNSET:
        before = adapter.run(inputs)
    after = adapter.run_after(patched) if adapter.run_after is not None else adapter.run(patched.inputs)
    metrics = adapter.metrics if callable(adapter.metrics) else _static(adapter.metrics)
    binary = adapter.binary if callable(adapter.binary) else _static(adapter.binary)
    values_before, values_after = adapter.values(before, after)
    corrections = corrections_of(patched.applications, values_before, values_after, tuple(metrics(before, after)),
                                 files=patches.files, binary=tuple(binary(before, after)),
                                 n_resamples=adapter.n_resamples, seed=adapter.seed, unit=adapter.unit)
    return BeforeAfter(before, after, corrections, tuple(patched.issues))
