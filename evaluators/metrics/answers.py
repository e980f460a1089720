"""Answer metrics of the QA benchmarks, registered for every task: SQuAD v1.1 and CMRC 2018 EM/F1.

The definitions live in :mod:`evaluators.metrics.squad` (SQuAD v1.1 ``evaluate-v1.1.py``)
and :mod:`evaluators.metrics.cmrc` (CMRC 2018 ``cmrc2018_evaluate.py``); this module only
makes them available through the metric registry, so dialogue, memory and other tasks can
pick them like any other metric.  Each takes one reference (pass the best-matching gold
answer; the QA evaluator handles several gold answers itself).
"""

from __future__ import annotations

from evaluators.metrics import cmrc, squad
from evaluators.metrics.registry import Metric, register

register(Metric(
    "exact_match_squad", "SQuAD v1.1 exact match (official evaluate-v1.1.py normalization)", (0.0, 1.0),
    "squad-v1.1|lower,strip ASCII punctuation,drop a/an/the,collapse whitespace",
    fn=lambda p, r: squad.exact_match_squad(p.text, r.text),
))
register(Metric(
    "token_f1_squad", "SQuAD v1.1 token F1 (bag of whitespace tokens after the official normalization)", (0.0, 1.0),
    "squad-v1.1|lower,strip ASCII punctuation,drop a/an/the,whitespace tokens",
    fn=lambda p, r: squad.token_f1_squad(p.text, r.text),
))
register(Metric(
    "exact_match_cmrc", "CMRC 2018 exact match (official cmrc2018_evaluate.py: symbol list removed)", (0.0, 1.0),
    cmrc.signature(), fn=lambda p, r: cmrc.cmrc_exact_match(p.text, r.text),
))
register(Metric(
    "token_f1_cmrc", "CMRC 2018 F1 from the longest common contiguous run of mixed CJK/word tokens (official script)",
    (0.0, 1.0), cmrc.signature(), fn=lambda p, r: cmrc.cmrc_f1(p.text, r.text),
))
