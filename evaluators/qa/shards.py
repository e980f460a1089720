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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.io import InputIssue, RecordSet
from evaluators.qa.evaluate import (
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


def score_shard(open_source: Callable[[], QASource], config: QAConfig, shard: int, n_shards: int,
                seed: int = 0) -> QAShard:
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

    Returns
    -------
    QAShard

    Raises
    ------
    InputError
        An input that cannot be decoded.
    """
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
    n_sample = len(head)
    head.clear()
    shards = assign(keys, n_shards, seed)
    second = source if whole else open_source()
    mine_keys: list[tuple[str | None, str]] = []
    results: list[QARecordResult] = []
    for k, (data, line, index) in enumerate(_records(second, None)):
        if shards[k] == shard:
            results.append(scorer.record(data, index, line))
            mine_keys.append(keys[k])
    decision = {"task": task, "task_reason": reason, "sampled": sampled, "n_sample": n_sample,
                "group_field": group_field}
    return QAShard(source.file, decision, len(keys), assignment_digest(shards), tuple(issues), mine_keys, results)


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


__all__ = ["COLUMNS", "QAShard", "merged_report", "result_row", "score_shard", "shard_manifest_parts"]
