"""Review items from scored runs: what a reviewer sees of each QA record, persona reply, memory answer
or test-set item.  Each payload is plain JSON: ``kind``, ``id``, ``question`` (or context),
``ground_truth``, ``prediction``, the ``system`` (model) when there is one, and the scores shown
beside it; its canonical JSON digest is the item's identity (:func:`evaluators.review.store.item_digest`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Where an item keeps its automatic score (metric or judge), by item kind: (payload path, what it is).
#: The Review queue's metric filter and the automatic verdict of the Agreement view both read it here.
AUTOMATIC = {"qa": (("exact_match",), "exact match"), "memory": (("scores", "judge_score"), "LLM judge"),
             "dialogue": (("combined",), "combined score"), "testsets": (("score",), "keyword score")}


def automatic_score(payload: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """An item's automatic score and what it is (:data:`AUTOMATIC`): ``(value, name)``.

    ``value`` is ``None`` when the item's kind has no automatic score or the payload lacks it;
    ``name`` is ``None`` for a kind without one (narrative mismatches, A/B pairs).

    Parameters
    ----------
    payload : mapping
        A review item's payload.

    Returns
    -------
    (float or None, str or None)

    Examples
    --------
    >>> automatic_score({"kind": "memory", "scores": {"judge_score": 0.8}})
    (0.8, 'LLM judge')
    """
    path, what = AUTOMATIC.get(str(payload.get("kind", "")), ((), None))
    return score_at(payload, path), what


def value_at(payload: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` (keys, nested) of a payload; ``None`` where a key is absent or a step is not a
    mapping; the payload itself for an empty path.

    Parameters
    ----------
    payload : object
    path : sequence of str

    Returns
    -------
    object
    """
    value: Any = payload
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def score_at(payload: Mapping[str, Any], path: Sequence[str]) -> float | None:
    """The number at ``path`` (keys, nested) of a payload; ``None`` when absent, not a number, or no path.

    Parameters
    ----------
    payload : mapping
    path : sequence of str

    Returns
    -------
    float or None
        Bools are not numbers here.
    """
    value = value_at(payload, path)
    ok = bool(path) and isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def filter_columns(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The item columns the Review queue's filters read (``system``, ``metric``), from its payload.

    Parameters
    ----------
    payload : mapping

    Returns
    -------
    dict
        ``{"system": str or None, "metric": float or None}``.
    """
    return {"system": system_of(payload), "metric": automatic_score(payload)[0]}


def system_of(payload: Mapping[str, Any]) -> str | None:
    """The system (model) an item shows, as text up to 256 characters (``None`` without one, and for A/B pairs).

    Parameters
    ----------
    payload : mapping

    Returns
    -------
    str or None
    """
    value = payload.get("system")
    if value is None or isinstance(value, (dict, list)) or value == "":
        return None
    return str(value)[:256]


def qa_items(report, limit: int | None = None) -> list[dict[str, Any]]:
    """Scored records of a :class:`~evaluators.qa.evaluate.QAReport` (missing GT left out).

    Parameters
    ----------
    report : QAReport
    limit : int, optional
        Items at most.

    Returns
    -------
    list of dict
        One payload per record with status ``scored`` or ``missing_prediction`` (records without
        GT or with an unreadable GT verdict are left out): ``kind`` ``"qa"``, ``id``, ``question``,
        ``ground_truth`` (answers joined by `` | ``), ``prediction``, ``system`` (the group),
        ``exact_match``, ``token_f1``, ``verdict``, ``gold_verdict``.
    """
    out = []
    for r in report.records:
        if r.status not in ("scored", "missing_prediction"):
            continue
        out.append({"kind": "qa", "id": r.id, "question": r.question or "", "ground_truth": " | ".join(r.gold_answers),
                    "prediction": r.prediction, "system": r.group, "exact_match": r.exact_match,
                    "token_f1": r.token_f1, "verdict": r.predicted_verdict, "gold_verdict": r.gold_verdict})
        if limit is not None and len(out) >= limit:
            break
    return out


def dialogue_items(evaluation) -> list[dict[str, Any]]:
    """Persona replies with a reference (``no_gt`` cases left out), with the combined score.

    Parameters
    ----------
    evaluation : DialogueEvaluation
        A scored persona run (its ``results``).

    Returns
    -------
    list of dict
        ``kind`` ``"dialogue"``, ``id`` (``scene#dialogue_index#occurrence``), ``scene``,
        ``dialogue_index``, ``context``, ``ground_truth``, ``prediction``, ``system``, ``combined``.
    """
    return [{"kind": "dialogue", "id": f"{r.scene}#{r.dialogue_index}#{r.occurrence}", "scene": r.scene,
             "dialogue_index": r.dialogue_index, "context": r.context, "ground_truth": r.expected_response,
             "prediction": r.prediction, "system": r.model, "combined": r.combined_score}
            for r in evaluation.results if r.status != "no_gt"]


def memory_items(results: Iterable[Any], rows: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Long-term-memory answers (EvalResult) with their scores (``score_questions`` rows, optional).

    Parameters
    ----------
    results : iterable of EvalResult
    rows : sequence of QuestionScores
        Their scores, matched by question id; ``None`` values dropped.

    Returns
    -------
    list of dict
        ``kind`` ``"memory"``, ``id`` (the question id), ``question_type``, ``question``,
        ``ground_truth``, ``prediction``, ``scores``.
    """
    scores = {r.question_id: r.scores for r in rows}
    return [{"kind": "memory", "id": r.question_id, "question_type": r.question_type, "question": r.question,
             "ground_truth": r.ground_truth, "prediction": r.prediction,
             "scores": {k: v for k, v in scores.get(r.question_id, {}).items() if v is not None}}
            for r in results]


def testset_items(report) -> list[dict[str, Any]]:
    """Single-turn test-set items with their answers and keyword scores.

    Parameters
    ----------
    report : SingleTurnReport or MultiTurnReport
        A multi-turn report gives no item.

    Returns
    -------
    list of dict
        ``kind`` ``"testsets"``, ``id``, ``question``, ``ground_truth`` (the expected answer),
        ``prediction``, ``category``, ``keywords_missing``, ``score``.
    """
    return [{"kind": "testsets", "id": r.id, "question": r.question, "ground_truth": r.expected_answer,
             "prediction": r.answer or "", "category": r.category, "keywords_missing": list(r.missing),
             "score": r.score} for r in getattr(report, "items", ())]


def narrative_items(results: Iterable[Any], digests: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One item per narrative mismatch (a missed character, a relationship or action mismatch, a span).

    Parameters
    ----------
    results : iterable of NarrativeResult
        Events are named by their readable labels (type and first words of the span).
    digests : mapping of str to str, optional
        GT file name -> its SHA-256 (:func:`evaluators.io.gt_patch.file_sha256`).

    Returns
    -------
    list of dict
        Payloads with ``kind`` ``"narrative"``, ``id``, ``story``, ``question``, ``ground_truth``,
        ``prediction``, ``note``, and what a GT patch needs to correct the story's GT
        (:mod:`evaluators.narrative.patch`): ``gt_file``, ``gt_path`` (the place in the GT
        document, :func:`evaluators.narrative.locate.locate`; absent for a mismatch only in the
        prediction: an extra character, a spurious relationship or span) and ``gt_digest`` (with
        ``digests``).  Items of sessions made before these keys stay readable; they give no patch.
    """
    from evaluators.narrative.locate import locate

    out = []
    for r in results:
        label = r.alignment.label_of
        digest = (digests or {}).get(r.gt_file)
        for n, m in enumerate(r.mismatches()):
            events = " / ".join(x for x in (label(m.gt_event) if m.gt_event else "",
                                             label(m.pred_event) if m.pred_event else "") if x)
            item = {"kind": "narrative", "id": f"{r.story_id}:{m.component}:{n}", "story": r.story_id,
                    "question": f"{m.component} · {m.field}" + (f" · {events}" if events else ""),
                    "ground_truth": m.gt_value, "prediction": m.pred_value, "note": m.note, "gt_file": r.gt_file}
            path = locate(m.component, m.field, m.gt_value, m.gt_event, m.note)
            if path is not None:
                item["gt_path"] = path
            if digest:
                item["gt_digest"] = digest
            out.append(item)
    return out


def dialogue_pair_items(evaluation, model_a: str, model_b: str) -> list[dict[str, Any]]:
    """Two models' replies to the same persona case as one A/B item (cases both answered, with a reference).

    The payload's ``sides`` are ``{"A": {"system", "prediction", "combined"}, "B": {...}}``; in a
    blind session the page hides the names and shows the sides in a per-annotator seeded order
    (:meth:`evaluators.review.store.ReviewStore.blind_sides`), storing the decision about A and B.

    Parameters
    ----------
    evaluation : DialogueEvaluation
    model_a, model_b : str
        Two models of the run.

    Returns
    -------
    list of dict
        ``kind`` ``"dialogue_pair"``, ``id`` (the case), ``context``, ``ground_truth``, ``sides``.
    """
    by_case: dict[str, dict[str, Any]] = {}
    for r in evaluation.results:
        if r.status != "no_gt" and r.model in (model_a, model_b):
            by_case.setdefault(f"{r.scene}#{r.dialogue_index}#{r.occurrence}", {})[r.model] = r
    out = []
    for case, rows in by_case.items():
        if model_a in rows and model_b in rows:
            a, b = rows[model_a], rows[model_b]
            out.append({"kind": "dialogue_pair", "id": case, "context": a.context, "ground_truth": a.expected_response,
                        "sides": {"A": {"system": model_a, "prediction": a.prediction, "combined": a.combined_score},
                                  "B": {"system": model_b, "prediction": b.prediction, "combined": b.combined_score}}})
    return out
