"""EvalBoard's scoring engine.

Plain Python: never imports streamlit (a test checks it), usable from the CLI
(``python -m evaluators``), tests and notebooks.  Subpackages, one per task family:

- ``evaluators.io``         decoding (UTF-8 / UTF-8-SIG / GB18030), JSON/JSONL/CSV readers with
                            located errors, GT/prediction file pairing.
- ``evaluators.schema``     pydantic v2 models validated at the boundary.
- ``evaluators.text``       normalization, tokenizers, sentence splitting.
- ``evaluators.taxonomy``   label vocabularies shipped with the project, canonical labels.
- ``evaluators.metrics``    reusable metrics (classification, segmentation, spans, ...).
- ``evaluators.narrative``  JSON v3 narrative annotation scoring.
- ``evaluators.reports``    JSON / Markdown / CSV writers.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
