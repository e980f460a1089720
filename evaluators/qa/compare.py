"""Paired comparison of two QA / fact-check runs on the same questions.

Two runs are two reports of the same ground truth (two prediction files), or two groups of
one report (two systems in one file, e.g. HotpotQA comparison files).  Records are paired by
id; only ids scored in both runs are compared.  For each pair the per-record differences of
EM and F1 give:

- the mean difference with a paired bootstrap interval and p-value, and an approximate
  randomization p-value (:mod:`evaluators.metrics.statistics`);
- McNemar's exact test on EM (binary outcomes);
- the records that changed: won (B higher F1), lost (B lower) and tied.

Several runs side by side (:func:`side_by_side`): one row per record id with every system's
prediction, EM and F1 and whether the systems agree, and each system's EM / F1 with
bootstrap intervals (records resampled).  :func:`runs_of` turns reports into named runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evaluators.metrics.statistics import (
    McNemarResult, PairedComparison, approximate_randomization, mcnemar, paired_bootstrap,
)
from evaluators.qa.evaluate import (
    STATUS_MISSING_PREDICTION, STATUS_SCORED, QARecordResult, QAReport, ScoreSummary, with_intervals,
)
from evaluators.results import CommonItems, DictMixin, common_items


@dataclass(frozen=True)
class ChangedRecord(DictMixin):
    """One record scored in both runs.

    Attributes
    ----------
    id : str
    outcome : {"won", "lost", "tied"}
        By F1 of run B against run A.
    exact_match_a, exact_match_b, token_f1_a, token_f1_b : float
    prediction_a, prediction_b : str
    question : str or None
    """

    id: str
    outcome: str
    exact_match_a: float
    exact_match_b: float
    token_f1_a: float
    token_f1_b: float
    prediction_a: str
    prediction_b: str
    question: str | None


@dataclass(frozen=True)
class RunComparison(DictMixin):
    """Run B against run A on the records both scored.

    Attributes
    ----------
    name_a, name_b : str
    n_paired : int
        Records scored in both runs (paired by id).
    only_a, only_b : int
        Scored ids found in one run only (left out).
    token_f1_bootstrap, exact_match_bootstrap : PairedComparison
        Paired bootstrap of the mean differences (B - A).
    token_f1_randomization : PairedComparison
        Approximate randomization test of the F1 difference.
    exact_match_mcnemar : McNemarResult
    records : tuple of ChangedRecord
        Every paired record, in run A's order.
    """

    name_a: str
    name_b: str
    n_paired: int
    only_a: int
    only_b: int
    token_f1_bootstrap: PairedComparison
    exact_match_bootstrap: PairedComparison
    token_f1_randomization: PairedComparison
    exact_match_mcnemar: McNemarResult
    records: tuple[ChangedRecord, ...] = field(repr=False, default=())


def _scored(records: Iterable[QARecordResult]) -> dict[str, QARecordResult]:
    out: dict[str, QARecordResult] = {}
    for r in records:
        if r.status in (STATUS_SCORED, STATUS_MISSING_PREDICTION) and r.exact_match is not None:
            out.setdefault(r.id, r)  # a duplicate id keeps its first record
    return out


def compare_records(a: Iterable[QARecordResult], b: Iterable[QARecordResult], name_a: str = "A",
                    name_b: str = "B", *, n_resamples: int = 10_000, seed: int = 0) -> RunComparison:
    """Compare two runs' records paired by id.

    ``n_resamples`` = 0 runs neither the paired bootstrap nor the randomization test (their
    intervals and p-values are ``None`` and their ``method`` says so); McNemar's test is exact
    and always computed.

    Parameters
    ----------
    a, b : iterable of QARecordResult
        The two runs' records; records with an EM (scored, or a missing prediction counted as 0)
        are kept, the first record of a repeated id only.
    name_a, name_b : str
        The runs' names in the result (``b`` is compared against ``a``).
    n_resamples : int
        Resamples of the paired bootstraps and the randomization test (0: none).
    seed : int
        Seed of the resampling.

    Returns
    -------
    RunComparison
        Ids paired and left out on each side, the paired bootstrap of the F1 and EM differences
        (B - A), approximate randomization on F1, McNemar on EM, and one row per paired id
        (won / lost / tied by F1).

    Raises
    ------
    ValueError
        When no id is scored in both runs.

    References
    ----------
    Koehn (2004) (paired bootstrap); Noreen (1989) (approximate randomization); McNemar (1947).
    """
    ra, rb = _scored(a), _scored(b)
    ids = [i for i in ra if i in rb]
    if not ids:
        raise ValueError(f"{name_a} and {name_b} have no scored record id in common")
    em_a = [ra[i].exact_match for i in ids]
    em_b = [rb[i].exact_match for i in ids]
    f1_a = [ra[i].token_f1 for i in ids]
    f1_b = [rb[i].token_f1 for i in ids]
    changed = tuple(
        ChangedRecord(i, "won" if fb > fa else "lost" if fb < fa else "tied", ea, eb, fa, fb,
                      ra[i].prediction, rb[i].prediction, ra[i].question)
        for i, ea, eb, fa, fb in zip(ids, em_a, em_b, f1_a, f1_b))
    return RunComparison(
        name_a, name_b, len(ids), len(ra) - len(ids), len(rb) - len(ids),
        paired_bootstrap(f1_a, f1_b, n_resamples=n_resamples, seed=seed),
        paired_bootstrap(em_a, em_b, n_resamples=n_resamples, seed=seed),
        approximate_randomization(f1_a, f1_b, n_resamples=n_resamples, seed=seed),
        mcnemar(em_a, em_b), changed)


def compare_reports(a: QAReport, b: QAReport, **kwargs) -> RunComparison:
    """Two reports of the same ground truth (two prediction files); see :func:`compare_records`.

    Parameters
    ----------
    a, b : QAReport
        The two reports, named by their files.
    **kwargs
        ``n_resamples``, ``seed`` of :func:`compare_records`.

    Returns
    -------
    RunComparison

    Raises
    ------
    ValueError
        When no id is scored in both.
    """
    return compare_records(a.records, b.records, a.file, b.file, **kwargs)


def compare_groups(report: QAReport, group_a: str, group_b: str, **kwargs) -> RunComparison:
    """Two systems of one report (its group field), records paired by id; see :func:`compare_records`.

    Parameters
    ----------
    report : QAReport
        A report with a group field.
    group_a, group_b : str
        Two values of that field.
    **kwargs
        ``n_resamples``, ``seed`` of :func:`compare_records`.

    Returns
    -------
    RunComparison

    Raises
    ------
    ValueError
        When no id is scored in both groups (also for a group value that does not occur).
    """
    a = [r for r in report.records if r.group == group_a]
    b = [r for r in report.records if r.group == group_b]
    return compare_records(a, b, group_a, group_b, **kwargs)


#: Agreement of the systems on one record (by exact match).
ALL_CORRECT, ALL_WRONG, DISAGREE, INCOMPLETE = "all_correct", "all_wrong", "disagree", "incomplete"
AGREEMENTS = (DISAGREE, ALL_WRONG, ALL_CORRECT, INCOMPLETE)


@dataclass(frozen=True)
class SystemScore(ScoreSummary):
    """One system's :class:`~evaluators.qa.evaluate.ScoreSummary` (means over its scored records,
    missing predictions scored 0, with percentile bootstrap intervals), named.

    Attributes
    ----------
    system : str
    """

    system: str = ""


@dataclass(frozen=True)
class MatrixRow(DictMixin):
    """One record id across systems (a row of the records x systems matrix).

    Attributes
    ----------
    id : str
    question : str or None
        From the first system that has the record.
    gold_answers : tuple of str
        From the first system that has the record.
    predictions, exact_match, token_f1 : tuple, one entry per system
        ``None`` where the system has no scored record with this id.
    agreement : {"all_correct", "all_wrong", "disagree", "incomplete"}
        By exact match: every system right, every system wrong, some right and some wrong,
        or at least one system without this record.
    """

    id: str
    question: str | None
    gold_answers: tuple[str, ...]
    predictions: tuple[str | None, ...]
    exact_match: tuple[float | None, ...]
    token_f1: tuple[float | None, ...]
    agreement: str


@dataclass(frozen=True)
class SideBySide(DictMixin):
    """Several runs of the same questions, side by side.

    Attributes
    ----------
    systems : tuple of str
        Run names, in the order given.
    scores : tuple of SystemScore
        One per system, same order.
    rows : tuple of MatrixRow
        One per record id, in order of first appearance (first system first).
    counts : dict
        Rows per agreement value.
    common : CommonItems
        The record ids every system scored, and each system's own n
        (:func:`evaluators.results.common_items`).
    common_scores : tuple of SystemScore
        One per system: its EM / F1 (with intervals) over the common records only, the numbers to
        compare systems by; equal to ``scores`` when every system scored the same records, empty
        when no record is common to all.
    """

    systems: tuple[str, ...]
    scores: tuple[SystemScore, ...]
    rows: tuple[MatrixRow, ...] = field(repr=False)
    counts: dict[str, int]
    common: CommonItems = field(default_factory=lambda: CommonItems(0, {}, (), "records"))
    common_scores: tuple[SystemScore, ...] = ()


def runs_of(reports: Sequence[QAReport]) -> dict[str, list[QARecordResult]]:
    """Named runs from reports: a report with a group field gives one run per group, else one run.

    Run names are group values (one report) or file names; when two reports give the same
    name, the file name is put in front (``file · group``).  Records without a group value
    in a grouped report form the run ``(no <field>)``.

    Parameters
    ----------
    reports : sequence of QAReport
        The usable reports, the main one first.

    Returns
    -------
    dict
        Run name -> its records, in file order.
    """
    parts: list[tuple[str, str, list[QARecordResult]]] = []
    for report in reports:
        if report.group_field and report.by_group:
            runs: dict[str, list[QARecordResult]] = {}
            for r in report.records:
                runs.setdefault(r.group if r.group is not None else f"(no {report.group_field})", []).append(r)
            parts += [(report.file, name, rows) for name, rows in runs.items()]
        else:
            parts.append((report.file, report.file, list(report.records)))
    names = [name for _, name, _ in parts]
    out: dict[str, list[QARecordResult]] = {}
    for file, name, rows in parts:
        key = name if names.count(name) == 1 or file == name else f"{file} · {name}"
        while key in out:
            key += "'"
        out[key] = rows
    return out


def side_by_side(runs: Mapping[str, Iterable[QARecordResult]], *, n_resamples: int = 10_000,
                 confidence_level: float = 0.95, seed: int = 0) -> SideBySide:
    """Records x systems matrix and per-system scores of several runs of the same questions.

    Parameters
    ----------
    runs : mapping of str to iterable of QARecordResult
        Run name -> its per-record results (see :func:`runs_of`).  Records are matched by id;
        only scored records (and missing predictions, scored 0) count; a duplicate id in one
        run keeps its first record.
    n_resamples, confidence_level, seed
        Percentile bootstrap of each system's mean EM and F1 over its records
        (:func:`evaluators.metrics.statistics.bootstrap_ci`); ``n_resamples=0`` for none.

    Returns
    -------
    SideBySide
        With each system's scores over its own records (``scores``), and over the records every
        system scored (``common_scores``, ``common``): compare systems by the latter.

    Raises
    ------
    ValueError
        When ``runs`` is empty.
    """
    if not runs:
        raise ValueError("no run to compare")
    systems = tuple(runs)
    scored = [_scored(runs[s]) for s in systems]

    def summary(name: str, rows) -> SystemScore:
        em = [r.exact_match for r in rows]
        f1 = [r.token_f1 for r in rows]
        n = len(em)
        score = SystemScore(n, sum(em) / n if n else None, sum(f1) / n if n else None, system=name)
        return with_intervals(score, em, f1, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)

    scores = [summary(name, rows.values()) for name, rows in zip(systems, scored)]
    common = common_items(dict(zip(systems, scored)), unit="records")
    if common.same:
        common_scores = tuple(scores)
    else:
        common_scores = tuple(summary(name, [rows[i] for i in common.ids])
                              for name, rows in zip(systems, scored)) if common.n_common else ()
    ids = list(dict.fromkeys(i for rows in scored for i in rows))
    matrix = []
    counts = dict.fromkeys(AGREEMENTS, 0)
    for i in ids:
        got = [rows.get(i) for rows in scored]
        first = next(r for r in got if r is not None)
        ems = tuple(None if r is None else r.exact_match for r in got)
        if any(e is None for e in ems):
            agreement = INCOMPLETE
        elif all(e == 1 for e in ems):
            agreement = ALL_CORRECT
        elif all(e == 0 for e in ems):
            agreement = ALL_WRONG
        else:
            agreement = DISAGREE
        counts[agreement] += 1
        matrix.append(MatrixRow(i, first.question, tuple(first.gold_answers),
                                tuple(None if r is None else r.prediction for r in got), ems,
                                tuple(None if r is None else r.token_f1 for r in got), agreement))
    return SideBySide(systems, tuple(scores), tuple(matrix), counts, common, common_scores)
