"""QA / fact-check runs in shards: one shard's records scored (:func:`score_shard`) and the report of the pooled
shards (:func:`merged_report`), the report of the single-process run (see :mod:`evaluators.shards`).

Every shard reads the whole input once to decide, as the single-process run does, the task and the group field
(on the same detection sample) and to know every record's key (group, id) for the assignment; then it reads the
input again and scores its own records with the per-record function (:meth:`evaluators.qa.evaluate.Scorer.values`).
The merge books the pooled records in input order and builds the report with
:func:`evaluators.qa.evaluate.report_of_results` (the single-process run's :func:`~evaluators.qa.evaluate._finish`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from evaluators.io import InputIssue, RecordSet
from evaluators.parallel import map_ordered
from evaluators.qa.evaluate import (
    CHUNK_RECORDS,
    DETECTION_SAMPLE,
    QAConfig,
    QARecordResult,
    QAReport,
    Scorer,
    _decide,
    report_of_results,
    signature,
    text_provenance,
)
from evaluators.qa.records import QASource
from evaluators.shards import assign, assignment_digest

#: The per-item columns of a QA shard file: the fields of QARecordResult, in order.
COLUMNS = tuple(f.name for f in dataclasses.fields(QARecordResult))


@dataclass(frozen=True)
class QAShard:
    """One shard of a QA run, scored.

    Attributes
    ----------
    file : str
        The input's name.
    decision : dict
        ``task``, ``task_reason``, ``sampled``, ``n_sample``, ``group_field``: decided on the whole input.
    n_records : int
        Records of the whole input.
    assignment : str
        :func:`evaluators.shards.assignment_digest` of the whole input's assignment.
    issues : tuple of InputIssue
        The whole input's reading problems, in input order.
    keys : list of (group, id)
        This shard's records' keys, in input order.
    results : list of QARecordResult
        This shard's records, scored, in input order.
    """

    file: str
    decision: dict[str, Any]
    n_records: int
    assignment: str
    issues: tuple[InputIssue, ...]
    keys: list[tuple[str | None, str]] = field(repr=False)
    results: list[QARecordResult] = field(repr=False)


def _records(source: QASource, issues: list[InputIssue] | None) -> Iterator[tuple[Any, int | None, int]]:
    """``(data, line, index)`` of every record of ``source``; its reading problems appended to ``issues``."""
    if isinstance(source.records, RecordSet):
        if issues is not None:
            issues.extend(source.records.issues)
        for r in source.records.records:
            yield r.data, r.line, r.index
        return
    for item in source.records:
        if isinstance(item, InputIssue):
            if issues is not None:
                issues.append(item)
        elif type(item) is tuple:
            yield item[0], item[1], item[2]
        else:
            yield item.data, item.line, item.index


@dataclass
class _Plan:
    """An input read once to decide, as one process does, its task and group field and every record's key."""

    source: QASource
    whole: bool
    decision: dict[str, Any]
    scorer: Scorer
    keys: list[tuple[str | None, str]]
    issues: list[InputIssue]


def plan_source(open_source: Callable[[], QASource], config: QAConfig) -> _Plan:
    """Read the input once: the task and group field decided on the detection sample, every record's key
    (group, id) in input order, the reading problems."""
    source = open_source()
    whole = isinstance(source.records, RecordSet)
    sample_size = max(1, len(source.records.records)) if whole else DETECTION_SAMPLE
    issues: list[InputIssue] = []
    head: list[tuple] = []
    rest = _records(source, issues)
    for item in rest:
        head.append(item)
        if len(head) >= sample_size:
            break
    task, reason, sampled, group_field = _decide([d for d, _, _ in head], config)
    scorer = Scorer(task, config, group_field)
    keys = [scorer.key(d, i, ln) for d, ln, i in head]
    keys.extend(scorer.key(d, i, ln) for d, ln, i in rest)
    decision = {"task": task, "task_reason": reason, "sampled": sampled, "n_sample": len(head),
                "group_field": group_field}
    return _Plan(source, whole, decision, scorer, keys, issues)


