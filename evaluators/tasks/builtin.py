"""The built-in tasks' reports as :class:`~evaluators.run_result.RunResult`: one shape for the run registry,
the generic writers and every cross-task feature.

Each function reads a task's own report (what its run function returns, unchanged) and lays its per-unit
values out as an :class:`~evaluators.run_result.ItemTable`: the unit ids, the system, the metrics
(registry names), the slices and the fields a reviewer reads.  A unit id that repeats within one system
(two records of one id in a file) gets ``#2``, ``#3`` ... after its second and later occurrences, so a row is
still addressed by ``(system, item_id)``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.results import to_jsonable
from evaluators.run_result import ItemTable, RunResult

#: The QA metrics of a run result, in column order.
QA_METRICS = ("exact_match", "token_f1")


def _unique(system: str, item_id: str, seen: dict[tuple[str, str], int]) -> str:
    n = seen.get((system, item_id), 0) + 1
    seen[(system, item_id)] = n
    return item_id if n == 1 else f"{item_id}#{n}"


class _Columns:
    """Rows appended one at a time, laid out as an :class:`ItemTable`."""

    def __init__(self, metrics: Iterable[str], slices: Iterable[str], fields: Iterable[str]) -> None:
        self.ids: list[str] = []
        self.systems: list[str] = []
        self.values: dict[str, list] = {m: [] for m in metrics}
        self.slices: dict[str, list] = {s: [] for s in slices}
        self.fields: dict[str, list] = {f: [] for f in fields}
        self._seen: dict[tuple[str, str], int] = {}

    def add(self, system: str, item_id: str, values: dict[str, Any], slices: dict[str, Any],
            fields: dict[str, Any]) -> None:
        self.ids.append(_unique(system, str(item_id), self._seen))
        self.systems.append(system)
        for group, row in ((self.values, values), (self.slices, slices), (self.fields, fields)):
            for name, column in group.items():
                column.append(row.get(name))

    def table(self) -> ItemTable:
        return ItemTable(tuple(self.ids), tuple(self.systems), self.values, self.slices, self.fields)


def qa_run_result(run: Any) -> RunResult:
    """A :class:`~evaluators.qa.run.QARun` as a run result: one row per scored record of each system.

    Parameters
    ----------
    run : QARun
        From :func:`evaluators.qa.run.run_qa` (after GT patches when the caller applied them).

    Returns
    -------
    RunResult
        ``task="qa"``, unit ``record``; metrics :data:`QA_METRICS` (``None`` for a record whose GT is
        missing or unparsed: its status says why); slice ``lang``; fields ``question``, ``ground_truth``
        (the answers), ``prediction``, ``status``; the signature and config of the first report; the
        issues of every input (reading problems and unusable inputs).
    """
    cols = _Columns(QA_METRICS, ("lang",), ("question", "ground_truth", "prediction", "status"))
    for system, records in run.runs().items():
        for r in records:
            cols.add(system, r.id, {"exact_match": r.exact_match, "token_f1": r.token_f1},
                     {"lang": r.lang},
                     {"question": r.question, "ground_truth": tuple(r.gold_answers), "prediction": r.prediction,
                      "status": r.status})
    return RunResult("qa", cols.table(), unit="record", issues=_qa_issues(run), config=to_jsonable(run.config),
                     signature=run.signature, native=run)


def _qa_issues(run: Any) -> tuple[InputIssue, ...]:
    """The issues of every input of a QA run (reading problems and unusable inputs)."""
    issues: list[InputIssue] = []
    for x in run.inputs:
        if x.report is not None:
            issues += list(x.report.issues)
        if x.failure is not None:
            issues.append(x.failure)
    return tuple(issues)


#: Threads :func:`qa_run_columns` encodes columns and systems on (the results do not depend on it).
LOG_THREADS = max(1, min(4, os.cpu_count() or 1))


def qa_run_columns(run: Any, captured: Any) -> dict[str, tuple[RunResult, Any, str]] | None:
    """:func:`qa_run_result` of a one-input QA run, split by system (:func:`evaluators.runs.split_systems`) and
    encoded for the registry from columns: the metric values, statuses, languages and systems from the record
    store's arrays, the texts from ``captured`` (:class:`evaluators.qa.capture.RowCapture` of the scoring pass),
    with no Python object per value.

    Parameters
    ----------
    run : QARun
        One input, scored with ``captured``'s sink (no GT patch applied since).
    captured : pyarrow.Table
        :meth:`evaluators.qa.capture.RowCapture.table`, one row per record of the run's report.

    Returns
    -------
    dict of str to (RunResult, EncodedTable, str), or None
        System -> its run result (an empty ``items``: the table is the :class:`~evaluators.runs.columns.EncodedTable`,
        equal byte for byte to :func:`qa_run_result`'s split by system) and the GT digest of its records
        (:func:`evaluators.runs.store.ground_truth_digest`); ``None`` when the run needs :func:`qa_run_result` (several
        inputs, records not in a store, an id twice within a system, values that are not text).
    """
    from evaluators.runs.columns import bulk_memory

    with bulk_memory():
        return _qa_run_columns(run, captured)


def _qa_run_columns(run: Any, captured: Any) -> dict[str, tuple[RunResult, Any, str]] | None:
    """:func:`qa_run_columns` in Arrow's bulk memory pool."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import pyarrow as pa

    from evaluators.qa.store import RecordStore
    from evaluators.runs.columns import Coded, coded_table, encode_arrays, json_texts
    from evaluators.runs.rescore import QA_TASK_KEY

    report = run.report
    if report is None or run.others or len(run.inputs) != 1 or not isinstance(report.records, RecordStore):
        return None
    store = report.records
    if captured.num_rows != len(store):
        return None
    em, f1 = store.array("exact_match")[0], store.array("token_f1")[0]
    lang_codes, lang_table = store.array("lang")
    status_codes, status_table = store.array("status")
    if report.group_field and report.by_group:  # run.runs(): one run per group value, in order of appearance
        group_codes, group_table = store.array("group")
        names = [g if g is not None else f"(no {report.group_field})" for g in group_table]
        seen, first = np.unique(group_codes, return_index=True)
        order = list(dict.fromkeys(names[int(c)] for c in seen[np.argsort(first)]))
        of_code = np.array([order.index(x) if x in order else -1 for x in names], dtype=np.int64)
        part = of_code[group_codes]
    else:
        order, part = [report.file], np.zeros(len(store), dtype=np.int64)
    # each column's JSON texts written once for every record (escaping only the texts that need it), then taken by
    # system; the columns and the systems on threads (Arrow, Parquet, zstd and SHA-256 work without the GIL)
    def array(name: str):
        values = captured.column(name)
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)

    def column(name: str):
        texts = json_texts(array(name))
        return None if texts is None else Coded(np.arange(len(texts)), texts)

    # the raw prediction is, as a rule, the prediction itself (no answer extracted from it): its texts once
    raw_is_prediction = array("prediction_raw").equals(array("prediction"))
    with ThreadPoolExecutor(min(LOG_THREADS, len(order) + 4)) as pool:
        names = ("question", "gold_answers", "prediction") + (() if raw_is_prediction else ("prediction_raw",))
        texts = dict(zip(("question", "ground_truth", "prediction", "prediction_raw"), pool.map(column, names)))
        if raw_is_prediction:
            texts["prediction_raw"] = texts["prediction"]
        fields = {"question": texts["question"], "ground_truth": texts["ground_truth"],
                  "prediction": texts["prediction"], "status": coded_table(status_codes, status_table, as_json=True),
                  "prediction_raw": texts["prediction_raw"]}
        if any(f is None for f in fields.values()):
            return None
        item_ids = captured.column("id").combine_chunks()
        lang = coded_table(lang_codes, lang_table)

        def encode(k: int):
            rows = np.flatnonzero(part == k)
            taken = {id(f): f.take(rows) for f in fields.values()}  # the raw prediction's texts, when shared: once
            return encode_arrays(item_ids.take(pa.array(rows)), order[k], {"lang": lang.take(rows)},
                                 {"exact_match": em[rows], "token_f1": f1[rows]},
                                 {name: taken[id(f)] for name, f in fields.items()}, unit="record",
                                 ground_truth="ground_truth")

        encoded = list(pool.map(encode, range(len(order))))
    if any(e is None for e in encoded):
        return None
    config = {**to_jsonable(run.config), QA_TASK_KEY: report.task}
    base = RunResult("qa", ItemTable((), ()), unit="record", issues=_qa_issues(run), config=config,
                     signature=run.signature)
    return {system: (base, *e) for system, e in zip(order, encoded)}


