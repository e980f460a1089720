"""Long-term-memory QA (LoCoMo, LongMemEval): records, loaders, LLM judge, metrics by type.

- :mod:`~evaluators.memory.records`       ``EvalResult`` and its JSON/JSONL in and out
- :mod:`~evaluators.memory.loaders`       LoCoMo, LongMemEval, mem0 results, predictions by id
- :mod:`~evaluators.memory.inputs`        ``resolve_inputs``: the one set of input rules of the page and the CLI
- :mod:`~evaluators.memory.unanswerable`  ``is_unanswerable`` (English and Chinese)
- :mod:`~evaluators.memory.judge`         ``judge_answer``, ``batch_judge``, the JSON judge cache
- :mod:`~evaluators.memory.llm`           OpenAI-compatible chat-completions client
- :mod:`~evaluators.memory.agreement`     stored judge labels, agreement, LongMemEval accuracy table
- :mod:`~evaluators.memory.locomo_parity` LoCoMo's own F1 (the benchmark's published scoring)
- :mod:`~evaluators.memory.metrics`       ``compute_metrics`` overall and by question type
- :mod:`~evaluators.memory.run`           ``run_memory(inputs, MemoryConfig) -> MemoryReport``: the one run of page and CLI
- :mod:`~evaluators.cli.memory`           ``python -m evaluators memory ...``
"""

from evaluators.memory.agreement import (
    JudgeAgreement, LongMemEvalReport, StoredLabels, judge_agreement, load_judge_labels,
    longmemeval_accuracy, stored_labels_from_results,
)
from evaluators.memory.inputs import ResolvedInputs, pick_judge_scores, resolve_inputs
from evaluators.memory.judge import MODES, Judgement, JudgeCache, JudgeRun, auto_mode, batch_judge, judge_answer
from evaluators.memory.loaders import (
    attach_predictions, load_locomo, load_longmemeval, load_mem0_locomo, load_predictions, load_results_file,
)
from evaluators.memory.locomo_parity import LocomoParityReport, locomo_parity
from evaluators.memory.metrics import ALL_METRICS, DEFAULT_METRICS, compute_metrics, score_questions
from evaluators.memory.run import MemoryConfig, MemoryReport, run_memory
from evaluators.memory.records import EvalResult, LoadReport, read_results, results_to_json, results_to_jsonl
from evaluators.memory.unanswerable import is_unanswerable

__all__ = [
    "EvalResult", "LoadReport", "read_results", "results_to_json", "results_to_jsonl",
    "load_locomo", "load_longmemeval", "load_mem0_locomo", "load_predictions", "attach_predictions",
    "load_results_file", "ResolvedInputs", "resolve_inputs", "pick_judge_scores", "is_unanswerable", "MODES", "Judgement", "JudgeCache", "JudgeRun", "auto_mode",
    "batch_judge", "judge_answer", "LLMConfig", "LLMError", "OpenAICompatibleClient", "JudgeAgreement",
    "LongMemEvalReport", "StoredLabels", "judge_agreement", "load_judge_labels",
    "longmemeval_accuracy", "stored_labels_from_results", "LocomoParityReport", "locomo_parity",
    "ALL_METRICS", "DEFAULT_METRICS", "compute_metrics", "score_questions", "MemoryConfig", "MemoryReport",
    "run_memory",
]

#: Names of :mod:`evaluators.memory.llm`, imported when first asked for (its HTTP client is not needed to score).
_FROM_LLM = ("LLMConfig", "LLMError", "OpenAICompatibleClient")


def __getattr__(name: str):
    if name in _FROM_LLM:
        from evaluators.memory import llm

        return getattr(llm, name)
    raise AttributeError(f"module 'evaluators.memory' has no attribute {name!r}")
