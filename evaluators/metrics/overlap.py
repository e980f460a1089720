"""Token-overlap metrics: exact match, token F1, ROUGE-1/2/L, BLEU-1/2/4, METEOR, corpus BLEU.

All per-pair metrics take :class:`~evaluators.text.tokenize.TextView` objects so that
the tokens are computed once per text.  Chinese is tokenized into characters (the
``char`` tokenizer keeps every CJK character and treats other letter/digit runs as
words), so no metric drops CJK text.

Definitions and sources
-----------------------
exact_match_normalized
    1.0 when the two texts are equal after NFKC, lower case and removal of all
    whitespace, punctuation and symbols, else 0.0 (SQuAD v1.1 ``evaluate-v1.1.py``
    normalizes case/punctuation/whitespace the same way; English articles are kept).
    Mode ``"difflib"``: ``prediction.strip() == reference.strip()``, the earlier
    persona-dialogue script's definition.
token_f1_char
    Harmonic mean of precision and recall of the multiset overlap of tokens (SQuAD v1.1
    ``f1_score``), on ``char`` tokens: Chinese characters, English words.
rouge1 / rouge2 / rougeL
    F-measure of rouge-score's ``_score_ngrams`` / ``_score_lcs`` (Lin 2004, "ROUGE: A
    Package for Automatic Evaluation of Summaries"), fed with our tokens instead of
    rouge-score's default tokenizer, which drops every non-``[a-z0-9]`` character (the
    LCS length comes from rapidfuzz's C implementation, same value).  On
    ASCII English the ``char`` tokens equal rouge-score's default tokens, so the scores
    equal ``RougeScorer([...]).score`` (no stemming).
bleu1 / bleu2 / bleu4
    Sentence BLEU (Papineni et al. 2002) with uniform weights over 1..n-grams, one
    reference, the closest-reference-length brevity penalty and smoothing method 1 of
    Chen & Cherry (2014) with epsilon 0.1, computed exactly as
    ``nltk.translate.bleu_score.sentence_bleu(..., smoothing_function=SmoothingFunction().method1)``
    (including nltk's 0.0 when no unigram matches).
meteor
    ``nltk.translate.meteor_score.single_meteor_score`` (Banerjee & Lavie 2005) on the
    ``char`` tokens; needs nltk's WordNet data, which is never downloaded at run time.
corpus BLEU
    :func:`corpus_bleu`: sacrebleu's ``BLEU`` with ``tokenize="zh"`` for Chinese and
    ``"13a"`` for English (Post 2018, "A Call for Clarity in Reporting BLEU Scores").
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple
from itertools import groupby, islice
from importlib.metadata import version as _pkg_version

from rapidfuzz.distance import LCSseq

from evaluators.metrics.registry import PERSONA_SCRIPT, Metric, register
from evaluators.results import DictMixin, f1_score
from evaluators.text.tokenize import (_CHAR_TOKEN, TOKENIZERS, TextView, char_token_chunks, contains_cjk, ngram_matches,
                                      normalize)

ROUGE_VERSION = _pkg_version("rouge-score")
NLTK_VERSION = _pkg_version("nltk")
SACREBLEU_VERSION = _pkg_version("sacrebleu")

#: Normalization of exact match (default mode).
EXACT_NORMALIZATION = "nfkc+lower+drop(whitespace,punctuation,symbols)"

_NON_WORD = re.compile(r"[\W_]+")

#: Smoothing epsilon of nltk's method 1.
BLEU_EPSILON = 0.1


def _char_sig() -> str:
    return TOKENIZERS["char"].signature


# --------------------------------------------------------------------------- exact / F1


#: Characters of normalized text handled by one ``re.sub`` in :func:`exact_key`.
_EXACT_CHUNK = 1 << 20


def exact_key(view: TextView) -> str:
    """Exact-match key: normalized text without whitespace, punctuation or symbols.

    A long text is cleaned in 1 Mi-character pieces (``re.sub`` keeps a list of every kept
    piece: 10 M of them for a 20 MB answer); ``[\\W_]+`` removes runs of single characters,
    so a run cut between two pieces is removed in both and the key is the same.

    Parameters
    ----------
    view : TextView
        The text; its ``normalized`` form (NFKC, lower case) is read.

    Returns
    -------
    str
        The normalized text without whitespace, punctuation, symbols or underscores; ``""`` for a
        text made only of those.
    """
    return exact_key_text(view.normalized)


def exact_key_text(text: str) -> str:
    """:func:`exact_key` of an already normalized text (``NORMALIZATION``).

    Parameters
    ----------
    text : str
        Text after :func:`~evaluators.text.tokenize.normalize`.

    Returns
    -------
    str
        ``text`` without whitespace, punctuation, symbols or underscores.
    """
    if len(text) <= _EXACT_CHUNK:
        return _NON_WORD.sub("", text)
    return "".join(_NON_WORD.sub("", text[i:i + _EXACT_CHUNK]) for i in range(0, len(text), _EXACT_CHUNK))


def exact_match_normalized(prediction: TextView, reference: TextView) -> float:
    """1.0 if the normalized texts are equal (see ``EXACT_NORMALIZATION``), else 0.0.

    Not SQuAD's exact match (:func:`evaluators.metrics.squad.exact_match_squad`): symbols and
    all whitespace are removed and English articles kept.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts (Chinese, English or mixed).

    Returns
    -------
    float
        1.0 or 0.0; two texts empty after normalization are equal (1.0).

    References
    ----------
    The normalization follows SQuAD v1.1 ``evaluate-v1.1.py`` ``normalize_answer`` (case,
    punctuation, whitespace) without its English article removal, with NFKC and symbols added.
    """
    return 1.0 if exact_key(prediction) == exact_key(reference) else 0.0


def exact_match_strip(prediction: TextView, reference: TextView) -> float:
    """The earlier persona script's exact match: ``prediction.strip() == reference.strip()``.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts; their raw ``text`` is compared (no normalization besides ``strip()``).

    Returns
    -------
    float
        1.0 or 0.0.

    References
    ----------
    The persona-dialogue evaluation script EvalBoard replaced (its ``exact_match``); registered as
    the ``difflib`` mode of ``exact_match_normalized``.
    """
    return 1.0 if prediction.text.strip() == reference.text.strip() else 0.0


def overlap_f1(pred_tokens: list[str], ref_tokens: list[str]) -> float:
    """SQuAD-style F1 of the multiset overlap of two token lists.

    Parameters
    ----------
    pred_tokens, ref_tokens : list of str
        Tokens of prediction and reference, shapes (n_pred,) and (n_ref,); order does not matter.

    Returns
    -------
    float
        In [0, 1].  Both lists empty: 1.0; exactly one empty: 0.0 (as SQuAD v2's
        ``compute_f1``).

    Notes
    -----
    common = sum over tokens of min(count_pred, count_ref); P = common / len(pred),
    R = common / len(ref), F1 = 2PR / (P + R).

    References
    ----------
    Rajpurkar et al. (2016), SQuAD ``evaluate-v1.1.py`` ``f1_score`` (the formula); SQuAD v2.0's
    ``evaluate-v2.0.py`` ``compute_f1`` (the empty-side rule).
    """
    common = sum((Counter(pred_tokens) & Counter(ref_tokens)).values()) if pred_tokens and ref_tokens else 0
    return f1_from_common(common, len(pred_tokens), len(ref_tokens))


def f1_from_common(common: int, n_pred: int, n_ref: int) -> float:
    """:func:`overlap_f1` from the overlap count and the two lengths (the empty-side rule included).

    Parameters
    ----------
    common : int
        Tokens shared by the two sides, counted as a multiset intersection (>= 0).
    n_pred, n_ref : int
        Token counts of the prediction and the reference.

    Returns
    -------
    float
        In [0, 1]: 1.0 when both sides are empty, 0.0 when one is, else the harmonic mean of
        ``common / n_pred`` and ``common / n_ref`` (SQuAD v1.1's F1, Rajpurkar et al. 2016).
    """
    if not n_pred or not n_ref:
        return 1.0 if not n_pred and not n_ref else 0.0
    if common == 0:
        return 0.0
    return f1_score(common / n_pred, common / n_ref)


def token_f1_char(prediction: TextView, reference: TextView) -> float:
    """F1 of the multiset overlap of ``char`` tokens (CJK characters, other words); see :func:`overlap_f1`.

    The SQuAD v1.1 ``f1_score`` formula on the shared ``char`` tokenizer's tokens (unigram counts
    shared with ROUGE-1 and BLEU), not SQuAD's normalization
    (:func:`evaluators.metrics.squad.token_f1_squad`).

    Parameters
    ----------
    prediction, reference : TextView
        The two texts; their ``char`` tokens (NFKC, lower case, punctuation dropped) are compared.

    Returns
    -------
    float
        In [0, 1]; 1.0 when both sides have no token, 0.0 when exactly one has none.

    References
    ----------
    Rajpurkar et al. (2016), SQuAD v1.1 ``evaluate-v1.1.py`` ``f1_score``.

    Examples
    --------
    >>> from evaluators.text.tokenize import TextView
    >>> round(token_f1_char(TextView("北京大学"), TextView("北京")), 4)  # P = 2/4, R = 2/2
    0.6667
    """
    p, r = prediction.tokens("char"), reference.tokens("char")
    common = prediction.matches(reference, "char", 1) if p and r else 0
    return f1_from_common(common, len(p), len(r))


# --------------------------------------------------------------------------- ROUGE


def _both_empty(p: list[str], r: list[str]) -> bool:
    return not p and not r


def rouge_n(prediction: TextView, reference: TextView, n: int, tokenizer: str = "char") -> float:
    """ROUGE-n F-measure, as rouge-score's ``_score_ngrams`` on our tokens.

    overlap = clipped n-gram matches; P = overlap / max(1, pred n-grams), R = overlap /
    max(1, ref n-grams), F = rouge-score's ``scoring.fmeasure(P, R)``, i.e. 2PR / (P + R)
    and 0 when P + R = 0 (:func:`evaluators.results.f1_score`, same arithmetic).  Both texts
    without tokens score 1.0 (identical); one side empty gives 0.0.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts.
    n : int
        The n-gram order, >= 1 (1 and 2 are registered as ``rouge1`` and ``rouge2``).
    tokenizer : str
        A name of :data:`evaluators.text.tokenize.TOKENIZERS`; ``"char"`` (CJK by character,
        other text by word) by default.

    Returns
    -------
    float
        In [0, 1].

    References
    ----------
    Lin (2004), "ROUGE: A Package for Automatic Evaluation of Summaries"; rouge-score's
    ``rouge_scorer._score_ngrams`` (Google Research), tested against ``RougeScorer``.
    """
    p, r = prediction.tokens(tokenizer), reference.tokens(tokenizer)
    if _both_empty(p, r):
        return 1.0
    return rouge_n_from_counts(prediction.matches(reference, tokenizer, n), len(p), len(r), n)


def rouge_n_from_counts(overlap: int, n_pred: int, n_ref: int, n: int) -> float:
    """ROUGE-n F-measure from the clipped n-gram overlap and the two token counts (see :func:`rouge_n`).

    Parameters
    ----------
    overlap : int
        Clipped n-gram matches, >= 0.
    n_pred, n_ref : int
        Tokens of the prediction and of the reference, >= 0.
    n : int
        The n-gram order, >= 1.

    Returns
    -------
    float
        In [0, 1]; 1.0 when both counts are 0 (identical empty texts).

    References
    ----------
    Lin (2004), "ROUGE: A Package for Automatic Evaluation of Summaries"; rouge-score's ``_score_ngrams``.
    """
    if not n_pred and not n_ref:
        return 1.0
    return f1_score(overlap / max(n_pred - n + 1, 1), overlap / max(n_ref - n + 1, 1))


def rouge_l(prediction: TextView, reference: TextView, tokenizer: str = "char") -> float:
    """ROUGE-L F-measure (longest common subsequence of tokens).

    rouge-score's ``_score_lcs`` definition (P = LCS / len(pred), R = LCS / len(ref),
    F = rouge-score's ``fmeasure``), with the LCS length computed by rapidfuzz's
    ``LCSseq`` (C) instead of rouge-score's pure-Python table; the values are identical
    (tested against ``RougeScorer``).

    Parameters
    ----------
    prediction, reference : TextView
        The two texts.
    tokenizer : str
        A name of :data:`evaluators.text.tokenize.TOKENIZERS` (``"char"`` by default).

    Returns
    -------
    float
        In [0, 1]; 1.0 when both sides have no token, 0.0 when exactly one has none.

    References
    ----------
    Lin (2004), "ROUGE: A Package for Automatic Evaluation of Summaries"; rouge-score's
    ``rouge_scorer._score_lcs``.
    """
    p, r = prediction.tokens(tokenizer), reference.tokens(tokenizer)
    return rouge_l_from_counts(lcs_length(p, r), len(p), len(r))


def lcs_length(p: list[str], r: list[str]) -> int:
    """Length of the longest common subsequence of two token lists (rapidfuzz ``LCSseq``).

    A side longer than :data:`LCS_REDUCE_AT` tokens is reduced first (:func:`lcs_reduced`, same length).

    Parameters
    ----------
    p, r : list of str
        Tokens, shape (len_p,) and (len_r,).

    Returns
    -------
    int
        In [0, min(len_p, len_r)]; 0 when one list is empty.
    """
    if not p or not r:
        return 0
    if len(p) > LCS_REDUCE_AT and len(p) > len(r):
        return LCSseq.similarity(r, lcs_reduced(p, r))
    if len(r) > LCS_REDUCE_AT:
        return LCSseq.similarity(lcs_reduced(r, p), p)
    return LCSseq.similarity(r, p)


def rouge_l_from_counts(lcs: int, n_pred: int, n_ref: int) -> float:
    """ROUGE-L F-measure from the LCS length and the two token counts (see :func:`rouge_l`).

    Parameters
    ----------
    lcs : int
        Length of the longest common token subsequence, in [0, min(n_pred, n_ref)].
    n_pred, n_ref : int
        Tokens of the prediction and of the reference, >= 0.

    Returns
    -------
    float
        In [0, 1]; 1.0 when both counts are 0, 0.0 when one of them is.

    References
    ----------
    Lin (2004); rouge-score's ``_score_lcs``.
    """
    if not n_pred or not n_ref:
        return 1.0 if not n_pred and not n_ref else 0.0
    return f1_score(lcs / n_pred, lcs / n_ref)


#: Token count above which the longer side is reduced before the LCS (:func:`lcs_reduced`).
LCS_REDUCE_AT = 100_000


def lcs_reduced(long: Iterable[str], short: list[str] | Counter) -> list[str]:
    """``long`` reduced without changing its longest common subsequence with ``short``.

    rapidfuzz's ``LCSseq`` keeps about 40 bytes per token of the longer side (400 MB for a
    10 M-token answer), so a long side is reduced first, by two steps that keep the LCS length:

    1. tokens that ``short`` does not contain are dropped (they can match nothing);
    2. each run of one token ``t`` is cut to ``short``'s count of ``t``: a common subsequence
       matches at most that many of the run (each match takes another position of ``t`` in
       ``short``), and the first ones of the run serve as well as any others.

    Parameters
    ----------
    long : iterable of str
        Tokens of the longer side, read once (a generator of pieces is fine).
    short : list of str or Counter
        Tokens of the shorter side, or their counts.

    Returns
    -------
    list of str
        A subsequence of ``long`` whose LCS length with ``short`` equals ``long``'s own.
    """
    counts = short if isinstance(short, Counter) else Counter(short)
    out: list[str] = []
    # runs are taken after the drop (a dropped token does not end a run); both steps run in C
    for tok, run in groupby(filter(counts.__contains__, long)):
        out.extend(islice(run, counts[tok]))
    return out


# --------------------------------------------------------------------------- BLEU


def _ngram_counts(tokens: list[str], n: int) -> Counter:
    return Counter(zip(*[tokens[i:] for i in range(n)]))


def bleu_from_matches(matches: list[int], hyp_len: int, ref_len: int) -> float:
    """Sentence BLEU from clipped n-gram matches (``matches[k]`` for the (k+1)-grams).

    The order and the uniform weights come from ``len(matches)``; see
    :func:`bleu_from_tokens` for the definition.

    Parameters
    ----------
    matches : list of int
        Clipped n-gram matches, shape (max_n,), each >= 0; at least one element.
    hyp_len, ref_len : int
        Hypothesis and reference lengths in tokens, >= 0.

    Returns
    -------
    float
        In [0, 1]; 0.0 when no unigram matches (nltk's rule), whatever the lengths.

    References
    ----------
    Papineni et al. (2002), "BLEU: a Method for Automatic Evaluation of Machine Translation";
    smoothing method 1 of Chen & Cherry (2014) with epsilon 0.1, as
    ``nltk.translate.bleu_score.sentence_bleu``.
    """
    max_n = len(matches)
    if matches[0] == 0:
        return 0.0
    weight = 1.0 / max_n
    logs = []
    for k, m in enumerate(matches):
        denominator = max(1, hyp_len - k)
        logs.append(weight * math.log(m / denominator if m else BLEU_EPSILON / denominator))
    if hyp_len > ref_len:
        bp = 1.0
    elif hyp_len == 0:
        bp = 0.0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(math.fsum(logs))


def bleu_from_tokens(pred_tokens: list[str], ref_tokens: list[str], max_n: int = 4) -> float:
    """Sentence BLEU with uniform weights and nltk's smoothing method 1.

    Parameters
    ----------
    pred_tokens, ref_tokens : list of str
        Hypothesis and (single) reference tokens, shapes (n_pred,) and (n_ref,), in text order.
    max_n : int
        Highest n-gram order (1, 2 or 4 for BLEU-1/2/4); weights are ``1/max_n`` each.

    Returns
    -------
    float
        In [0, 1]; equals ``nltk.translate.bleu_score.sentence_bleu([ref], pred,
        weights=(1/max_n,)*max_n, smoothing_function=SmoothingFunction().method1)``.

    Notes
    -----
    p_n = clipped matches / max(1, hypothesis n-grams); a p_n with 0 matches becomes
    0.1 / max(1, hypothesis n-grams) (method 1).  BP = 1 if c > r, 0 if c = 0, else
    exp(1 - r / c).  BLEU = BP * exp(sum_n w_n log p_n).  As in nltk, the score is 0
    when no unigram matches.
    """
    matches = []
    for n in range(1, max_n + 1):
        hyp, ref = _ngram_counts(pred_tokens, n), _ngram_counts(ref_tokens, n)
        matches.append(sum(min(c, ref[g]) for g, c in hyp.items()))
    return bleu_from_matches(matches, len(pred_tokens), len(ref_tokens))


def bleu(prediction: TextView, reference: TextView, max_n: int = 4, tokenizer: str = "char") -> float:
    """Sentence BLEU-``max_n`` of two views (see :func:`bleu_from_tokens`).

    Both texts without tokens score 1.0 (identical).

    Parameters
    ----------
    prediction, reference : TextView
        Hypothesis and its one reference.
    max_n : int
        Highest n-gram order, >= 1 (1, 2 and 4 are registered as ``bleu1``, ``bleu2``, ``bleu4``);
        uniform weights ``1 / max_n``.
    tokenizer : str
        A name of :data:`evaluators.text.tokenize.TOKENIZERS` (``"char"`` by default).

    Returns
    -------
    float
        In [0, 1].

    References
    ----------
    Papineni et al. (2002); smoothing method 1 of Chen & Cherry (2014), equal to nltk's
    ``sentence_bleu(..., smoothing_function=SmoothingFunction().method1)`` (tested).
    """
    p, r = prediction.tokens(tokenizer), reference.tokens(tokenizer)
    if _both_empty(p, r):
        return 1.0
    return bleu_from_matches([prediction.matches(reference, tokenizer, n) for n in range(1, max_n + 1)],
                             len(p), len(r))


def bleu_from_counts(matches: Sequence[int], n_pred: int, n_ref: int, max_n: int) -> float:
    """:func:`bleu` from the clipped matches of orders 1..``max_n`` (or more) and the two token counts.

    Parameters
    ----------
    matches : sequence of int
        Clipped n-gram matches, ``matches[k]`` for the (k+1)-grams; at least ``max_n`` of them.
    n_pred, n_ref : int
        Hypothesis and reference tokens, >= 0.
    max_n : int
        BLEU order (1, 2 or 4 for BLEU-1/2/4).

    Returns
    -------
    float
        In [0, 1]; 1.0 when both counts are 0 (identical empty texts); see :func:`bleu_from_matches`.

    References
    ----------
    Papineni et al. (2002); smoothing method 1 of Chen & Cherry (2014) as in nltk's ``sentence_bleu``.
    """
    if not n_pred and not n_ref:
        return 1.0
    return bleu_from_matches(list(matches[:max_n]), n_pred, n_ref)


# --------------------------------------------------------------------------- one pass per pair


class OverlapCounts(NamedTuple):
    """What every ``char``-token overlap metric of one pair is computed from (a tuple: hashable, cheap).

    Attributes
    ----------
    exact : bool
        The two :func:`exact_key` values are equal.
    n_pred, n_ref : int
        ``char`` tokens of the prediction and of the reference.
    matches : tuple of int
        Clipped n-gram matches for n = 1 .. ``len(matches)`` (:func:`~evaluators.text.tokenize.ngram_matches`).
    lcs : int or None
        Length of the longest common subsequence of the tokens (``None``: not asked for).
    """

    exact: bool
    n_pred: int
    n_ref: int
    matches: tuple[int, ...]
    lcs: int | None = None


#: Characters from which a text's tokens are read in pieces (:func:`overlap_counts`), never as one list.
LONG_TEXT_CHARS = 1 << 20


def overlap_counts(prediction: str | None, reference: str | None, max_n: int = 4, lcs: bool = True) -> OverlapCounts:
    """Normalize and tokenize each text once and count what the overlap metrics need.

    The registered metrics with a ``from_counts`` (:func:`exact_match_normalized`,
    :func:`token_f1_char`, ROUGE-1/2/L, BLEU-1/2/4) give the same values from these counts as
    from two :class:`~evaluators.text.tokenize.TextView` (the same tokens, counts and formulas).

    Parameters
    ----------
    prediction, reference : str or None
        Raw texts (``None`` counts as ``""``).
    max_n : int
        Highest n-gram order counted (>= 1).
    lcs : bool
        Also compute the LCS length (ROUGE-L).

    Returns
    -------
    OverlapCounts

    Notes
    -----
    A text longer than :data:`LONG_TEXT_CHARS` characters is tokenized in pieces
    (:func:`~evaluators.text.tokenize.char_token_chunks`) and only its n-grams that occur in the
    other text are counted, so its tokens are never held as one list (a 20 MB answer has 10 M
    tokens, 80 MB of list); the LCS of such a text is taken on :func:`lcs_reduced`.
    """
    pn, rn = normalize("" if prediction is None else str(prediction)), normalize("" if reference is None else
                                                                              str(reference))
    if len(pn) <= LONG_TEXT_CHARS and len(rn) <= LONG_TEXT_CHARS:
        p, r = _CHAR_TOKEN.findall(pn), _CHAR_TOKEN.findall(rn)
        if pn.isascii() and rn.isascii():  # the tokens are then exactly the characters exact_key keeps
            exact = "".join(p) == "".join(r)
        else:
            exact = exact_key_text(pn) == exact_key_text(rn)
        matches = ngram_matches(p, r, max_n)
        common = lcs_length(p, r) if lcs and matches[0] else 0
        return OverlapCounts(exact, len(p), len(r), tuple(matches), common if lcs else None)
    exact = exact_key_text(pn) == exact_key_text(rn)
    long_is_pred = len(pn) >= len(rn)
    long_text, short = (pn, rn) if long_is_pred else (rn, pn)
    del pn, rn
    short_tokens = [t for chunk in char_token_chunks(short) for t in chunk]
    n_long, matches = _streamed_matches(long_text, short_tokens, max_n)
    common = 0
    if lcs and matches[0]:
        reduced = lcs_reduced((t for chunk in char_token_chunks(long_text) for t in chunk), short_tokens)
        common = lcs_length(reduced, short_tokens)
    n_pred, n_ref = (n_long, len(short_tokens)) if long_is_pred else (len(short_tokens), n_long)
    return OverlapCounts(exact, n_pred, n_ref, tuple(matches), common if lcs else None)


def _streamed_matches(long_text: str, short: list[str], max_n: int) -> tuple[int, list[int]]:
    """Token count of ``long_text`` (normalized) and its clipped n-gram matches with the tokens ``short``,
    tokenized piece by piece: only the n-grams that occur in ``short`` are counted."""
    short_grams = [Counter(zip(*[islice(short, i, None) for i in range(n)])) for n in range(1, max_n + 1)]
    counts = [Counter() for _ in range(max_n)]
    total, tail = 0, []
    for chunk in char_token_chunks(long_text):
        total += len(chunk)
        window = tail + chunk
        for n in range(1, max_n + 1):
            grams = short_grams[n - 1]
            if grams:  # the n-grams ending in this piece (the first ones start in the tail)
                start = max(0, len(tail) - n + 1)
                counts[n - 1].update(filter(grams.__contains__,
                                            zip(*[islice(window, start + i, None) for i in range(n)])))
        tail = window[-(max_n - 1):] if max_n > 1 else []
    matches = []
    for n in range(max_n):
        m = sum(min(c, short_grams[n][g]) for g, c in counts[n].items())
        matches.append(m if not matches or matches[-1] else 0)
    return total, matches


# --------------------------------------------------------------------------- METEOR


def nltk_data_dirs() -> list[str]:
    """nltk's default data search path (``nltk.data.path`` on a UNIX-like system), without importing nltk.

    The same list, in the same order, as ``nltk/data.py`` builds: ``$NLTK_DATA`` entries,
    ``~/nltk_data``, then the prefix and system folders. Importing nltk to ask costs 1-3 s
    (it imports scipy.stats), which a page that only lists the available metrics should not pay.
    """
    dirs = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        dirs.append(os.path.expanduser("~/nltk_data"))
    if sys.platform.startswith("win"):  # pragma: no cover - nltk's own list there
        import nltk

        return list(nltk.data.path)
    dirs += [os.path.join(sys.prefix, "nltk_data"), os.path.join(sys.prefix, "share", "nltk_data"),
             os.path.join(sys.prefix, "lib", "nltk_data"), "/usr/share/nltk_data", "/usr/local/share/nltk_data",
             "/usr/lib/nltk_data", "/usr/local/lib/nltk_data"]
    return dirs


def wordnet_missing() -> str | None:
    """``None`` if nltk's WordNet data is installed, else the reason (no download is attempted).

    Where nltk is already imported its own ``nltk.data.find`` answers (it may have a path added
    at run time); otherwise, and while another thread is still importing nltk (a page's earlier
    run: its ``sys.modules`` entry has no ``data`` yet), the default data folders
    (:func:`nltk_data_dirs`) are looked at.
    """
    if importlib.util.find_spec("nltk") is None:  # pragma: no cover - nltk is a core requirement
        return "nltk is not installed"
    names = ("corpora/wordnet", "corpora/wordnet.zip")
    nltk = sys.modules.get("nltk")
    if nltk is not None and (getattr(nltk.__spec__, "_initializing", False) or not hasattr(nltk, "data")):
        nltk = None  # partly imported by another thread
    if nltk is not None:
        for name in names:
            try:
                nltk.data.find(name)
                return None
            except LookupError:
                continue
    elif any(os.path.exists(os.path.join(d, *name.split("/"))) for d in nltk_data_dirs() for name in names):
        return None
    return "nltk WordNet data not found (METEOR needs it; nothing is downloaded at run time)"


def meteor(prediction: TextView, reference: TextView) -> float:
    """METEOR (nltk ``single_meteor_score``) on ``char`` tokens (meant for English).

    Parameters
    ----------
    prediction, reference : TextView
        Hypothesis and its one reference.

    Returns
    -------
    float
        In [0, 1]; 1.0 when both sides have no token, 0.0 when exactly one has none.

    Raises
    ------
    LookupError
        nltk's WordNet data is missing (called directly; through the registry the metric raises
        :class:`~evaluators.metrics.registry.MetricUnavailable` first, see :func:`wordnet_missing`).

    References
    ----------
    Banerjee & Lavie (2005), "METEOR: An Automatic Metric for MT Evaluation with Improved
    Correlation with Human Judgments"; ``nltk.translate.meteor_score.single_meteor_score`` with
    its defaults (alpha 0.9, beta 3, gamma 0.5).
    """
    from nltk.translate.meteor_score import single_meteor_score

    p, r = prediction.tokens("char"), reference.tokens("char")
    if _both_empty(p, r):
        return 1.0
    if not p or not r:
        return 0.0
    return float(single_meteor_score(r, p))


# --------------------------------------------------------------------------- corpus BLEU


@dataclass(frozen=True)
class CorpusBleu(DictMixin):
    """Corpus BLEU from sacrebleu.

    Attributes
    ----------
    score : float or None
        BLEU in [0, 1] (sacrebleu's 0-100 divided by 100); ``None`` for an empty corpus.
    precisions : tuple of float
        n-gram precisions in [0, 1] for n = 1..4.
    brevity_penalty : float
    sys_len, ref_len : int
        Hypothesis and reference lengths in sacrebleu tokens.
    n_segments : int
        Number of pairs pooled (micro: counts are summed before the ratio).
    tokenize : str
        sacrebleu tokenizer used (``zh`` or ``13a``).
    signature : str
        sacrebleu's own signature string.
    """

    score: float | None
    precisions: tuple[float, ...]
    brevity_penalty: float
    sys_len: int
    ref_len: int
    n_segments: int
    tokenize: str
    signature: str
    aggregation: str = "micro (n-gram counts pooled over the corpus)"


def corpus_bleu(predictions: list[str], references: list[str], lang: str = "auto") -> CorpusBleu:
    """Corpus BLEU via sacrebleu (``tokenize="zh"`` for Chinese, ``"13a"`` for English).

    Parameters
    ----------
    predictions, references : list of str
        Shape (N,) each, the same length: one reference per prediction (segment).
    lang : {"auto", "zh", "en"}
        ``auto`` picks ``zh`` when any reference contains CJK characters.

    Returns
    -------
    CorpusBleu

    Raises
    ------
    ValueError
        Lists of different lengths.
    """
    from sacrebleu.metrics import BLEU

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if lang == "auto":
        lang = "zh" if any(contains_cjk(r) for r in references) else "en"
    tok = "zh" if lang == "zh" else "13a"
    metric = BLEU(tokenize=tok)
    if not predictions:
        return CorpusBleu(None, (), 0.0, 0, 0, 0, tok, f"sacrebleu {SACREBLEU_VERSION} tok:{tok}")
    res = metric.corpus_score(list(predictions), [list(references)])
    return CorpusBleu(
        score=res.score / 100.0, precisions=tuple(p / 100.0 for p in res.precisions), brevity_penalty=res.bp,
        sys_len=res.sys_len, ref_len=res.ref_len, n_segments=len(predictions), tokenize=tok,
        signature=str(metric.get_signature()),
    )


# --------------------------------------------------------------------------- registration


ROUGE_SOURCE = ("Lin (2004), ROUGE: A Package for Automatic Evaluation of Summaries; Google Research rouge-score "
                "(rouge_scorer)")
BLEU_SOURCE = ("Papineni et al. (2002), BLEU: a Method for Automatic Evaluation of Machine Translation; smoothing "
               "method 1 of Chen & Cherry (2014); nltk.translate.bleu_score.sentence_bleu")


def _register_all() -> None:
    char = _char_sig()
    rouge_sig = f"{char}|rouge-score {ROUGE_VERSION}|no stemming|F-measure"
    bleu_sig = f"{char}|nltk-compatible sentence BLEU (nltk {NLTK_VERSION})|smoothing=method1(eps=0.1)|1 reference"
    register(Metric(
        "exact_match_normalized", "1 if equal after NFKC, lowercasing and removing whitespace, punctuation and "
        "symbols, else 0 (stricter on symbols than SQuAD; the official definitions are exact_match_squad and "
        "exact_match_cmrc)", (0.0, 1.0),
        f"norm={EXACT_NORMALIZATION}", fn=exact_match_normalized,
        source="SQuAD v1.1 evaluate-v1.1.py normalize_answer (Rajpurkar et al. 2016) without article removal, "
        "with NFKC and symbols added (EvalBoard)",
        counter=overlap_counts, from_counts=lambda c: 1.0 if c.exact else 0.0,
    ))
    register(Metric(
        "exact_match_strip", "1 if prediction.strip() == reference.strip() (earlier persona script)", (0.0, 1.0),
        "norm=strip() only|mode=difflib", mode="difflib", variant_of="exact_match_normalized", fn=exact_match_strip,
        source=PERSONA_SCRIPT + " (its exact_match)",
    ))
    register(Metric(
        "token_f1_char", "F1 of the multiset overlap of the shared char tokenizer's tokens (CJK by character, "
        "other text by word); the SQuAD f1_score formula on our tokens, not SQuAD's normalization "
        "(the official definitions are token_f1_squad and token_f1_cmrc)", (0.0, 1.0),
        f"{char}|multiset overlap", fn=token_f1_char,
        source="SQuAD v1.1 evaluate-v1.1.py f1_score (Rajpurkar et al. 2016) on EvalBoard's char tokens",
        counter=overlap_counts,
        from_counts=lambda c: f1_from_common(c.matches[0] if c.n_pred and c.n_ref else 0, c.n_pred, c.n_ref),
        counts_order=1,
    ))
    for n in (1, 2):
        register(Metric(
            f"rouge{n}", f"ROUGE-{n} F1 (Lin 2004) via rouge-score with a Chinese-aware tokenizer", (0.0, 1.0),
            rouge_sig, fn=lambda p, r, n=n: rouge_n(p, r, n), source=ROUGE_SOURCE,
            counter=overlap_counts,
            from_counts=lambda c, n=n: rouge_n_from_counts(c.matches[n - 1], c.n_pred, c.n_ref, n), counts_order=n,
        ))
    register(Metric(
        "rougeL", "ROUGE-L F1 (longest common subsequence; Lin 2004) via rouge-score", (0.0, 1.0),
        rouge_sig, fn=rouge_l, counter=overlap_counts, source=ROUGE_SOURCE,
        from_counts=lambda c: rouge_l_from_counts(c.lcs, c.n_pred, c.n_ref), counts_lcs=True,
    ))
    for n in (1, 2, 4):
        register(Metric(
            f"bleu{n}", f"Sentence BLEU-{n} (Papineni 2002), method-1 smoothing (Chen & Cherry 2014), nltk-compatible",
            (0.0, 1.0), f"{bleu_sig}|max_n={n}", fn=lambda p, r, n=n: bleu(p, r, n), source=BLEU_SOURCE,
            counter=overlap_counts,
            from_counts=lambda c, n=n: bleu_from_counts(c.matches, c.n_pred, c.n_ref, n), counts_order=n,
        ))
    register(Metric(
        "meteor", "METEOR (Banerjee & Lavie 2005) via nltk, English-oriented; needs WordNet data", (0.0, 1.0),
        f"{char}|nltk {NLTK_VERSION} single_meteor_score(alpha=0.9,beta=3,gamma=0.5)",
        install_hint="python -m nltk.downloader wordnet omw-1.4  (run once, with network, outside EvalBoard)",
        fn=meteor, check=wordnet_missing,
        source="Banerjee & Lavie (2005), METEOR: An Automatic Metric for MT Evaluation with Improved Correlation "
        "with Human Judgments; nltk.translate.meteor_score.single_meteor_score",
    ))


_register_all()
