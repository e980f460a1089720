"""Keyword scores and expected-point coverage.

Keyword score (the test sets' README): the fraction of an item's keywords found in the
answer, after NFKC normalization and case folding of both (all found -> 1.0, some -> the
fraction, none -> 0.0).  Matching is by substring, as the sets' keywords are Chinese words
and names.  The rule is the registered metric ``keyword_recall``
(:mod:`evaluators.metrics.keywords`: :func:`keyword_score`, :data:`KEYWORD_RULE`, :func:`fold`
are its, re-exported here); this module adds highlighting and expected points.

Expected point (multi-turn): covered when

- ``keywords`` rule: the point has keywords and all of them are found in the answer;
- ``verbatim`` rule: the point has no keywords and the point text itself is found in the
  answer, comparing both after NFKC, case folding and removal of whitespace and
  punctuation (``"恰斯卡、伊法所在"`` needs ``恰斯卡伊法所在`` in the answer).

Each result says which rule decided it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.metrics.keywords import KEYWORD_RECALL, KEYWORD_RULE, KeywordScore, fold, keyword_score
from evaluators.results import DictMixin

__all__ = ["KEYWORD_RECALL", "KEYWORD_RULE", "KeywordScore", "PointCoverage", "fold", "keyword_score",
           "keyword_spans", "point_coverage"]

_DROP = re.compile(r"[\W_]+")


def _loose(text: str) -> str:
    return _DROP.sub("", fold(text))


def keyword_spans(answer: str, keywords: Sequence[str]) -> list[tuple[int, int]]:
    """Half-open character spans ``[start, end)`` of keyword occurrences in the *original* answer.

    Matching is done on the per-character NFKC + casefold form mapped back to original
    offsets; overlapping spans are merged.  Used to highlight keywords.

    Parameters
    ----------
    answer : str
        The answer as written.
    keywords : sequence of str
        Blank ones are ignored.

    Returns
    -------
    list of (int, int)
        Sorted, non-overlapping spans into ``answer``; ``[]`` for an empty answer.

    Examples
    --------
    >>> keyword_spans("伊法是医生，伊法很好", ["伊法", "医生"])
    [(0, 2), (3, 5), (6, 8)]
    """
    if not answer:
        return []
    chars: list[str] = []
    owner: list[int] = []
    for i, ch in enumerate(answer):
        for c in fold(ch):
            chars.append(c)
            owner.append(i)
    text = "".join(chars)
    spans: list[tuple[int, int]] = []
    for kw in keywords:
        key = fold(kw.strip()) if kw else ""
        if not key:
            continue
        start = text.find(key)
        while start != -1:
            spans.append((owner[start], owner[start + len(key) - 1] + 1))
            start = text.find(key, start + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


@dataclass(frozen=True)
class PointCoverage(DictMixin):
    """Whether one expected point is covered by an answer.

    Attributes
    ----------
    point : str
        The expected point.
    keywords : tuple of str
        Its keywords (empty for the verbatim rule).
    rule : str
        ``"keywords"`` or ``"verbatim"``.
    covered : bool
        Covered by that rule.
    found : tuple of str
        Keywords found (keywords rule) or the point itself when covered (verbatim).
    """

    point: str
    keywords: tuple[str, ...]
    rule: str
    covered: bool
    found: tuple[str, ...]


def point_coverage(answer: str, point: str, keywords: Sequence[str] = ()) -> PointCoverage:
    """Decide whether ``answer`` covers an expected point (rules in the module docstring).

    Parameters
    ----------
    answer : str
        The model's reply of that turn.
    point : str
        The expected point.
    keywords : sequence of str
        The point's keywords; none (or only blank ones): the verbatim rule.

    Returns
    -------
    PointCoverage

    References
    ----------
    Keyword matching as the keyword test sets' README defines it (substring after NFKC and case
    folding, :func:`keyword_score`); the all-keywords and verbatim rules are EvalBoard's (module
    docstring).

    Examples
    --------
    >>> point_coverage("恰斯卡和伊法所在的部落", "恰斯卡、伊法所在").covered  # punctuation ignored, "和" is not
    False
    >>> point_coverage("恰斯卡伊法所在的部落", "恰斯卡、伊法所在").rule
    'verbatim'
    """
    kws = tuple(k for k in keywords if k and k.strip())
    if kws:
        ks = keyword_score(answer, kws)
        return PointCoverage(point, kws, "keywords", not ks.missing, ks.found)
    hit = bool(_loose(point)) and _loose(point) in _loose(answer or "")
    return PointCoverage(point, (), "verbatim", hit, (point,) if hit else ())
