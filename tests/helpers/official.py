"""The official QA metric algorithms kept in bench/official_qa_metrics.py (SQuAD v1.1, CMRC 2018)."""

from __future__ import annotations

import importlib.util
from functools import lru_cache

from tests.conftest import ROOT


@lru_cache(maxsize=1)
def official_qa_metrics():
    """bench/official_qa_metrics.py loaded as a module (it is not part of a package)."""
    spec = importlib.util.spec_from_file_location("official_qa_metrics", ROOT / "bench" / "official_qa_metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