def _system_name(file: str | None, fallback: str) -> str:
    from pathlib import PurePath

    return PurePath(file).stem if file else fallback


def memory_run_result(report: Any) -> RunResult:
    """A :class:`~evaluators.memory.run.MemoryReport` as a run result: one row per question.

    Parameters
    ----------
    report : MemoryReport
        From :func:`evaluators.memory.run.run_memory` (after GT patches when it was given some).

    Returns
    -------
    RunResult
        ``task="memory"``, unit ``question``, system :meth:`ResolvedInputs.system`; metrics the report's
        ``names`` (registry names; ``None`` where a metric was not computed: no judge score, an
        unavailable backend); slice ``question_type``; fields ``question``, ``ground_truth``, ``prediction``,
        ``sample_id``; the report's metric signature and issues.
    """
    system = report.inputs.system
    names = tuple(report.names)
    cols = _Columns(names, ("question_type",), ("question", "ground_truth", "prediction", "sample_id"))
    scores = {row.question_id: row.scores for row in report.rows}
    for r in report.results:
        values = scores.get(r.question_id, {})
        cols.add(system, r.question_id, {m: values.get(m) for m in names}, {"question_type": r.question_type},
                 {"question": r.question, "ground_truth": (r.ground_truth,) if r.ground_truth else (),
                  "prediction": r.prediction, "sample_id": r.sample_id})
    return RunResult("memory", cols.table(), unit="question", issues=tuple(report.issues),
                     config={"metrics": list(names)}, signature=str(report.metrics.get("signature", "")),
                     corrections=report.corrections, native=report)