def _score_records(scorer: Scorer, items: Iterable[tuple[Any, int | None, int]]) -> list[QARecordResult]:
    """The per-record function over ``(data, line, index)`` items (all of a shard's in one process, streamed as the
    input is read, or a worker's chunk)."""
    return [scorer.record(data, index, line) for data, line, index in items]


def score_planned(plan: _Plan, open_source: Callable[[], QASource], mine: Sequence[bool], workers: int = 1
                  ) -> tuple[list[tuple[str | None, str]], list[QARecordResult]]:
    """The keys and results of the records ``mine`` selects (one flag per record, in input order), scored with the
    per-record function (``workers > 1``: chunks of :data:`~evaluators.qa.evaluate.CHUNK_RECORDS` records in worker
    processes, or on the open Dask scheduler; the results are the same); the input is read again when it is
    streamed."""
    second = plan.source if plan.whole else open_source()
    mine_keys: list[tuple[str | None, str]] = []

    def selected() -> Iterator[tuple[Any, int | None, int]]:
        for k, item in enumerate(_records(second, None)):
            if mine[k]:
                mine_keys.append(plan.keys[k])
                yield item

    if workers <= 1:  # streamed: a record's data is let go once it is scored
        return mine_keys, _score_records(plan.scorer, selected())
    results = list(map_ordered(partial(_score_records, plan.scorer), selected(), workers, chunk_size=CHUNK_RECORDS))
    return mine_keys, results


def score_shard(open_source: Callable[[], QASource], config: QAConfig, shard: int, n_shards: int,
                seed: int = 0, *, workers: int = 1) -> QAShard:
    """Score shard ``shard`` of ``n_shards`` of a QA input.

    Parameters
    ----------
    open_source : callable
        ``open_source() -> QASource``: the input opened afresh (:func:`evaluators.qa.records.open_qa_source`);
        called twice for a streamed input.
    config : QAConfig
        The run's settings.
    shard, n_shards : int
        1-based shard of ``n_shards``.
    seed : int
        Seed of the assignment (:func:`evaluators.shards.assign`).
    workers : int
        Processes scoring the shard's records (:func:`score_planned`).

    Returns
    -------
    QAShard

    Raises
    ------
    InputError
        An input that cannot be decoded.
    """
    plan = plan_source(open_source, config)
    shards = assign(plan.keys, n_shards, seed)
    mine_keys, results = score_planned(plan, open_source, [s == shard for s in shards], workers)
    return QAShard(plan.source.file, plan.decision, len(plan.keys), assignment_digest(shards), tuple(plan.issues),
                   mine_keys, results)


def shard_manifest_parts(result: QAShard, config: QAConfig) -> dict[str, Any]:
    """The QA parts of a shard's manifest: signature, tokenizer provenance, decision, item count and assignment."""
    return {"signature": signature(result.decision["task"], config.script), "provenance": text_provenance(config),
            "decision": result.decision, "n_items": result.n_records, "assignment": result.assignment}


def result_row(r: QARecordResult) -> list:
    """A record's values in :data:`COLUMNS` order (JSON-ready: ``gold_answers`` a list)."""
    return [list(v) if isinstance(v, tuple) else v for v in (getattr(r, c) for c in COLUMNS)]


def _result(row: Sequence, index: int = 0, line: int | None = None) -> QARecordResult:
    """A record back from its row (values in :data:`COLUMNS` order; ``gold_answers`` a list)."""
    return QARecordResult(*(tuple(v) if k == _GOLD else v for k, v in enumerate(row)))


_GOLD = COLUMNS.index("gold_answers")


