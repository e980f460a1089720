"""Outputs compatible with the earlier persona script, plus EvalBoard's full JSON.

- :func:`annotation_csv`: the human-annotation CSV, columns ``scene, dialogue_index,
  context, expected_response, prediction, exact_match, content_correct,
  style_consistent, notes`` (the last three empty for annotators; a ``model`` column is
  appended only when several models are evaluated).
- :func:`json_report`: ``{"evaluation_info": {timestamp, models_evaluated,
  total_test_cases, ...}, "results": [{model, scene, dialogue_index, context,
  expected_response, prediction, metrics: {...}}]}``.  The old ``metrics`` block holds
  only the earlier script's keys whose definition ours equals (difflib mode:
  ``exact_match``, ``fuzzy_match``, ``keyword_similarity``); every score is in
  ``metrics_all`` under its own name and the weighted score is ``combined`` (the earlier
  ``edit_distance``, ``sentence_bert`` and ``combined_score`` had other definitions, so
  their keys are not reused).  A metric that is unavailable is ``null``, never 0.
- :func:`summary_text`: the text summary per model.
"""

from __future__ import annotations

from datetime import datetime

from evaluators.dialogue.scoring import LEGACY_NAMES, DialogueEvaluation
from evaluators.io.json_text import dumps_pretty
from evaluators.reports.csv_writer import write_csv
from evaluators.reports.format import fixed
from evaluators.results import to_jsonable

ANNOTATION_COLUMNS = ["scene", "dialogue_index", "context", "expected_response", "prediction", "exact_match",
                      "content_correct", "style_consistent", "notes"]
#: The exact-match column: the earlier script's name where our definition is its own (difflib mode).
EM_COLUMN = {"exact_match_strip": "exact_match", "exact_match_normalized": "exact_match_normalized"}


def _index_out(index: str):
    """Dialogue index as the earlier script wrote it: an int when it is one."""
    return int(index) if index.lstrip("-").isdigit() else index


def annotation_csv(evaluation: DialogueEvaluation) -> str:
    """The human-annotation CSV as text (``\\r\\n`` line ends, as ``csv`` writes them).

    ``exact_match`` is written as ``1.0``/``0.0`` (empty for cases without ground truth).  Written by
    :func:`evaluators.reports.csv_writer.write_csv` (formula-like cells made inert).
    """
    multi = len(evaluation.models) > 1
    names = [m["name"] for m in evaluation.metric_info]
    em_key = next((k for k in EM_COLUMN if k in names), "exact_match_normalized")
    columns = [EM_COLUMN[em_key] if c == "exact_match" else c for c in ANNOTATION_COLUMNS]

    def rows():
        for r in evaluation.results:
            em = r.metrics.get(em_key)
            row = [r.scene, r.dialogue_index, r.context, r.expected_response, r.prediction,
                   "" if em is None else repr(float(em)), "", "", ""]
            yield row + ([r.model] if multi else [])

    return write_csv(columns + (["model"] if multi else []), rows())


def json_report(evaluation: DialogueEvaluation, timestamp: datetime | None = None) -> dict:
    """The JSON report (old keys kept, EvalBoard's extra keys beside them).

    Parameters
    ----------
    evaluation : DialogueEvaluation
    timestamp : datetime, optional
        Defaults to now.

    Returns
    -------
    dict
        JSON-ready (no NaN).
    """
    ts = (timestamp or datetime.now()).isoformat()
    results = []
    for r in evaluation.results:
        legacy = {old: r.metrics[new] for old, new in LEGACY_NAMES.items() if new in r.metrics}
        results.append({
            "model": r.model, "scene": r.scene, "dialogue_index": _index_out(r.dialogue_index), "context": r.context,
            "expected_response": r.expected_response, "prediction": r.prediction, "metrics": legacy,
            "status": r.status, "error": r.error, "occurrence": r.occurrence, "metrics_all": r.metrics,
            "combined": r.combined_score,
        })
    info = {
        "timestamp": ts, "models_evaluated": evaluation.models, "total_test_cases": len(evaluation.results),
        "cases_file": evaluation.cases_file, "n_cases": evaluation.n_cases, "mode": evaluation.config.mode,
        "signatures": evaluation.signatures, "metric_info": evaluation.metric_info,
        "combined_weights": evaluation.weights.to_dict(), "matching": evaluation.matching,
        "legacy_metric_names": LEGACY_NAMES, "tool": "EvalBoard persona dialogue",
    }
    out = {
        "evaluation_info": info, "results": results,
        "by_model": evaluation.by_model, "by_scene": evaluation.by_scene, "comparison": evaluation.comparison,
        "corpus_bleu": evaluation.corpus_bleu, "issues": evaluation.issues,
    }
    if evaluation.corrections is not None:  # the scores above are after the review corrections
        out["gt_patch"] = evaluation.corrections
    return to_jsonable(out)


