"""Persona dialogue evaluation: test cases by scene, model replies, metrics, live endpoint, reports.

Typical use::

    from evaluators.dialogue import DialogueInputs, load_cases, load_predictions, run_dialogue
    cases = load_cases(open("cases.json", "rb").read(), "cases.json")
    preds = load_predictions(open("run.jsonl", "rb").read(), "run.jsonl")
    report = run_dialogue(DialogueInputs.of(cases, [preds]))
"""

from evaluators.dialogue.inputs import (
    CaseSet, DialogueCase, PredictionRow, PredictionSet, index_key, load_cases, load_predictions,
)
from evaluators.dialogue.matching import Matching, match_predictions
from evaluators.dialogue.scoring import (
    DEFAULT_METRICS, DEFAULT_WEIGHTS, CaseResult, DialogueConfig, DialogueEvaluation, GroupSummary,
    ModelComparison, combine, combined_weights, compare_models, evaluate_dialogue,
)
from evaluators.dialogue.run import DialogueInputs, run_dialogue

__all__ = [
    "CaseSet", "DialogueCase", "PredictionRow", "PredictionSet", "index_key", "load_cases", "load_predictions",
    "Matching", "match_predictions", "DEFAULT_METRICS", "DEFAULT_WEIGHTS", "CaseResult", "DialogueConfig",
    "DialogueEvaluation", "GroupSummary", "ModelComparison", "combine", "combined_weights", "compare_models",
    "evaluate_dialogue", "DialogueInputs", "run_dialogue",
]
