"""SQuAD v1.1 exact match and token F1 (English answers).

The normalization and both metrics are those of the official evaluation script
``evaluate-v1.1.py`` (Rajpurkar et al., 2016, https://rajpurkar.github.io/SQuAD-explorer/):

1. lowercase (``str.lower``);
2. remove ASCII punctuation (``string.punctuation``; other punctuation stays);
3. replace the articles ``a``, ``an``, ``the`` (regex ``\\b(a|an|the)\\b``) by a space;
4. collapse whitespace (``" ".join(text.split())``).

Exact match (:func:`exact_match_squad`) compares the normalized strings; F1
(:func:`token_f1_squad`) is the bag-of-tokens F1 of the normalized
tokens (``Counter`` intersection); both take the maximum over the gold answers.  The
official quirk is kept: two answers that normalize to nothing have EM 1 and F1 0
(F1 returns 0 whenever no token is shared).

The implementation normalizes each string once (the official script normalizes every
string twice per gold answer) and uses ``str.translate`` and set intersections instead of
per-character Python loops and ``Counter`` arithmetic; the values are identical (checked
against a verbatim copy of the official functions in the tests and in ``bench/``).

Reference
---------
P. Rajpurkar, J. Zhang, K. Lopyrev, P. Liang. 2016. "SQuAD: 100,000+ Questions for
Machine Comprehension of Text". EMNLP 2016.  Official script ``evaluate-v1.1.py``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

from evaluators.results import f1_score

#: Signature written next to every SQuAD-scored number.
SIGNATURE = "squad-v1.1(lower, ascii-punct removed, articles a/an/the removed, whitespace split; bag-of-tokens F1; max over golds)"

_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Normalize an answer exactly as SQuAD v1.1's ``normalize_answer``.

    Parameters
    ----------
    text : str
        Any answer text.

    Returns
    -------
    str
        Lowercased, ASCII punctuation removed, articles removed, single-spaced.

    Examples
    --------
    >>> normalize_answer("The  Eiffel-Tower!")
    'eiffeltower'
    """
    return " ".join(squad_tokens(text))


def squad_tokens(text: str) -> list[str]:
    """Tokens of the normalized answer (``normalize_answer(text).split()``).

    Parameters
    ----------
    text : str
        Any answer text.

    Returns
    -------
    list of str
        Lower-case tokens without ASCII punctuation and the articles a/an/the; empty for a text of
        punctuation and articles only.

    Examples
    --------
    >>> squad_tokens("The cat, a dog.")
    ['cat', 'dog']
    """
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCT_TABLE)).split()


def _common_count(pred: list[str], gold: list[str]) -> int:
    """Size of the multiset intersection of two token lists."""
    sp = set(pred)
    sg = set(gold)
    if len(sp) == len(pred) and len(sg) == len(gold):
        return len(sp & sg)
    return sum((Counter(pred) & Counter(gold)).values())


def _f1_tokens(pred: list[str], gold: list[str]) -> float:
    num_same = _common_count(pred, gold) if pred and gold else 0
    if num_same == 0:
        return 0.0
    return f1_score(num_same / len(pred), num_same / len(gold))


def gold_list(answers: str | Sequence[str]) -> list[str]:
    """The gold answers as a list (one string is one answer).

    Parameters
    ----------
    answers : str or sequence of str
        One gold answer, or several.

    Returns
    -------
    list of str
        At least one answer.

    Raises
    ------
    ValueError
        If no gold answer is given (the official scripts would fail on ``max([])``).
    """
    golds = [answers] if isinstance(answers, str) else list(answers)
    if not golds:
        raise ValueError("at least one gold answer is required")
    return golds


def squad_scores(prediction: str, ground_truths: str | Sequence[str]) -> tuple[float, float]:
    """Exact match and token F1 of one prediction, maximized over its gold answers.

    Parameters
    ----------
    prediction : str
        Model answer.
    ground_truths : str or sequence of str
        One gold answer or several (the maximum over them is returned, as in SQuAD).

    Returns
    -------
    (exact_match, token_f1) : tuple of float
        ``exact_match`` is 0.0 or 1.0; ``token_f1`` is in [0, 1].

    Raises
    ------
    ValueError
        If no gold answer is given (the official script would fail on ``max([])``).
    """
    golds = gold_list(ground_truths)
    pred = squad_tokens(prediction)
    em = 0.0
    f1 = 0.0
    for gold in golds:
        gold_tokens = squad_tokens(gold)
        if gold_tokens == pred:
            em = 1.0
        if pred and gold_tokens:
            score = _f1_tokens(pred, gold_tokens)
            if score > f1:
                f1 = score
    return em, f1


def exact_match_squad(prediction: str, ground_truths: str | Sequence[str]) -> float:
    """SQuAD v1.1 exact match (0.0 or 1.0), maximized over gold answers; see :func:`squad_scores`.

    Compares normalized tokens directly (no F1 is computed); same value as ``squad_scores(...)[0]``.

    Parameters
    ----------
    prediction : str
        Model answer.
    ground_truths : str or sequence of str
        One gold answer or several.

    Returns
    -------
    float
        1.0 if the prediction equals one gold answer after ``normalize_answer``, else 0.0.

    Raises
    ------
    ValueError
        No gold answer.

    References
    ----------
    Rajpurkar et al. (2016); ``evaluate-v1.1.py`` ``exact_match_score``.

    Examples
    --------
    >>> exact_match_squad("the Eiffel Tower", ["Eiffel Tower", "Paris"])
    1.0
    """
    golds = gold_list(ground_truths)
    pred = squad_tokens(prediction)
    return 1.0 if any(squad_tokens(g) == pred for g in golds) else 0.0


def token_f1_squad(prediction: str, ground_truths: str | Sequence[str]) -> float:
    """SQuAD v1.1 token F1 in [0, 1], maximized over gold answers; see :func:`squad_scores`.

    Parameters
    ----------
    prediction : str
        Model answer.
    ground_truths : str or sequence of str
        One gold answer or several.

    Returns
    -------
    float
        In [0, 1]; 0.0 when no normalized token is shared (also when both sides normalize to
        nothing: the official script's quirk).

    Raises
    ------
    ValueError
        No gold answer.

    References
    ----------
    Rajpurkar et al. (2016); ``evaluate-v1.1.py`` ``f1_score``.

    Examples
    --------
    >>> round(token_f1_squad("Eiffel Tower in Paris", "the Eiffel Tower"), 4)  # P = 2/4, R = 2/2
    0.6667
    """
    return squad_scores(prediction, ground_truths)[1]


def squad_corpus(predictions: Iterable[str], ground_truths: Iterable[str | Sequence[str]]) -> tuple[float, float]:
    """Mean exact match and mean token F1 over paired predictions (fractions in [0, 1]).

    Parameters
    ----------
    predictions : iterable of str
        Model answers, one per question (N of them).
    ground_truths : iterable of (str or sequence of str)
        The gold answers of each question, in the same order (N of them).

    Returns
    -------
    (exact_match, token_f1) : tuple of float
        Means over the N questions (macro over questions), each in [0, 1]. The official script
        reports them multiplied by 100.

    Raises
    ------
    ValueError
        If the two iterables have different lengths or are empty, or a question has no gold answer.
    """
    preds = list(predictions)
    golds = list(ground_truths)
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predictions for {len(golds)} gold entries")
    if not preds:
        raise ValueError("no pairs to score")
    em_sum = f1_sum = 0.0
    for p, g in zip(preds, golds):
        em, f1 = squad_scores(p, g)
        em_sum += em
        f1_sum += f1
    return em_sum / len(preds), f1_sum / len(preds)