def dialogue_run_result(report: Any) -> RunResult:
    """A :class:`~evaluators.dialogue.scoring.DialogueReport` as a run result: one row per model and case.

    Returns
    -------
    RunResult
        ``task="dialogue"``, unit ``reply``, system the model; item id the case key
        (``scene#dialogue_index#occurrence``, :func:`evaluators.dialogue.scoring.case_key`); metrics the
        registry metrics computed and ``combined_score``; slice ``scene``; fields ``question`` (the context),
        ``ground_truth``, ``prediction``, ``status``; signatures of every metric, joined.
    """
    from evaluators.dialogue.scoring import case_key

    names = tuple(m["name"] for m in report.metric_info) + ("combined_score",)
    cols = _Columns(names, ("scene",), ("question", "ground_truth", "prediction", "status"))
    for r in report.results:
        cols.add(r.model, case_key(r), {**{m: r.metrics.get(m) for m in names[:-1]},
                                        "combined_score": r.combined_score},
                 {"scene": r.scene}, {"question": r.context,
                                      "ground_truth": (r.expected_response,) if r.expected_response.strip() else (),
                                      "prediction": r.prediction, "status": r.status})
    signature = "; ".join(f"{k}={v}" for k, v in report.signatures.items())
    return RunResult("dialogue", cols.table(), unit="reply", issues=tuple(report.issues),
                     config=to_jsonable(report.config), signature=signature, corrections=report.corrections,
                     native=report)


def testsets_run_result(report: Any) -> RunResult:
    """A :class:`~evaluators.testsets.run.TestSetsReport` as a run result.

    Single-turn: one row per item, metric ``keyword_score`` (the share of the item's keywords found),
    slices ``category`` and ``difficulty``.  Multi-turn: one row per turn (id ``dialogue#turn``), metric
    ``point_coverage`` (the share of the turn's expected points covered), slice ``requires_context``.
    The system is the answers file's stem.
    """
    scores = report.scores
    answers = getattr(report.answers, "file", None)
    system = _system_name(answers, "answers")
    if scores is None:
        return RunResult("testsets", ItemTable((), ()), unit="item", issues=tuple(report.issues), native=report)
    if report.kind == "single":
        cols = _Columns(("keyword_score",), ("category", "difficulty"), ("question", "ground_truth", "prediction",
                                                                          "status"))
        for it in scores.items:
            cols.add(system, it.id, {"keyword_score": it.score}, {"category": it.category,
                                                                   "difficulty": it.difficulty},
                     {"question": it.question, "ground_truth": (it.expected_answer,) if it.expected_answer else (),
                      "prediction": it.answer, "status": it.status})
        unit = "item"
    else:
        cols = _Columns(("point_coverage",), ("requires_context",), ("question", "prediction", "status"))
        for d in scores.dialogues:
            for t in d.turns:
                cols.add(system, f"{d.id}#{t.turn}", {"point_coverage": t.coverage if t.n_points else None},
                         {"requires_context": str(t.requires_context).lower()},
                         {"question": t.user, "prediction": t.answer, "status": t.status})
        unit = "turn"
    return RunResult("testsets", cols.table(), unit=unit, issues=tuple(report.issues),
                     config={"kind": report.kind}, corrections=report.corrections, native=report)


