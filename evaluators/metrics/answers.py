"""Answer metrics of the QA benchmarks, registered for every task: SQuAD v1.1 and CMRC 2018 EM/F1.

The definitions live in :mod:`evaluators.metrics.squad` (SQuAD v1.1 ``evaluate-v1.1.py``)
and :mod:`evaluators.metrics.cmrc` (CMRC 2018 ``cmrc2018_evaluate.py``); this module makes
them the registry's metrics, so every task names and signs them the same way:

- dialogue, memory and other tasks pick them like any other metric (one reference: pass the
  best-matching gold answer);
- the QA evaluator (:mod:`evaluators.qa.evaluate`) scores with :data:`OFFICIAL`: per language,
  the registered exact-match and F1 metrics and the official function that gives both, maximised
  over several gold answers, in one pass (its hot path: each text is tokenized once).  Its
  report's ``exact_match`` / ``token_f1`` columns are these metrics (the record's ``tokenizer``,
  :attr:`OfficialAnswerMetrics.tokenizer`, says which pair) and its signature is theirs.

References
----------
P. Rajpurkar, J. Zhang, K. Lopyrev, P. Liang. 2016. "SQuAD: 100,000+ Questions for Machine
Comprehension of Text". EMNLP 2016.  Official script ``evaluate-v1.1.py``.

Y. Cui, T. Liu, W. Che, L. Xiao, Z. Chen, W. Ma, S. Wang, G. Hu. 2019. "A Span-Extraction
Dataset for Chinese Machine Reading Comprehension". EMNLP-IJCNLP 2019.  Official script
``cmrc2018_evaluate.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evaluators.metrics import cmrc, squad
from evaluators.metrics.registry import Metric, register

EXACT_MATCH_SQUAD = register(Metric(
    "exact_match_squad", "SQuAD v1.1 exact match: 1 if the answers are equal after the official normalization "
    "(lowercase, ASCII punctuation removed, articles a/an/the removed, whitespace collapsed), else 0 "
    "(official evaluate-v1.1.py, Rajpurkar et al. 2016)", (0.0, 1.0),
    squad.SIGNATURE, fn=lambda p, r: squad.exact_match_squad(p.text, r.text),
    source="Rajpurkar et al. (2016), SQuAD; official evaluate-v1.1.py exact_match_score",
))
TOKEN_F1_SQUAD = register(Metric(
    "token_f1_squad", "SQuAD v1.1 token F1: F1 of the bag of whitespace tokens after the official normalization "
    "(official evaluate-v1.1.py, Rajpurkar et al. 2016)", (0.0, 1.0),
    squad.SIGNATURE, fn=lambda p, r: squad.token_f1_squad(p.text, r.text),
    source="Rajpurkar et al. (2016), SQuAD; official evaluate-v1.1.py f1_score",
))
EXACT_MATCH_CMRC = register(Metric(
    "exact_match_cmrc", "CMRC 2018 exact match: 1 if the answers are equal after lowercasing, stripping and "
    "removing the official symbol list, else 0 (official cmrc2018_evaluate.py, Cui et al. 2019)", (0.0, 1.0),
    cmrc.signature(), fn=lambda p, r: cmrc.cmrc_exact_match(p.text, r.text),
    source="Cui et al. (2019), A Span-Extraction Dataset for Chinese Machine Reading Comprehension, EMNLP; "
    "official cmrc2018_evaluate.py calc_em_score",
))
TOKEN_F1_CMRC = register(Metric(
    "token_f1_cmrc", "CMRC 2018 F1 from the longest common contiguous run of mixed tokens (CJK by character, "
    "other runs by NLTK words) (official cmrc2018_evaluate.py, Cui et al. 2019)", (0.0, 1.0),
    cmrc.signature(), fn=lambda p, r: cmrc.cmrc_f1(p.text, r.text),
    source="Cui et al. (2019), A Span-Extraction Dataset for Chinese Machine Reading Comprehension, EMNLP; "
    "official cmrc2018_evaluate.py calc_f1_score over find_lcs",
))


@dataclass(frozen=True)
class OfficialAnswerMetrics:
    """The official exact-match / F1 pair of one language, as QA scores it.

    Attributes
    ----------
    lang : {"en", "zh"}
        The language whose answers these rules score.
    tokenizer : str
        The rule set's label in QA records (``QARecordResult.tokenizer``): ``"squad-v1.1"`` or ``"cmrc2018"``.
    exact_match, token_f1 : Metric
        The registered metrics (their names are the definitions of QA's ``exact_match`` / ``token_f1``
        columns for this language).
    scores : callable
        ``(prediction: str, golds: str | Sequence[str]) -> (exact_match, token_f1)``, each maximised over
        the gold answers: the official script's values, both from one tokenization
        (:func:`evaluators.metrics.squad.squad_scores`, :func:`evaluators.metrics.cmrc.cmrc_scores`).
    """

    lang: str
    tokenizer: str
    exact_match: Metric
    token_f1: Metric
    scores: Callable[[str, str | Sequence[str]], tuple[float, float]] = field(repr=False, compare=False)

    @property
    def signature(self) -> str:
        """The rules' signature (one for the pair: the two metrics are signed alike)."""
        return self.exact_match.signature

    @property
    def names(self) -> tuple[str, str]:
        """``(exact match name, F1 name)`` in the registry."""
        return self.exact_match.name, self.token_f1.name


#: ``lang -> OfficialAnswerMetrics``: SQuAD v1.1 for English (``"en"``), CMRC 2018 for Chinese (``"zh"``).
OFFICIAL: dict[str, OfficialAnswerMetrics] = {
    "en": OfficialAnswerMetrics("en", "squad-v1.1", EXACT_MATCH_SQUAD, TOKEN_F1_SQUAD, squad.squad_scores),
    "zh": OfficialAnswerMetrics("zh", "cmrc2018", EXACT_MATCH_CMRC, TOKEN_F1_CMRC, cmrc.cmrc_scores),
}
