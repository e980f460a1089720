"""One resolver of long-term-memory inputs, shared by the Long Memory page and the CLI.

The page's uploaders and the ``memory`` command's options give the same files by role:

=============  ==================================================================
role           what
=============  ==================================================================
results        EvalResult JSONL/JSON/CSV, or mem0's LoCoMo ``results.json``
questions      LoCoMo ``locomo10.json`` or a LongMemEval question file
predictions    predictions keyed by ``question_id`` (joined with the questions)
labels         stored judge labels (LongMemEval ``*.eval-results-<model>``, flat
               label records, mem0 results with ``llm_score``, a judge cache)
judge_cache    an EvalBoard judge cache (read only)
=============  ==================================================================

:func:`resolve_inputs` applies every rule that decides which records are scored and
which stored labels go with them, and says which rules it applied (``notes``, one
sentence each) and what was wrong (located :class:`~evaluators.io.InputIssue`).  The
rules:

1. A question file that is neither LoCoMo nor LongMemEval is reported and ignored.
2. A results file, when given, is what is scored; mem0 items take the ids of the LoCoMo
   question file when one is given (so stored labels and predictions share ids).
   Predictions given beside a results file are ignored (with a warning).
3. Without a results file, the questions are scored: with the predictions file joined by
   ``question_id`` when given; else with the hypotheses a labels file carries
   (LongMemEval's judge output), only for the questions it judged, as LongMemEval's
   ``print_qa_metrics.py`` does; else with empty predictions (every one a miss).
4. Stored labels come from the labels file; without one, from ``llm_score`` in the
   results (mem0).
5. :func:`pick_judge_scores`: the judge's judgements when there are any, else the stored
   labels.

Nothing here raises for bad content: an unusable file gives an issue and no records.  A results,
question or predictions file of which nothing could be used, and which looks like another input's
file (:func:`evaluators.io.shapes.misplaced`), gives one issue saying where it goes instead of one
per record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluators.io import InputError, InputIssue
from evaluators.io.gt_patch import file_sha256
from evaluators.io.readers import read_json_document
from evaluators.io.shapes import misplaced
from evaluators.memory.agreement import StoredLabels, load_judge_labels, stored_labels_from_results
from evaluators.memory.judge import JudgeCache
from evaluators.memory.loaders import (
    attach_predictions,
    detect_format,
    load_locomo,
    load_longmemeval,
    load_predictions,
    load_results_file,
)
from evaluators.memory.records import EvalResult, LoadReport
from evaluators.parallel import gc_paused
from evaluators.results import DictMixin

#: One input: ``(name shown in messages, content)``.
InputFile = tuple[str, bytes]

#: The ``source`` of stored labels read from the results' metadata.
LLM_SCORE_SOURCE = "llm_score in the results file"


@dataclass
class ResolvedInputs(DictMixin):
    """What the inputs resolve to: the records to score and what goes with them.

    Attributes
    ----------
    results : list of EvalResult
        The records to score, in file order.
    dataset : LoadReport or None
        The question file as read (``format`` ``locomo`` or ``longmemeval``).
    stored : StoredLabels or None
        Stored judge labels (from the labels file or the results' ``llm_score``).
    stored_source : str
        Where ``stored`` came from, for display (``""`` when there are none).
    judge_cache : JudgeCache or None
        The judge cache given as input (read only).
    notes : list of str
        The rules applied, one human-readable sentence each, in order.
    issues : list of InputIssue
        Located problems of every input.
    files : dict
        ``role -> name`` of every input given (the names used in every message and report).
    gt_role, gt_file, gt_digest : str or None
        The input the scored ground truth comes from (``"results"`` when a results file is given,
        else ``"questions"``), its file name and the SHA-256 of its bytes: what a GT patch is made
        for (:mod:`evaluators.memory.patch`).
    """

    results: list[EvalResult] = field(default_factory=list)
    dataset: LoadReport | None = None
    stored: StoredLabels | None = None
    stored_source: str = ""
    judge_cache: JudgeCache | None = None
    notes: list[str] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    gt_role: str | None = None
    gt_file: str | None = None
    gt_digest: str | None = None

    @property
    def system(self) -> str:
        """The name of the system scored, for side-by-side views and reports.

        The ``system`` (or ``model``) field when every record carries the same one, else the stem of the file
        the predictions come from: the results file, else the predictions file, else the labels file whose
        hypotheses are scored, else the question file (its predictions are empty).
        """
        return system_name(self.results, *(self.files.get(role) for role in ("results", "predictions")),
                           self.files.get("labels") if self.stored is not None and self.stored.hypotheses else None,
                           self.files.get("questions"))

    @property
    def locomo_dataset(self) -> LoadReport | None:
        """The question file when it is LoCoMo (mem0 results and labels take its ids)."""
        return self.dataset if self.dataset is not None and self.dataset.format == "locomo" else None

    @property
    def stored_labels(self) -> dict[str, float]:
        """``question_id -> stored label`` (empty when there are none)."""
        return dict(self.stored.labels) if self.stored is not None else {}

    def longmemeval_questions(self) -> list[EvalResult] | None:
        """The questions LongMemEval's accuracy table is computed over, or ``None`` when it does not apply.

        It applies when there are stored labels and either the question file is
        LongMemEval's or the labels are LongMemEval's judge output; the table counts the
        labelled questions of the question file (of the results without one).
        """
        if self.stored is None or not self.stored.labels:
            return None
        lme_questions = self.dataset is not None and self.dataset.format == "longmemeval"
        if not lme_questions and self.stored.format != "longmemeval":
            return None
        return list(self.dataset.results) if lme_questions else list(self.results)


def system_name(results: list[EvalResult] | tuple[EvalResult, ...], *files: str | None) -> str:
    """A system's name: the ``system`` / ``model`` field all ``results`` share, else the stem of the first of
    ``files`` given (``"runs/gpt4o_memory.jsonl"`` -> ``"gpt4o_memory"``), else ``"predictions"``.

    Parameters
    ----------
    results : list or tuple of EvalResult
        The system's answers (their metadata are read).
    *files : str or None
        File names, in order of preference (``None`` entries skipped).

    Returns
    -------
    str

    >>> system_name([], None, "runs/gpt4o_memory.jsonl")
    'gpt4o_memory'
    """
    for key in ("system", "model"):
        values = {str(r.metadata.get(key)) for r in results if r.metadata.get(key) not in (None, "")}
        if len(values) == 1 and all(r.metadata.get(key) not in (None, "") for r in results):
            return values.pop()
    for name in files:
        if name:
            base = name.replace("\\", "/").rsplit("/", 1)[-1]
            return base.rsplit(".", 1)[0] if "." in base.strip(".") else base
    return "predictions"


def _read_questions(file: InputFile, out: ResolvedInputs) -> LoadReport | None:
    name, data = file
    def wrong() -> InputIssue | None:  # another input's file: one line saying where it goes
        return misplaced(name, data, "a question file (Questions, --questions)", accepts=("memory_questions",))

    try:
        value, parsed = read_json_document(data, name)
    except InputError as exc:  # undecodable
        out.issues.append(wrong() or exc.issue)
        return None
    if parsed.errors:
        issue = wrong()
        out.issues.extend([issue] if issue is not None else parsed.issues)
        return None
    out.issues.extend(parsed.issues)
    kind = detect_format(value)
    if kind == "locomo":
        dataset = load_locomo(value, name)
    elif kind == "longmemeval":
        dataset = load_longmemeval(value, name)
    else:
        out.issues.append(wrong() or InputIssue(name, "not a LoCoMo or LongMemEval question file; ignored", path="$"))
        return None
    out.issues.extend(dataset.issues)
    return dataset


@gc_paused()  # tens of thousands of records: no collector passes over them while they are read
def resolve_inputs(*, results: InputFile | None = None, questions: InputFile | None = None,
                   predictions: InputFile | None = None, labels: InputFile | None = None,
                   judge_cache: InputFile | None = None) -> ResolvedInputs:
    """Resolve the inputs given by role into the records to score (see the module docstring).

    Parameters
    ----------
    results, questions, predictions, labels, judge_cache : (name, bytes), optional
        Each input's name (used in every message) and content.

    Returns
    -------
    ResolvedInputs
        ``results`` is empty when nothing usable was given; ``issues`` then says why
        (an empty ``issues`` means no results or questions file was given at all).
    """
    out = ResolvedInputs()
    out.files = {role: f[0] for role, f in (("results", results), ("questions", questions),
                                             ("predictions", predictions), ("labels", labels),
                                             ("judge_cache", judge_cache)) if f is not None}
    out.gt_role = "results" if results is not None else "questions" if questions is not None else None
    gt = results if results is not None else questions
    if gt is not None:  # what a GT patch of these inputs is made for
        out.gt_file, out.gt_digest = gt[0], file_sha256(gt[1])
    if questions is not None:
        out.dataset = _read_questions(questions, out)
    locomo = out.locomo_dataset
    if labels is not None:
        out.stored = load_judge_labels(labels[1], labels[0], dataset=locomo)
        out.issues.extend(out.stored.issues)
        out.stored_source = labels[0]
        out.notes.append(f"Stored labels: {len(out.stored.labels)} from {labels[0]} ({out.stored.format}).")
    if results is not None:
        report = load_results_file(results[1], results[0], dataset=locomo)
        out.results = list(report.results)
        wrong = None if out.results else misplaced(results[0], results[1], "a results file (Results, --results)",
                                                   accepts=("memory_results", "memory_questions"))
        out.issues.extend([wrong] if wrong is not None else report.issues)  # one line, not one per record
        out.notes.append(f"Results: {len(out.results)} question(s) from {results[0]} ({report.format})"
                         + (f", with the question ids of {questions[0]}" if locomo is not None
                            and report.format == "mem0_locomo" else "") + ".")
        if predictions is not None:
            out.issues.append(InputIssue(predictions[0], "ignored: a results file is given, and its predictions "
                                         "are the ones scored", severity="warning", kind="pairing"))
    elif out.dataset is not None:
        qname = questions[0]
        out.results = list(out.dataset.results)
        if predictions is not None:
            preds, pred_issues = load_predictions(predictions[1], predictions[0])
            wrong = None if preds else misplaced(
                predictions[0], predictions[1], "predictions (Predictions by question_id, --predictions)",
                accepts=("memory_predictions", "memory_judged_predictions", "memory_results"))
            out.issues.extend([wrong] if wrong is not None else pred_issues)
            out.results, join_issues = attach_predictions(out.results, preds, predictions[0])
            out.issues.extend(join_issues)
            out.notes.append(f"Predictions: {predictions[0]} joined with the {len(out.results)} question(s) of "
                             f"{qname} by question_id.")
        elif out.stored is not None and out.stored.hypotheses:
            # A judge output carries the judged answers: evaluate those questions, as print_qa_metrics.py does.
            hyps = out.stored.hypotheses
            out.results = [r.with_prediction(hyps[r.question_id]) for r in out.results if r.question_id in hyps]
            out.notes.append(f"Predictions: the {len(out.results)} hypotheses in {labels[0]}; the other "
                             f"{len(out.dataset.results) - len(out.results)} question(s) of {qname} are left out.")
            unknown = [q for q in hyps if q not in {r.question_id for r in out.dataset.results}]
            if unknown:
                out.issues.append(InputIssue(labels[0], f"{len(unknown)} hypothesis(es) for question ids not in "
                                             f"{qname} were ignored (e.g. {', '.join(unknown[:3])})",
                                             severity="warning", kind="pairing"))
        else:
            out.notes.append(f"No predictions file: every prediction of the {len(out.results)} question(s) of "
                             f"{qname} is empty (give one keyed by question_id).")
    elif predictions is not None:
        out.issues.append(InputIssue(predictions[0], "ignored: predictions need a question file to be joined with",
                                     severity="warning", kind="pairing"))
    if out.stored is None and any("llm_score" in r.metadata for r in out.results):
        out.stored = StoredLabels(labels=stored_labels_from_results(out.results), format="mem0_locomo")
        out.stored_source = f"{LLM_SCORE_SOURCE} {results[0]}"
        out.notes.append(f"Stored labels: the {len(out.stored.labels)} llm_score value(s) in {results[0]}.")
    if judge_cache is not None:
        try:
            out.judge_cache = JudgeCache.from_bytes(judge_cache[1], judge_cache[0])
            out.issues.extend(out.judge_cache.issues)
        except InputError as exc:
            out.issues.append(exc.issue)
    return out


def pick_judge_scores(judgements: Mapping[str, Any] | None, stored: StoredLabels | None,
                      stored_source: str = "") -> tuple[dict[str, Any] | None, str]:
    """The judge scores to report: the judge's judgements when there are any, else the stored labels.

    Parameters
    ----------
    judgements : mapping, optional
        ``question_id -> Judgement`` (a judge run or a judge cache).
    stored : StoredLabels, optional
    stored_source : str
        Where the stored labels came from (for the returned note).

    Returns
    -------
    (scores, source)
        ``scores`` is ``None`` when there are neither; ``source`` says which was taken
        (``""`` for none).
    """
    if judgements:
        return dict(judgements), "judge"
    if stored is not None and stored.labels:
        return dict(stored.labels), f"stored labels from {stored_source}" if stored_source else "stored labels"
    return None, ""