def _pooled(shards: Sequence[Sequence[bytes]]) -> Iterator[tuple[list, bytes]]:
    """Every shard's ``(values, text)`` in input order (a merge of the shards' ordered rows by ``index``)."""
    import heapq
    import json

    def rows(k: int, texts: Sequence[bytes]) -> Iterator[tuple[int, int, list, bytes]]:
        last = -1
        for raw in texts:
            values = json.loads(raw)
            if values[0] <= last:
                raise ValueError(f"the rows of shard file {k + 1} are not in input order")
            last = values[0]
            yield values[0], k, values, raw

    previous = None
    for index, _, values, raw in heapq.merge(*(rows(k, t) for k, t in enumerate(shards))):
        if index == previous:
            raise ValueError(f"record {index + 1} stands in two shards")
        previous = index
        yield values, raw


def merged_report(file: str, config: QAConfig, decision: dict[str, Any], issues: Sequence[InputIssue],
                  columns: Sequence[str], shards: Sequence[Sequence[bytes]]) -> QAReport:
    """The report of the pooled rows of every shard, computed once (:func:`report_of_results`).

    Parameters
    ----------
    file : str
        The input's name.
    config : QAConfig
        The run's settings.
    decision : dict
        As :attr:`QAShard.decision`.
    issues : sequence of InputIssue
        The input's reading problems.
    columns : sequence of str
        The rows' columns (:data:`COLUMNS`).
    shards : sequence of sequence of bytes
        Each shard's rows (JSON arrays of a record's values, UTF-8), each shard's in input order; the report
        keeps the texts and derives a record from its text when it is read (written, shown).

    Raises
    ------
    ValueError
        Other columns than :data:`COLUMNS`, two rows of one record, or a shard's rows out of order.
    """
    if tuple(columns) != COLUMNS:
        raise ValueError(f"the shard's columns are not those of a QA record: {', '.join(columns)}")
    return report_of_results(_pooled(shards), config, file=file, task=decision["task"],
                             reason=decision["task_reason"], sampled=decision["sampled"],
                             n_sample=decision["n_sample"], group_field=decision["group_field"], issues=issues,
                             rescore=_result)


def unusable_extra(source: str | Path, label: str, predictions_file: str | None) -> dict[str, Any]:
    """What the merge needs to refuse the pooled report as the single process refuses the input
    (:func:`evaluators.qa.run.unusable_failure`): the input's label, its separate predictions file and where the
    file goes when it is another task's (decided here, on the whole file's head).  A shard file's
    ``extra.unusable`` (``compare``: one per input)."""
    from evaluators.io.typed_json import encode
    from evaluators.qa.run import misplaced_input

    return {"label": label, "predictions_file": predictions_file,
            "misplaced": encode(misplaced_input(source, label))}


def merged_refusal(report: QAReport, config: QAConfig, carried: dict[str, Any] | None) -> str | None:
    """The single process's refusal of the pooled ``report`` (the CLI's line, :func:`evaluators.qa.run.
    failure_message`), ``None`` when it is shown; ``carried`` is :func:`unusable_extra` (``None`` in a shard file
    written without it: the pooled report's name, no predictions file)."""
    from evaluators.io.typed_json import decode
    from evaluators.qa.run import failure_message, unusable_failure

    carried = carried or {"label": report.file, "predictions_file": None, "misplaced": None}
    failure = unusable_failure(report, config, carried["label"], carried["predictions_file"],
                               lambda: decode(carried["misplaced"]))
    return None if failure is None else failure_message(failure)


# ------------------------------------------------------------------------------------------ compare

#: The per-item columns of a ``compare`` shard file: the record's position (input number, record index), its run
#: key (``"<input number>"``, or ``"<input number>/<group>"`` in a grouped input), its id and its values
#: (:data:`COLUMNS`).
COMPARE_COLUMNS = ("index", "group", "id", "values")


def run_key(k: int, key: tuple[str | None, str]) -> tuple[str, str]:
    """A record's shard key in a comparison of several inputs: ``(input number[/group], id)`` (1-based), so the
    same id in two inputs (two systems' answers to one question) are two items, dealt within their own run."""
    group, rid = key
    return (f"{k + 1}" if group is None else f"{k + 1}/{group}", rid)


