"""JSON v3 narrative annotation scoring: alignment, characters, relationships, sentiment,
action layer, text spans, composite score, batches.

>>> from evaluators.narrative import evaluate
>>> result = evaluate(prediction_dict, ground_truth_dict)      # doctest: +SKIP
>>> result.overall_score, result.component_scores              # doctest: +SKIP
"""

from evaluators.narrative.base import COMPONENT_TITLES, COMPONENTS, NarrativeConfig
from evaluators.narrative.composite import NarrativeEvaluator, NarrativeResult, evaluate, get_metrics_summary
from evaluators.narrative.loader import LoadedDocument, convert_v2_to_v3, load_document
from evaluators.policy import handle_missing_ground_truth

__all__ = ["COMPONENTS", "COMPONENT_TITLES", "NarrativeConfig", "NarrativeEvaluator", "NarrativeResult", "evaluate",
           "get_metrics_summary", "LoadedDocument", "convert_v2_to_v3", "load_document",
           "handle_missing_ground_truth"]
