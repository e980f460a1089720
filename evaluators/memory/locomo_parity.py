"""LoCoMo's own QA score, reproducing the benchmark's published scoring code.

snap-research/LoCoMo ``task_eval/evaluation.py`` (``normalize_answer``, ``f1_score``,
``f1``, ``eval_question_answering``) scores each question by its category:

- 2 temporal, 3 open-domain, 4 single-hop: token F1 of the normalised, Porter-stemmed
  answer and prediction (for category 3 only the part of the answer before the first
  ``;`` is used);
- 1 multi-hop: prediction and answer are split on commas; each answer part takes its
  best F1 against any prediction part; the question's score is the mean over the
  answer parts;
- 5 adversarial: 1 when the prediction (lower-cased) contains "no information
  available" or "not mentioned", else 0 — the benchmark's unanswerable check.

Normalisation: commas removed, lower-cased, ASCII punctuation removed, the words
"a", "an", "the", "and" removed, whitespace collapsed.  Per-category and overall
values are means over questions (macro over questions), as ``evaluation_stats.py``
prints them.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from evaluators.memory.records import LOCOMO_CATEGORIES, EvalResult
from evaluators.metrics.overlap import f1_from_common
from evaluators.results import DictMixin, safe_div

SIGNATURE = ("locomo-parity:f1|norm=drop-commas+lower+strip-ascii-punct+drop(a,an,the,and)|"
             "tok=whitespace|stem=nltk.PorterStemmer|multi_hop=split(',')+mean(max)|open_domain=answer.split(';')[0]|"
             "adversarial=contains('no information available'|'not mentioned')")

_TYPE_TO_CATEGORY = {v: k for k, v in LOCOMO_CATEGORIES.items()}
_DROP_PUNCT = str.maketrans("", "", string.punctuation)  # str.translate: no list of every character
_SPACES = re.compile(r"\s+")  # the whitespace of str.split() (Py_UNICODE_ISSPACE)
_WORD = re.compile(r"\S+")
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer  # nltk is a core requirement; the stemmer needs no data download

    return PorterStemmer()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def normalize_answer(text: str) -> str:
    """LoCoMo's ``normalize_answer``: drop commas, lower-case, drop ASCII punctuation,
    drop "a", "an", "the", "and", collapse whitespace.

    Parameters
    ----------
    text : str
        An answer or a prediction (any value is turned into text first).

    Returns
    -------
    str
        Single-spaced, stripped.

    References
    ----------
    Maharana et al. (2024), "Evaluating Very Long-Term Conversational Memory of LLM Agents"
    (LoCoMo), ACL; snap-research/LoCoMo ``task_eval/evaluation.py`` ``normalize_answer``.

    Examples
    --------
    >>> normalize_answer("The cat, and a Dog!")
    'cat dog'
    """
    s = str(text).replace(",", "").lower().translate(_DROP_PUNCT)
    s = _ARTICLES.sub(" ", s)
    return _SPACES.sub(" ", s).strip()


def stemmed_tokens(text: str) -> list[str]:
    """Porter-stemmed tokens of the normalised text.

    Parameters
    ----------
    text : str
        An answer or a prediction.

    Returns
    -------
    list of str
        nltk ``PorterStemmer`` stems of the words of :func:`normalize_answer`, in order.

    References
    ----------
    Maharana et al. (2024), "Evaluating Very Long-Term Conversational Memory of LLM Agents"
    (LoCoMo), ACL; snap-research/LoCoMo ``task_eval/evaluation.py`` ``f1_score``.

    Examples
    --------
    >>> stemmed_tokens("The running dogs")
    ['run', 'dog']
    """
    return [_stem(w) for w in normalize_answer(text).split()]


def locomo_token_f1(prediction: str, answer: str) -> float:
    """LoCoMo's ``f1_score``: multiset token F1 of stemmed tokens, 0 when nothing is shared.

    Parameters
    ----------
    prediction, answer : str
        The system's answer and the gold answer.

    Returns
    -------
    float
        In [0, 1]; 0.0 when a side has no token (also both: LoCoMo's rule, unlike SQuAD v2's 1.0).

    References
    ----------
    Maharana et al. (2024), "Evaluating Very Long-Term Conversational Memory of LLM Agents"
    (LoCoMo), ACL; snap-research/LoCoMo ``task_eval/evaluation.py`` ``f1_score``.

    Examples
    --------
    >>> round(locomo_token_f1("she was running", "running"), 4)  # P = 1/3, R = 1/1
    0.5
    """
    pred = _stemmed_counts(prediction)
    gold = _stemmed_counts(answer)
    if not pred or not gold:  # LoCoMo gives 0 here, also when both are empty
        return 0.0
    return f1_from_common(sum((pred & gold).values()), pred.total(), gold.total())


#: Characters of an answer normalized at once by :func:`_stemmed_counts` (a longer one in pieces).
NORMALIZE_CHUNK_CHARS = 1 << 20


def _pieces(text: str, chars: int) -> list[str] | Iterator[str]:
    """``text`` cut before whitespace into pieces of about ``chars`` characters.

    Every step of :func:`normalize_answer` is local to a word (whitespace is neither cased nor
    case-ignorable for ``lower``'s final-sigma rule, and it is a non-word character for ``\b``),
    so the words of the normalized pieces are the words of the normalized text.
    """
    if len(text) <= chars:
        return [text]

    def cut() -> Iterator[str]:
        start = 0
        while start < len(text):
            space = _SPACES.search(text, start + chars)
            end = space.start() if space else len(text)
            yield text[start:end]
            start = end
    return cut()


def _stemmed_counts(text: str) -> Counter:
    """Counts of :func:`stemmed_tokens` (what :func:`~evaluators.metrics.overlap.overlap_f1` counts), read
    word by word and a long answer normalized piece by piece: never held as a list of its words, nor
    copied whole by each normalization step."""
    counts: Counter = Counter()
    for piece in _pieces(str(text), NORMALIZE_CHUNK_CHARS):
        counts.update(_stem(m.group()) for m in _WORD.finditer(normalize_answer(piece)))
    return counts


def locomo_multi_answer_f1(prediction: str, answer: str) -> float:
    """LoCoMo's ``f1`` for multi-hop: mean over comma-separated answer parts of the best F1
    against any comma-separated prediction part.

    Parameters
    ----------
    prediction, answer : str
        Both split on ``,`` (parts stripped).

    Returns
    -------
    float
        In [0, 1]: the mean over the answer parts of their best :func:`locomo_token_f1`.

    References
    ----------
    Maharana et al. (2024), "Evaluating Very Long-Term Conversational Memory of LLM Agents"
    (LoCoMo), ACL; snap-research/LoCoMo ``task_eval/evaluation.py`` ``f1``.

    Examples
    --------
    >>> locomo_multi_answer_f1("Paris, Rome", "Rome, Berlin")  # Rome 1.0, Berlin 0.0
    0.5
    """
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in answer.split(",")]
    return sum(max(locomo_token_f1(p, g) for p in preds) for g in golds) / len(golds)


def locomo_adversarial_correct(prediction: str) -> bool:
    """LoCoMo's adversarial check: the prediction says "no information available" or
    "not mentioned" (case-insensitive substring).

    Parameters
    ----------
    prediction : str
        The system's answer to an unanswerable (category 5) question.

    Returns
    -------
    bool
        True when the prediction declines in one of the two phrasings.

    References
    ----------
    Maharana et al. (2024), "Evaluating Very Long-Term Conversational Memory of LLM Agents"
    (LoCoMo), ACL; snap-research/LoCoMo ``task_eval/evaluation.py`` ``eval_question_answering``.
    """
    low = prediction.lower()
    return "no information available" in low or "not mentioned" in low


def locomo_category(result: EvalResult) -> int:
    """The LoCoMo category number of a result (``metadata["category"]`` or its type).

    Parameters
    ----------
    result : EvalResult
        A long-memory result from a LoCoMo question.

    Returns
    -------
    int
        1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.

    Raises
    ------
    ValueError
        When the type is not one of LoCoMo's five.
    """
    category = result.metadata.get("category")
    if category is not None and int(category) in LOCOMO_CATEGORIES:
        return int(category)
    if result.question_type in _TYPE_TO_CATEGORY:
        return _TYPE_TO_CATEGORY[result.question_type]
    raise ValueError(f"question {result.question_id!r}: type {result.question_type!r} is not a LoCoMo category")


def locomo_score(result: EvalResult) -> float:
    """The score LoCoMo's ``eval_question_answering`` gives one question (in [0, 1]).

    Parameters
    ----------
    result : EvalResult
        A result of a LoCoMo question (its category, prediction and ground truth are read).

    Returns
    -------
    float
        In [0, 1], by category as in the module docstring.

    Raises
    ------
    ValueError
        The result's type is not a LoCoMo category.

    References
    ----------
    Maharana et al. (2024), "Evaluating Very Long-Term Conversational Memory of LLM Agents"
    (LoCoMo), ACL; snap-research/LoCoMo ``task_eval/evaluation.py`` ``eval_question_answering``.
    """
    category = locomo_category(result)
    prediction, answer = result.prediction, result.ground_truth
    if category in (2, 3, 4):
        if category == 3:
            answer = answer.split(";")[0].strip()
        return locomo_token_f1(prediction, answer)
    if category == 1:
        return locomo_multi_answer_f1(prediction, answer)
    return 1.0 if locomo_adversarial_correct(prediction) else 0.0


@dataclass(frozen=True)
class CategoryScore(DictMixin):
    """Mean LoCoMo score of one category (``total / count``, macro over questions)."""

    category: int
    question_type: str
    count: int
    total: float
    mean: float | None


@dataclass(frozen=True)
class LocomoParityReport(DictMixin):
    """LoCoMo parity scores.

    Attributes
    ----------
    by_category : tuple of CategoryScore
        In the order the official ``evaluation_stats.py`` prints them (4, 1, 2, 3, 5);
        categories without questions are left out.
    overall : float or None
        Sum of the scores / number of questions (macro over questions).
    count : int
    per_question : dict
        ``question_id -> score``.
    skipped : dict
        ``question_id -> reason`` for results that are not LoCoMo questions.
    signature : str
    """

    by_category: tuple[CategoryScore, ...]
    overall: float | None
    count: int
    per_question: dict[str, float]
    skipped: dict[str, str]
    signature: str = SIGNATURE


def locomo_parity(results: Iterable[EvalResult]) -> LocomoParityReport:
    """Score LoCoMo results exactly as the benchmark's published code.

    Parameters
    ----------
    results : iterable of EvalResult
        LoCoMo questions (category in ``metadata`` or a LoCoMo type).

    Returns
    -------
    LocomoParityReport
        Results of other types are skipped with a reason, not scored 0.

    References
    ----------
    Maharana et al., ACL 2024; snap-research/LoCoMo ``task_eval/evaluation.py`` and
    ``task_eval/evaluation_stats.py``.
    """
    per_question: dict[str, float] = {}
    skipped: dict[str, str] = {}
    sums: dict[int, list[float]] = {}
    for r in results:
        try:
            category = locomo_category(r)
        except ValueError as exc:
            skipped[r.question_id] = str(exc)
            continue
        score = locomo_score(r)
        per_question[r.question_id] = score
        sums.setdefault(category, []).append(score)
    rows = tuple(
        CategoryScore(c, LOCOMO_CATEGORIES[c], len(sums[c]), sum(sums[c]), safe_div(sum(sums[c]), len(sums[c])))
        for c in (4, 1, 2, 3, 5) if c in sums
    )
    total = sum(per_question.values())
    return LocomoParityReport(by_category=rows, overall=safe_div(total, len(per_question)), count=len(per_question),
                              per_question=per_question, skipped=skipped)