@dataclass(frozen=True)
class CompareShard:
    """One shard of a ``compare`` run (several QA inputs), scored.

    Attributes
    ----------
    files : list of str
        Each input's name.
    decisions : list of dict
        Each input's decision (as :attr:`QAShard.decision`), on the whole input.
    issues : list of tuple of InputIssue
        Each input's reading problems.
    n_items : int
        Records of every input.
    assignment : str
        Digest of the assignment of every input's records.
    keys : list of (run key, id)
        This shard's records' keys (:func:`run_key`), input by input, in input order.
    rows : list of list
        Their rows in :data:`COMPARE_COLUMNS` order.
    """

    files: list[str]
    decisions: list[dict[str, Any]]
    issues: list[tuple[InputIssue, ...]]
    n_items: int
    assignment: str
    keys: list[tuple[str, str]] = field(repr=False)
    rows: list[list] = field(repr=False)


def score_compare_shard(openers: Sequence[Callable[[], QASource]], config: QAConfig, shard: int, n_shards: int,
                        seed: int = 0, *, workers: int = 1) -> CompareShard:
    """Score shard ``shard`` of ``n_shards`` of a comparison of QA inputs (each scored as ``run_qa`` scores it).

    Every input is read whole to decide its task and group field and know its records' keys; the keys of every
    input are dealt together (:func:`run_key`: balanced within each input's runs); then each input's own records
    are scored (``workers`` processes, :func:`score_planned`).

    Raises
    ------
    InputError
        An input that cannot be decoded.
    """
    plans = [plan_source(opener, config) for opener in openers]
    keys = [run_key(k, key) for k, plan in enumerate(plans) for key in plan.keys]
    shards = assign(keys, n_shards, seed)
    mine_keys: list[tuple[str, str]] = []
    rows: list[list] = []
    at = 0
    for k, (plan, opener) in enumerate(zip(plans, openers)):
        flags = [s == shard for s in shards[at:at + len(plan.keys)]]
        at += len(plan.keys)
        own_keys, results = score_planned(plan, opener, flags, workers)
        for own, r in zip(own_keys, results):
            key = run_key(k, own)
            mine_keys.append(key)
            rows.append([[k, r.index], key[0], key[1], result_row(r)])
    return CompareShard([p.source.file for p in plans], [p.decision for p in plans],
                        [tuple(p.issues) for p in plans], len(keys), assignment_digest(shards), mine_keys, rows)


def merged_compare_reports(files: Sequence[str], config: QAConfig, decisions: Sequence[dict[str, Any]],
                           issues: Sequence[Sequence[InputIssue]], columns: Sequence[str],
                           rows: Sequence[Sequence]) -> list[QAReport]:
    """Each input's report of the pooled rows of every shard, computed once (:func:`report_of_results`), in input
    order.

    Raises
    ------
    ValueError
        Other columns, a record twice, or a row of no input.
    """
    if tuple(columns) != COMPARE_COLUMNS:
        raise ValueError(f"the shard's columns are not those of a comparison: {', '.join(columns)}")
    by_input: list[list[Sequence]] = [[] for _ in files]
    for row in rows:
        k = row[0][0]
        if not 0 <= k < len(files):
            raise ValueError(f"a row of input {k + 1}, but the run has {len(files)}")
        by_input[k].append(row)
    reports = []
    for k, part in enumerate(by_input):
        part.sort(key=lambda r: r[0][1])
        for a, b in zip(part, part[1:]):
            if a[0][1] == b[0][1]:
                raise ValueError(f"record {a[0][1] + 1} of input {k + 1} stands in two shards")
        d = decisions[k]
        reports.append(report_of_results((_result(r[3]) for r in part), config, file=files[k], task=d["task"],
                                         reason=d["task_reason"], sampled=d["sampled"], n_sample=d["n_sample"],
                                         group_field=d["group_field"], issues=issues[k]))
    return reports


__all__ = ["COLUMNS", "COMPARE_COLUMNS", "CompareShard", "QAShard", "merged_compare_reports", "merged_refusal",
           "merged_report", "plan_source", "result_row", "run_key", "score_compare_shard", "score_planned", "score_shard",
           "shard_manifest_parts", "unusable_extra"]
