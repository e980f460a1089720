"""The QA / fact-check run function: inputs + one config -> one typed result, shared by page and CLI.

:func:`run_qa` reads each input once (:func:`evaluators.qa.records.open_qa_source`), scores it
(:func:`evaluators.qa.evaluate.evaluate_source`) and says, located, which inputs could not be
scored and why (undecodable, no records, no ground truth, no prediction).  The result,
:class:`QARun`, carries the main run's :class:`~evaluators.qa.evaluate.QAReport` (what the
``qa`` command writes and the page's downloads hold), the further runs, and the derived views
every output needs: the runs by system (:meth:`QARun.runs`), the side-by-side matrix
(:meth:`QARun.side_by_side`) and the paired comparison of two systems (:meth:`QARun.compare`).

The record viewer of the page is engine code too (:class:`RecordView`): which records pass
the filters, the rows shown (:func:`record_row`, the same rows the CSV writes), stepping from
one record to the next, and what an opened record shows (:meth:`RecordView.detail`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from evaluators.io import InputError, InputIssue
from evaluators.qa.compare import RunComparison, SideBySide, compare_records, runs_of, side_by_side
from evaluators.qa.evaluate import QAConfig, QARecordResult, QAReport, RowSink, evaluate_source, unusable_reason
from evaluators.qa.records import open_qa_source
from evaluators.results import DictMixin

#: Columns of a flat per-record row (the CSV, the page's records table), in order.
RECORD_COLUMNS = (
    "id", "group", "status", "lang", "tokenizer", "exact_match", "token_f1", "question", "gold_answers",
    "gold_field", "prediction", "prediction_raw", "prediction_field", "gold_verdict", "predicted_verdict",
    "verdict_rule", "line",
)


def record_row(r: QARecordResult) -> dict[str, Any]:
    """One record as a flat dict with the columns :data:`RECORD_COLUMNS` (gold answers joined with `` | ``).

    Parameters
    ----------
    r : QARecordResult
        A scored (or skipped) record.

    Returns
    -------
    dict of str to object
        One key per column of :data:`RECORD_COLUMNS`, in that order; ``exact_match`` and ``token_f1``
        in [0, 1] or ``None`` (record not scored).
    """
    row = {c: getattr(r, c) for c in RECORD_COLUMNS}
    row["gold_answers"] = " | ".join(r.gold_answers)
    return row


@dataclass(frozen=True)
class QAInput:
    """One input file of a run.

    Attributes
    ----------
    source : bytes, path or seekable binary file (an upload)
        Records (JSONL, JSON, CSV) or a SQuAD-style dataset.
    name : str, optional
        File name for messages and format sniffing (default: the path or the file's ``name``).
    predictions : bytes, optional
        A separate predictions file joined by id (SQuAD-style datasets).
    predictions_file : str, optional
        Its name; the run is then named after it.
    """

    source: bytes | str | Path | BinaryIO = field(compare=False)
    name: str | None = None
    predictions: bytes | None = field(default=None, repr=False, compare=False)
    predictions_file: str | None = None

    @property
    def label(self) -> str:
        """The name the input is reported under."""
        if self.name:
            return self.name
        if isinstance(self.source, (str, Path)):
            return str(self.source)
        return str(getattr(self.source, "name", "<input>"))


@dataclass(frozen=True)
class QAInputResult(DictMixin):
    """What became of one input.

    Attributes
    ----------
    file : str
        The input's name.
    report : QAReport or None
        Its report (also when it is not usable, so its located reading problems can be shown);
        ``None`` when the input could not be read at all.
    failure : InputIssue or None
        Why the input is not used: kind ``decode`` / ``json`` ... (unreadable) or ``unusable``
        (no records, no ground truth or no prediction); ``None`` when it is used.
    """

    file: str
    report: QAReport | None
    failure: InputIssue | None = None

    @property
    def usable(self) -> bool:
        """Whether the input's report is a result."""
        return self.failure is None


@dataclass(frozen=True)
class QARun(DictMixin):
    """Result of :func:`run_qa`.

    Attributes
    ----------
    config : QAConfig
        Settings used for every input.
    inputs : tuple of QAInputResult
        One per input, in order (the main run first): its report and, when it is not used,
        the located reason; the other inputs are scored all the same.
    """

    config: QAConfig
    inputs: tuple[QAInputResult, ...] = ()

    @property
    def report(self) -> QAReport | None:
        """The main (first) input's report, when it is usable."""
        return self.inputs[0].report if self.inputs and self.inputs[0].usable else None

    @property
    def others(self) -> tuple[QAReport, ...]:
        """The further inputs' reports that are usable, in input order."""
        return tuple(x.report for x in self.inputs[1:] if x.usable)

    @property
    def failures(self) -> tuple[InputIssue, ...]:
        """One located problem per input that is not used."""
        return tuple(x.failure for x in self.inputs if x.failure is not None)

    @property
    def reports(self) -> tuple[QAReport, ...]:
        """Every usable report, the main one first."""
        return ((self.report,) if self.report is not None else ()) + self.others

    @property
    def signature(self) -> str:
        """The signature of the scores (of the first scored report; empty when none)."""
        return self.reports[0].signature if self.reports else ""

    def runs(self) -> dict[str, list[QARecordResult]]:
        """Named runs: one per system of a grouped report, else one per report (see :func:`runs_of`).

        A single report without several groups is one run, and its records are not materialised.
        """
        if not self.others and (self.report is None or not self.report.by_group):
            return {self.report.file: self.report.records} if self.report is not None else {}
        return runs_of(self.reports)

    def side_by_side(self, runs: dict | None = None, *, n_resamples: int | None = None, seed: int = 0) -> SideBySide:
        """The records x systems matrix and per-system scores (intervals: ``config.ci_resamples`` by default).

        Parameters
        ----------
        runs : dict of str to list of QARecordResult, optional
            System -> its records; default :meth:`runs`.
        n_resamples : int, optional
            Bootstrap resamples of each system's interval (0: none); default ``config.ci_resamples``.
        seed : int
            Seed of the resampling.

        Returns
        -------
        SideBySide
            See :func:`evaluators.qa.compare.side_by_side`: systems compared on the record ids
            every one of them scored.
        """
        return side_by_side(runs if runs is not None else self.runs(),
                            n_resamples=self.config.ci_resamples if n_resamples is None else n_resamples, seed=seed)

    def compare(self, a: str, b: str, runs: dict | None = None, *, n_resamples: int | None = None,
                seed: int = 0) -> RunComparison:
        """System ``b`` against ``a``, records paired by id (paired bootstrap, randomization, McNemar).

        Parameters
        ----------
        a, b : str
            Names of two runs of :meth:`runs` (``b`` is compared against ``a``).
        runs : dict of str to list of QARecordResult, optional
            Default :meth:`runs`.
        n_resamples : int, optional
            Resamples of the paired bootstrap and the randomization test; default
            ``config.ci_resamples`` (0: no interval and no p-value).
        seed : int
            Seed of the resampling.

        Returns
        -------
        RunComparison
            See :func:`evaluators.qa.compare.compare_records`.

        Raises
        ------
        KeyError
            When ``a`` or ``b`` names no run.
        ValueError
            When ``a == b`` or no record id is scored in both.
        """
        runs = runs if runs is not None else self.runs()
        for name in (a, b):
            if name not in runs:
                raise KeyError(f"no system named {name!r}; the runs are: {', '.join(runs)}")
        if a == b:
            raise ValueError("the two systems compared must differ")
        resamples = self.config.ci_resamples if n_resamples is None else n_resamples
        return compare_records(runs[a], runs[b], a, b, n_resamples=max(0, resamples), seed=seed)


def _misplaced(item: QAInput) -> InputIssue | None:
    """One issue naming where an unusable input goes when it is another task's file
    (:func:`evaluators.io.shapes.misplaced`): a narrative annotation, long-memory results ..."""
    from evaluators.io.shapes import HEAD_BYTES, misplaced

    source = item.source
    try:
        if isinstance(source, (str, Path)):
            with open(source, "rb") as f:
                head = f.read(HEAD_BYTES)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            head = source[:HEAD_BYTES]
        else:
            at = source.tell()
            source.seek(0)  # an upload already read to its end
            head = source.read(HEAD_BYTES)
            source.seek(at)
    except (OSError, AttributeError, ValueError):
        return None
    return misplaced(item.label, head, "QA / fact-check records (the QA page's Records, evalboard qa FILE)")


def unusable_failure(report: QAReport, config: QAConfig, label: str, predictions_file: str | None,
                     misplaced: Callable[[], InputIssue | None]) -> InputIssue | None:
    """The single-process refusal of one scored input, decided on its whole report: ``None`` when it can be shown,
    else where it goes (``misplaced()``: another task's file) or why it cannot (kind ``unusable``,
    :func:`~evaluators.qa.evaluate.unusable_reason`: no records, no ground truth, no prediction for any record).

    :func:`run_qa` applies it to each input; ``evalboard merge`` to the report of the pooled shards, so a run
    scored in shards is refused exactly where the single process refuses it (one shard may hold no prediction
    while the whole input has them).

    Parameters
    ----------
    report : QAReport
        The whole input's report.
    config : QAConfig
        Its settings (the fields looked in).
    label : str
        The name the input is reported under (:attr:`QAInput.label`).
    predictions_file : str or None
        The separate predictions file, when one was given.
    misplaced : callable
        ``misplaced() -> InputIssue or None``, called only when the input is refused.
    """
    reason = unusable_reason(report, config, predictions_file)
    if not reason:
        return None
    return misplaced() or InputIssue(label, reason, kind="unusable")


def failure_message(failure: InputIssue) -> str:
    """The one line the CLI gives (after ``error:``) for an input that is not used: ``FILE: reason`` for an
    unusable input, the located issue otherwise (``qa``, ``compare`` and ``merge`` of their shards)."""
    return str(failure) if failure.kind != "unusable" else f"{failure.file}: {failure.message}"


def misplaced_input(source: str | Path, label: str) -> InputIssue | None:
    """:func:`_misplaced` of an input file by its path and label (a shard decides it on the whole file and the
    merge reports it, as the single process does)."""
    return _misplaced(QAInput(source, name=label))


def run_qa(inputs: QAInput | Iterable[QAInput], config: QAConfig | None = None, *, workers: int = 1,
           progress: Callable[[str, int, int], None] | None = None, rows: RowSink | None = None) -> QARun:
    """Read and score QA / fact-check inputs: the one function behind the QA page and the CLI commands.

    Parameters
    ----------
    inputs : QAInput or iterable of QAInput
        The main run first; further runs of the same questions to compare with it.
    config : QAConfig, optional
        Settings for every input.
    workers : int
        Worker processes scoring chunks of records (the result is the same for any count).
    progress : callable, optional
        ``progress(name, done, total)`` while an input is scored.
    rows : RowSink, optional
        Receives the main input's per-record rows as they are scored (streaming writers).

    Returns
    -------
    QARun
        Never raises for bad input: an input that cannot be scored is a located failure.

    Raises
    ------
    OSError
        Only when a file cannot be read from disk.
    """
    config = config or QAConfig()
    items = [inputs] if isinstance(inputs, QAInput) else list(inputs)
    results: list[QAInputResult] = []
    for k, item in enumerate(items):
        label = item.label
        tick = None if progress is None else (lambda done, total, _n=label: progress(_n, done, total))
        try:
            source = open_qa_source(item.source, item.name, predictions=item.predictions,
                                    predictions_file=item.predictions_file or "<predictions>",
                                    count_lines=progress is not None)
            report = evaluate_source(source, config, progress=tick, workers=workers, rows=rows if k == 0 else None)
        except InputError as exc:
            results.append(QAInputResult(label, None, _misplaced(item) or exc.issue))
            continue
        failure = unusable_failure(report, config, label, item.predictions_file, lambda item=item: _misplaced(item))
        results.append(QAInputResult(report.file, report, failure))
    return QARun(config, tuple(results))


@dataclass(frozen=True)
class RecordView:
    """The records of a report that pass the viewer's filters, as table rows, and how to move between them.

    Attributes
    ----------
    rows : list of dict
        The first ``limit`` matching records as :func:`record_row` rows, in file order.
    n_match : int
        How many records match (may exceed ``len(rows)``).
    n_total : int
        Records in the report.
    """

    rows: list[dict[str, Any]]
    n_match: int
    n_total: int

    @property
    def ids(self) -> list[str]:
        """Ids of the rows shown, in order."""
        return [str(r["id"]) for r in self.rows]

    def position(self, record_id: str | None) -> int | None:
        """Index of ``record_id`` among the rows shown (``None`` when not shown).

        Parameters
        ----------
        record_id : str or None
            A record id.

        Returns
        -------
        int or None
            0-based position in :attr:`rows`.
        """
        ids = self.ids
        return ids.index(record_id) if record_id in ids else None

    def step(self, record_id: str | None, delta: int) -> str | None:
        """The id ``delta`` rows away from ``record_id`` (from the first row when it is not shown), clamped.

        Parameters
        ----------
        record_id : str or None
            The record open now.
        delta : int
            Rows to move: -1 previous, +1 next; clamped to the first and last row.

        Returns
        -------
        str or None
            ``None`` when no row is shown.
        """
        ids = self.ids
        if not ids:
            return None
        at = ids.index(record_id) if record_id in ids else 0
        return ids[max(0, min(len(ids) - 1, at + delta))]

    def detail(self, record_id: str) -> dict[str, Any] | None:
        """What an opened record shows: its texts, scores and where its values came from.

        Keys: ``id``, ``status``, ``question`` (or None), ``gold`` and ``prediction`` (``"—"`` when
        empty), ``scores`` (``(EM, F1)`` or None when not scored), ``raw_prediction`` (only when it
        differs from the scored text), ``verdict`` (``(gold, predicted, rule)`` for fact-check) and
        ``where`` (tokenizer, gold field, prediction field, line; ``"—"`` when absent).

        Parameters
        ----------
        record_id : str
            Id of a row shown.

        Returns
        -------
        dict or None
            The keys above; ``None`` when ``record_id`` is not among the rows shown.
        """
        pos = self.position(record_id)
        if pos is None:
            return None
        row = self.rows[pos]
        raw = row["prediction_raw"]
        return {
            "id": record_id, "status": row["status"],
            "question": row["question"] if isinstance(row["question"], str) else None,
            "gold": row["gold_answers"] or "—", "prediction": row["prediction"] or "—",
            "scores": (row["exact_match"], row["token_f1"]) if row["exact_match"] is not None else None,
            "raw_prediction": raw if isinstance(raw, str) and raw != row["prediction"] else None,
            "verdict": ((row["gold_verdict"], row["predicted_verdict"], row["verdict_rule"] or "")
                        if isinstance(row["gold_verdict"], str) else None),
            "where": {k: ("—" if row[k] is None else row[k])
                      for k in ("tokenizer", "gold_field", "prediction_field", "line")},
        }


def record_view(report: QAReport, *, statuses: set[str] | None = None, langs: set[str | None] | None = None,
                predicted_verdicts: set[str] | None = None, errors_only: bool = False, needle: str = "",
                limit: int | None = None) -> RecordView:
    """The records passing the filters (see :meth:`evaluators.qa.store.RecordStore.select`), first ``limit`` as rows.

    ``errors_only`` keeps scored records with EM < 1; ``needle`` is searched case-insensitively in
    the id, question, each gold answer and the prediction.  Only the rows returned are re-derived.

    Parameters
    ----------
    report : QAReport
        The scored file.
    statuses : set of str, optional
        Record statuses kept (``scored``, ``missing_prediction`` ...); ``None``: all.
    langs : set of (str or None), optional
        Languages kept (``"en"``, ``"zh"``); ``None``: all.
    predicted_verdicts : set of str, optional
        Fact-check predicted verdicts kept; ``None``: all.
    errors_only : bool
        Keep only scored records with EM < 1.
    needle : str
        Text searched for (case-insensitive); ``""``: no search.
    limit : int, optional
        Rows returned at most; ``None``: all matches.

    Returns
    -------
    RecordView
        The first ``limit`` matching records as :func:`record_row` rows, with the match and total counts.
    """
    store = report.records
    if hasattr(store, "select"):
        indices, n = store.select(statuses=statuses, langs=langs, predicted_verdicts=predicted_verdicts,
                                  errors_only=errors_only, needle=needle, limit=limit)
        chosen = [store[i] for i in indices]
    else:  # a report built from a plain tuple of results
        low = needle.strip().casefold()
        hits = [r for r in store
                if (statuses is None or r.status in statuses)
                and (langs is None or r.lang is None or r.lang in langs)
                and (predicted_verdicts is None or r.predicted_verdict in predicted_verdicts)
                and (not errors_only or (r.exact_match is not None and r.exact_match < 1))
                and (not low or any(low in str(f).casefold()
                                    for f in (r.id, r.question, *r.gold_answers, r.prediction) if f is not None))]
        chosen, n = hits[:limit] if limit is not None else hits, len(hits)
    return RecordView([record_row(r) for r in chosen], n, len(store))
