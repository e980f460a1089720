"""A reference for LoCoMo's QA score, written in the tests from the benchmark's published code.

Source: snap-research/locomo, ``task_eval/evaluation.py`` at commit
92286325a40764bee61f77824ddb95233b11c4d6 (functions ``normalize_answer``, ``f1_score``,
``f1`` and ``eval_question_answering``).  That code is not copied here: this module
re-states its steps, one function per published function, so that the tests compare
``evaluators.memory.locomo_parity`` with an implementation that shares no code with it.

The published steps, per question of category ``c`` with ``answer`` and model ``output``:

1. ``answer = str(answer)``; for ``c == 3`` only the part before the first ``;`` (stripped).
2. ``c in (2, 3, 4)``: ``f1_score(output, answer)``.
   ``c == 1``: ``f1(output, answer)``: split both on ``,`` (each part stripped); for each
   answer part take the best ``f1_score`` against any output part; average (numpy mean).
   ``c == 5``: 1 if ``output.lower()`` contains "no information available" or
   "not mentioned", else 0.  Any other category raises ``ValueError``.
3. ``normalize_answer(s)``: delete commas; lower-case; delete every character of
   ``string.punctuation``; replace the words a / an / the / and (``\\b`` bounded) by a
   space; collapse whitespace (``" ".join(s.split())``).
4. ``f1_score(p, g)``: tokens = whitespace split of the normalized text, each stemmed
   with nltk's ``PorterStemmer``; common = multiset intersection; 0 when nothing is
   common; else P = common / len(p tokens), R = common / len(g tokens), 2PR / (P + R).

``evaluation_stats.py`` then averages the per-question values of each category (and of
all questions).  The published module also has a BERTScore branch for rows marked
``"metric": "bertscore"``; no file used here has such rows, so it is left out.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

import numpy as np
from nltk.stem import PorterStemmer

_STEMMER = PorterStemmer()
_PUNCTUATION = frozenset(string.punctuation)
_DROPPED_WORDS = re.compile(r"\b(a|an|the|and)\b")


def normalize_answer(text: str) -> str:
    """Step 3."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _DROPPED_WORDS.sub(" ", text)
    return " ".join(text.split())


def f1_score(prediction: str, ground_truth: str) -> float:
    """Step 4."""
    pred = [_STEMMER.stem(w) for w in normalize_answer(prediction).split()]
    gold = [_STEMMER.stem(w) for w in normalize_answer(ground_truth).split()]
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction: str, ground_truth: str) -> float:
    """Step 2, category 1."""
    outputs = [part.strip() for part in prediction.split(",")]
    answers = [part.strip() for part in ground_truth.split(",")]
    return float(np.mean([max(f1_score(o, a) for o in outputs) for a in answers]))


def question_score(output: str, answer, category: int) -> float:
    """Steps 1 and 2: the value ``eval_question_answering`` appends for one question."""
    answer = str(answer)
    if category == 3:
        answer = answer.split(";")[0].strip()
    if category in (2, 3, 4):
        return f1_score(output, answer)
    if category == 1:
        return f1_multi(output, answer)
    if category == 5:
        low = output.lower()
        return 1.0 if "no information available" in low or "not mentioned" in low else 0.0
    raise ValueError(f"category {category!r} is not one of LoCoMo's")


def locomo_reference_scores(mem0_results: dict[str, Iterable[dict]]) -> list[tuple[int, float]]:
    """``(category, score)`` of each item of a mem0 LoCoMo results file, in file order.

    mem0 stores LoCoMo's ``answer`` and ``category`` (as a string) and its own ``response``.
    """
    return [(int(item["category"]), question_score(item["response"], item["answer"], int(item["category"])))
            for items in mem0_results.values() for item in items]
