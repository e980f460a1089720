"""Paired comparison of two QA / fact-check runs on the same questions.

Two runs are two reports of the same ground truth (two prediction files), or two groups of
one report (two systems in one file, e.g. HotpotQA comparison files).  Records are paired by
id; only ids scored in both runs are compared.  For each pair the per-record differences of
EM and F1 give:

- the mean difference with a paired bootstrap interval and p-value, and an approximate
  randomization p-value (:mod:`evaluators.metrics.statistics`);
- McNemar's exact test on EM (binary outcomes);
- the records that changed: won (B higher F1), lost (B lower) and tied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from evaluators.metrics.statistics import (
    McNemarResult, PairedComparison, approximate_randomization, mcnemar, paired_bootstrap,
)
from evaluators.qa.evaluate import STATUS_MISSING_PREDICTION, STATUS_SCORED, QARecordResult, QAReport
from evaluators.results import DictMixin


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

    Raises
    ------
    ValueError
        When no id is scored in both runs.
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
    """Two reports of the same ground truth (two prediction files); see :func:`compare_records`."""
    return compare_records(a.records, b.records, a.file, b.file, **kwargs)


def compare_groups(report: QAReport, group_a: str, group_b: str, **kwargs) -> RunComparison:
    """Two systems of one report (its group field), records paired by id; see :func:`compare_records`."""
    a = [r for r in report.records if r.group == group_a]
    b = [r for r in report.records if r.group == group_b]
    return compare_records(a, b, group_a, group_b, **kwargs)
