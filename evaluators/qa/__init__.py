"""QA and fact-check evaluation.

- :mod:`evaluators.qa.fields`    ground-truth / prediction field resolution (configurable priority)
- :mod:`evaluators.qa.verdict`   verdict normalization to T / F / uncertain / unparsed
- :mod:`evaluators.qa.records`   readers (records, SQuAD-style datasets, prediction maps)
- :mod:`evaluators.qa.evaluate`  fact-check detection, per-record EM / F1, the report
- :mod:`evaluators.qa.run`       ``run_qa(inputs, config) -> QARun``: the one run function of the page and the CLI
- :mod:`evaluators.reports.tables`    aligned text tables (CLI)
- :mod:`evaluators.cli.qa`       ``python -m evaluators qa``
"""

from evaluators.qa.evaluate import QAConfig, QARecordResult, QAReport, detect_task, evaluate_qa, evaluate_qa_file, evaluate_records
from evaluators.qa.verdict import UNPARSED, VERDICTS, Verdict, extract_answer, normalize_verdict
from evaluators.qa.run import QAInput, QARun, run_qa  # noqa: E402 - after the modules it builds on

__all__ = [
    "QAConfig", "QARecordResult", "QAReport", "detect_task", "evaluate_qa", "evaluate_qa_file", "evaluate_records",
    "UNPARSED", "VERDICTS", "Verdict", "extract_answer", "normalize_verdict", "QAInput", "QARun", "run_qa",
]