def json_report_text(evaluation: DialogueEvaluation, timestamp: datetime | None = None) -> str:
    """:func:`json_report` serialized (UTF-8 text, indent 2, Chinese kept as is)."""
    return dumps_pretty(json_report(evaluation, timestamp))


def _fmt(value: float | None) -> str:
    return fixed(value, 4)


def summary_text(evaluation: DialogueEvaluation, timestamp: datetime | None = None) -> str:
    """Text summary per model (the earlier script's lines first, then EvalBoard's).

    Unavailable metrics print ``— (reason)`` (:data:`~evaluators.reports.format.MISSING`) instead of 0.
    """
    ts = (timestamp or datetime.now()).strftime("%Y-%m-%d %H:%M")
    lines = ["PERSONA DIALOGUE EVALUATION SUMMARY",
             "=" * 50, f"Timestamp: {ts}", f"Models evaluated: {', '.join(evaluation.models)}",
             f"Total test cases: {len(evaluation.results)}", f"Cases file: {evaluation.cases_file} "
             f"({evaluation.n_cases} cases)", f"Mode: {evaluation.config.mode}"]
    unavailable = {m["name"]: m["unavailable_reason"] for m in evaluation.metric_info if not m["available"]}
    for s in evaluation.by_model:
        lines += ["", f"{s.model}:", f"  Test cases: {s.n_cases} (scored {s.n_scored}, missing {s.n_missing}, "
                                      f"errors {s.n_errors}, no ground truth {s.n_no_gt})"]
        first = ("exact_match_strip", "exact_match_normalized", "fuzzy_ratio_difflib", "fuzzy_ratio",
                 "semantic_similarity")
        for name in first:
            if name in s.means:
                extra = f" ({unavailable[name]})" if name in unavailable else ""
                lines.append(f"  Average {name}: {_fmt(s.means[name])}{extra}")
        for name, value in s.means.items():
            if name not in first:
                extra = f" ({unavailable[name]})" if name in unavailable else ""
                lines.append(f"  Average {name}: {_fmt(value)}{extra}")
        lines.append(f"  Average combined score: {_fmt(s.combined_score)}")
        bleu = evaluation.corpus_bleu.get(s.model)
        if bleu is not None and bleu.score is not None:
            lines.append(f"  Corpus BLEU (sacrebleu, tokenize={bleu.tokenize}): {_fmt(bleu.score)}")
    lines += ["", "Aggregation: mean over cases (macro); missing replies count as 0.",
              f"Combined score weights: {', '.join(f'{k}={fixed(v, 4)}' for k, v in evaluation.weights.used.items())} "
              f"({evaluation.weights.note})", "Signatures:"]
    lines += [f"  {k}: {v}" for k, v in evaluation.signatures.items()]
    if evaluation.comparison:
        c = evaluation.comparison
        lines += ["", f"Model comparison on {c.n_shared} shared cases: "
                      + ", ".join(f"{m} wins {n}" for m, n in c.wins.items()) + f", ties {c.ties}"]
    if evaluation.issues:
        lines += ["", f"Input issues: {len(evaluation.issues)} (see the JSON report)"]
    return "\n".join(lines) + "\n"
