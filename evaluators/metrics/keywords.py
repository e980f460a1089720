"""Keyword recall: the fraction of a reference's keywords found in an answer (the test sets' keyword score).

The rule is the automatic score of the keyword QA test sets (their README, 评分标准 / 自动评分:
all keywords present -> 1.0, some -> the fraction present, none -> 0.0): each keyword is looked
for as a substring of the answer after NFKC normalization and case folding of both (the sets'
keywords are Chinese words and names, so no tokenizer decides what a word is).  Blank keywords
are ignored; without keywords there is no score (``None``), never 0.

Registered as ``keyword_recall`` (:data:`KEYWORD_RECALL`): its reference is a list of keywords,
not a text (``reference="keywords"``), so it is scored with :meth:`Metric.score` and never offered
among the text-pair metrics (:func:`~evaluators.metrics.registry.list_metrics`).  The test sets
(:mod:`evaluators.testsets.scoring`) score with :func:`keyword_score`, which also says which
keywords were found; the micro aggregate of their reports (``keyword_recall``: found / total over
items) pools the same counts.

Reference
---------
Keyword QA test sets, README "评分标准 · 自动评分（基于 keywords）" (``../shared/data/keyword_qa``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from evaluators.metrics.registry import Metric, register
from evaluators.results import DictMixin, safe_div

#: The matching rule and score, written into every keyword-scored signature.
KEYWORD_RULE = "keywords: substring after NFKC + casefold; score = found / total"


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """NFKC + case folding: the form in which answers and keywords are compared.

    Parameters
    ----------
    text : str
        Any text (Chinese, English or mixed).

    Returns
    -------
    str
        ``unicodedata.normalize("NFKC", text).casefold()``.

    Examples
    --------
    >>> fold("ＡＢＣ Straße")
    'abc strasse'
    """
    return unicodedata.normalize("NFKC", text).casefold()


@dataclass(frozen=True)
class KeywordScore(DictMixin):
    """Keywords found in one answer.

    Attributes
    ----------
    found, missing : tuple of str
        Keywords present / absent (original spelling, in the item's order).
    n_keywords : int
        Total keywords (blank ones not counted).
    score : float or None
        ``len(found) / n_keywords`` in [0, 1]; ``None`` without keywords.
    """

    found: tuple[str, ...]
    missing: tuple[str, ...]
    n_keywords: int
    score: float | None


def keyword_score(answer: str, keywords: Sequence[str]) -> KeywordScore:
    """Score an answer by the fraction of keywords it contains (the rule in the module docstring).

    Parameters
    ----------
    answer : str
        Model answer (may be empty: every keyword is then missing).
    keywords : sequence of str, shape (n_keywords,)
        Scoring keywords; blank ones are ignored.

    Returns
    -------
    KeywordScore
        The keywords found and missing and ``score = found / n_keywords`` (``None`` when there
        is no keyword).

    References
    ----------
    Keyword QA test sets, README "评分标准 · 自动评分（基于 keywords）".

    Examples
    --------
    >>> keyword_score("伊法是花羽会的医生", ["伊法", "医生", "咔库库"]).score  # 2 of 3
    0.6666666666666666
    >>> keyword_score("Born in ＯＳＬＯ", ["oslo", "1990"]).score  # NFKC + casefold: 1 of 2
    0.5
    """
    kws = [k for k in keywords if k and k.strip()]
    folded = fold(answer or "")
    found = tuple(k for k in kws if fold(k.strip()) in folded)
    missing = tuple(k for k in kws if k not in found)
    return KeywordScore(found, missing, len(kws), safe_div(len(found), len(kws)))


def keyword_recall(answer: str, keywords: Sequence[str]) -> float | None:
    """``keyword_score(answer, keywords).score``: found / total keywords in [0, 1], ``None`` without keywords.

    Parameters
    ----------
    answer : str
        Model answer.
    keywords : sequence of str, shape (n_keywords,)
        The reference's keywords (a single string is one keyword).

    Returns
    -------
    float or None
    """
    return keyword_score(answer, [keywords] if isinstance(keywords, str) else keywords).score


#: The registered metric (one definition: the test sets' scores and the registry's are this function).
KEYWORD_RECALL = register(Metric(
    "keyword_recall", "Fraction of the reference keywords found in the answer as substrings after NFKC + casefold "
    "(all -> 1, some -> the fraction, none -> 0; no keywords: no score): the keyword QA test sets' automatic "
    "score (their README, 评分标准)", (0.0, 1.0), KEYWORD_RULE, reference="keywords", fn=keyword_recall,
    source="the keyword QA test sets' README, 评分标准 · 自动评分（基于 keywords）",
))
