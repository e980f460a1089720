"""Keyword-scored test sets (single turn) and multi-turn expected points.

- :mod:`evaluators.testsets.schema`    file schema, the 1-5 human rubric, loading with located errors
- :mod:`evaluators.testsets.scoring`   keyword score, keyword spans, expected-point coverage
- :mod:`evaluators.testsets.evaluate`  answers files, per-item / per-turn results, breakdowns
- :mod:`evaluators.testsets.run`       ``run_testsets(inputs, config)``: what the page and the CLI call
- :mod:`evaluators.cli.testsets`       ``python -m evaluators testsets``
"""

from evaluators.testsets.evaluate import (AnswerSet, MultiTurnReport, SingleTurnReport, evaluate_multi_turn,
                                          evaluate_single, evaluate_test_set, load_answers)
from evaluators.testsets.run import TestSetsConfig, TestSetsInputs, TestSetsReport, run_testsets
from evaluators.testsets.schema import RUBRIC, TestSet, load_test_set, parse_test_set
from evaluators.testsets.scoring import keyword_score, keyword_spans, point_coverage

__all__ = [
    "AnswerSet", "MultiTurnReport", "SingleTurnReport", "evaluate_multi_turn", "evaluate_single", "evaluate_test_set",
    "load_answers", "RUBRIC", "TestSet", "load_test_set", "parse_test_set", "keyword_score", "keyword_spans",
    "point_coverage", "TestSetsConfig", "TestSetsInputs", "TestSetsReport", "run_testsets",
]