#: The narrative metrics of a run result: the overall score and the component scores.
NARRATIVE_METRICS = ("overall_score", "characters", "relationships", "sentiment", "action_layer", "text_span")


def narrative_run_result(report: Any, system: str = "predictions") -> RunResult:
    """A :class:`~evaluators.narrative.batch.NarrativeReport` as a run result: one row per document pair.

    Metrics :data:`NARRATIVE_METRICS` (``None`` for a pair that could not be scored: its problem is among
    the issues, and for a component without GT); fields ``gt_file`` and ``pred_file``; no slice.
    """
    cols = _Columns(NARRATIVE_METRICS, (), ("gt_file", "pred_file"))
    for d in report.documents:
        r = d.result
        values = {"overall_score": r.overall_score if r is not None else None}
        values.update({c: (r.component_scores.get(c) if r is not None else None) for c in NARRATIVE_METRICS[1:]})
        cols.add(system, d.story_id, values, {}, {"gt_file": d.gt_file, "pred_file": d.pred_file})
    return RunResult("narrative", cols.table(), unit="document", issues=tuple(report.issues),
                     signature=report.signature, corrections=report.corrections, native=report)


# --------------------------------------------------------------------------------------------------------------
# The built-in tasks as Task objects (evaluators.tasks.Task): read -> run -> RunResult, corrections through each
# task's own patch path (``run_with_patch``), registered by evaluators.tasks.tasks().


class QATask:
    """QA and fact-check records (one file: question, GT answers, prediction): :func:`evaluators.qa.run.run_qa`."""

    name, title, unit = "qa", "QA & fact-check", "record"

    def __init__(self) -> None:
        from evaluators.qa.evaluate import QAConfig
        from evaluators.tasks.protocol import InputRole

        self.roles = (InputRole("input", "FILE", "QA / fact-check records with GT answers and predictions "
                                                 "(JSONL, JSON or CSV)", is_gt=True),)
        self.config_type = QAConfig

    def read(self, files):
        from evaluators.qa.run import QAInput

        f = files["input"]
        return QAInput(f.data, name=f.name)

    def run(self, inputs, config) -> RunResult:
        from evaluators.qa.run import run_qa

        return qa_run_result(run_qa(inputs, config))

    def run_with_patch(self, inputs, config, gt_patch) -> RunResult:
        """The run after ``gt_patch`` (:func:`evaluators.qa.patch.patch_run`, as the QA page and CLI apply it)."""
        from evaluators.qa.patch import patch_run
        from evaluators.qa.run import run_qa

        patched, corrections = patch_run(run_qa(inputs, config), [inputs], gt_patch)
        return replace(qa_run_result(patched), corrections=corrections)


class MemoryTask:
    """Long-term-memory QA results (LoCoMo, LongMemEval): :func:`evaluators.memory.run.run_memory`."""

    name, title, unit = "memory", "Long-term memory QA", "question"

    def __init__(self) -> None:
        from evaluators.memory.run import MemoryConfig
        from evaluators.tasks.protocol import InputRole

        self.roles = (InputRole("results", "RESULTS", "question, GT answer and prediction per line (LoCoMo / "
                                                      "LongMemEval / mem0 results)", is_gt=True),
                      InputRole("labels", "LABELS", "stored judge labels", required=False))
        self.config_type = MemoryConfig

    def read(self, files):
        from evaluators.memory.inputs import resolve_inputs

        return resolve_inputs(**{role: (f.name, f.data) for role, f in files.items()})

    def run(self, inputs, config) -> RunResult:
        from evaluators.memory.run import run_memory

        return memory_run_result(run_memory(inputs, config))

    def run_with_patch(self, inputs, config, gt_patch) -> RunResult:
        return self.run(inputs, replace(config, gt_patch=gt_patch))


class DialogueTask:
    """Persona chatbot replies by scene and model: :func:`evaluators.dialogue.run.run_dialogue`."""

    name, title, unit = "dialogue", "Persona dialogue", "reply"

    def __init__(self) -> None:
        from evaluators.dialogue.scoring import DialogueConfig
        from evaluators.tasks.protocol import InputRole

        self.roles = (InputRole("cases", "CASES", "persona cases with expected replies (JSON)", is_gt=True),
                      InputRole("predictions", "PRED", "model replies (JSONL / JSON / CSV)"))
        self.config_type = DialogueConfig

    def read(self, files):
        from evaluators.dialogue.inputs import load_cases, load_predictions
        from evaluators.dialogue.run import DialogueInputs

        cases = files["cases"]  # further prediction files as roles predictions_2, predictions_3 ... (a logged run's)
        more = sorted((int(role.rpartition("_")[2]), f) for role, f in files.items() if role.startswith("predictions_"))
        preds = [files["predictions"], *(f for _, f in more)]
        return DialogueInputs.of(load_cases(cases.data, cases.name), [load_predictions(p.data, p.name) for p in preds])

    def run(self, inputs, config) -> RunResult:
        from evaluators.dialogue.run import run_dialogue

        return dialogue_run_result(run_dialogue(inputs, config))

    def run_with_patch(self, inputs, config, gt_patch) -> RunResult:
        return self.run(replace(inputs, gt_patch=gt_patch), config)


class TestSetsTask:
    """Keyword-scored test sets (single turn) and multi-turn expected points: :func:`evaluators.testsets.run.run_testsets`."""

    __test__ = False
    name, title, unit = "testsets", "Keyword test sets", "item"

    def __init__(self) -> None:
        from evaluators.tasks.protocol import InputRole
        from evaluators.testsets.run import TestSetsConfig

        self.roles = (InputRole("items", "ITEMS", "test set JSON", is_gt=True),
                      InputRole("answers", "ANSWERS", "answers keyed by item id (and turn)"))
        self.config_type = TestSetsConfig

    def read(self, files):
        from evaluators.testsets.run import TestSetsInputs

        return TestSetsInputs(files["items"].data, files["items"].name, files["answers"].data, files["answers"].name)

    def run(self, inputs, config) -> RunResult:
        from evaluators.testsets.run import run_testsets

        return testsets_run_result(run_testsets(inputs, config))

    def run_with_patch(self, inputs, config, gt_patch) -> RunResult:
        return self.run(inputs, replace(config, gt_patch=gt_patch))


class NarrativeTask:
    """Structured narrative annotation (JSON v3), one GT and one prediction document:
    :func:`evaluators.narrative.run.run_narrative`."""

    name, title, unit = "narrative", "Narrative annotation", "document"

    def __init__(self) -> None:
        from evaluators.narrative.base import NarrativeConfig
        from evaluators.tasks.protocol import InputRole

        self.roles = (InputRole("gt", "GT", "GT annotation (JSON v3)", is_gt=True),
                      InputRole("pred", "PRED", "predicted annotation (JSON v3)"))
        self.config_type = NarrativeConfig

    def read(self, files):
        from evaluators.narrative.run import NarrativeInputs

        return NarrativeInputs((files["gt"],), (files["pred"],), single_pair=True)

    def run(self, inputs, config) -> RunResult:
        from evaluators.narrative.run import run_narrative

        return narrative_run_result(run_narrative(inputs, config))

    def run_with_patch(self, inputs, config, gt_patch) -> RunResult:
        return self.run(replace(inputs, gt_patch=gt_patch), config)


#: The built-in tasks, in the order of the dashboard's pages.
BUILTIN = (NarrativeTask, QATask, TestSetsTask, DialogueTask, MemoryTask)
