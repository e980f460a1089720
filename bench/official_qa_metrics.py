"""Reference copies of the official QA metric functions, kept as close to the originals as possible.

Used only as the oracle in tests and as the baseline in ``bench/qa_em_f1.py``; EvalBoard's
own implementations live in ``evaluators/metrics/squad.py`` and ``evaluators/metrics/cmrc.py``.

SQuAD v1.1
    ``normalize_answer``, ``f1_score``, ``exact_match_score``,
    ``metric_max_over_ground_truths`` copied verbatim from the official
    ``evaluate-v1.1.py`` (Rajpurkar et al. 2016, https://rajpurkar.github.io/SQuAD-explorer/,
    CC BY-SA 4.0 dataset site; the script is distributed with it).

CMRC 2018
    ``mixed_segmentation``, ``remove_punctuation``, ``find_lcs``, ``calc_f1_score``,
    ``calc_em_score`` from ``squad-style-data/cmrc2018_evaluate.py`` ("v5 - special") of
    https://github.com/ymcui/cmrc2018 (CC BY-SA 4.0), ported from Python 2 with the fewest
    changes that keep its behaviour:

    - ``str(x).decode('utf-8').lower()`` (Python 2 ``unicode.lower``) -> :func:`_py2_lower`
      (Python 3's ``str.lower`` differs only for ``İ`` and a final ``Σ``);
    - ``ur'[\\u4e00-\\u9fa5]'`` -> ``r'[\\u4e00-\\u9fa5]'``;
    - ``nltk.word_tokenize(temp_str)`` -> ``nltk.word_tokenize(temp_str, preserve_line=True)``:
      the Punkt sentence model is downloadable data that is not installed (EvalBoard
      downloads nothing); everything else is the same NLTK word tokenizer.
"""

from __future__ import annotations

import re
import string
from collections import Counter

import nltk

# ----------------------------------------------------------------------------- SQuAD v1.1


def normalize_answer(s):
    """Lower text and remove punctuation, articles and extra whitespace."""

    def remove_articles(text):
        return re.sub(r'\b(a|an|the)\b', ' ', text)

    def white_space_fix(text):
        return ' '.join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def exact_match_score(prediction, ground_truth):
    return (normalize_answer(prediction) == normalize_answer(ground_truth))


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


def squad_pair(prediction, ground_truths):
    """(EM, F1) of one prediction as the official ``evaluate`` loop computes them."""
    return (metric_max_over_ground_truths(exact_match_score, prediction, ground_truths),
            metric_max_over_ground_truths(f1_score, prediction, ground_truths))


# ----------------------------------------------------------------------------- CMRC 2018


def _py2_lower(s):
    # Python 2 unicode.lower: simple case mapping.
    return ''.join({u'\u0130': u'i', u'\u03a3': u'\u03c3'}.get(ch, ch.lower()) for ch in s)


# split Chinese with English
def mixed_segmentation(in_str, rm_punc=False):
    in_str = _py2_lower(str(in_str)).strip()
    segs_out = []
    temp_str = ""
    sp_char = ['-', ':', '_', '*', '^', '/', '\\', '~', '`', '+', '=',
               '，', '。', '：', '？', '！', '“', '”', '；', '’', '《', '》', '……', '·', '、',
               '「', '」', '（', '）', '－', '～', '『', '』']
    for char in in_str:
        if rm_punc and char in sp_char:
            continue
        if re.search(r'[\u4e00-\u9fa5]', char) or char in sp_char:
            if temp_str != "":
                ss = nltk.word_tokenize(temp_str, preserve_line=True)
                segs_out.extend(ss)
                temp_str = ""
            segs_out.append(char)
        else:
            temp_str += char

    # handling last part
    if temp_str != "":
        ss = nltk.word_tokenize(temp_str, preserve_line=True)
        segs_out.extend(ss)

    return segs_out


# remove punctuation
def remove_punctuation(in_str):
    in_str = _py2_lower(str(in_str)).strip()
    sp_char = ['-', ':', '_', '*', '^', '/', '\\', '~', '`', '+', '=',
               '，', '。', '：', '？', '！', '“', '”', '；', '’', '《', '》', '……', '·', '、',
               '「', '」', '（', '）', '－', '～', '『', '』']
    out_segs = []
    for char in in_str:
        if char in sp_char:
            continue
        else:
            out_segs.append(char)
    return ''.join(out_segs)


# find longest common string
def find_lcs(s1, s2):
    m = [[0 for i in range(len(s2) + 1)] for j in range(len(s1) + 1)]
    mmax = 0
    p = 0
    for i in range(len(s1)):
        for j in range(len(s2)):
            if s1[i] == s2[j]:
                m[i + 1][j + 1] = m[i][j] + 1
                if m[i + 1][j + 1] > mmax:
                    mmax = m[i + 1][j + 1]
                    p = i + 1
    return s1[p - mmax:p], mmax


def calc_f1_score(answers, prediction):
    f1_scores = []
    for ans in answers:
        ans_segs = mixed_segmentation(ans, rm_punc=True)
        prediction_segs = mixed_segmentation(prediction, rm_punc=True)
        lcs, lcs_len = find_lcs(ans_segs, prediction_segs)
        if lcs_len == 0:
            f1_scores.append(0)
            continue
        precision = 1.0 * lcs_len / len(prediction_segs)
        recall = 1.0 * lcs_len / len(ans_segs)
        f1 = (2 * precision * recall) / (precision + recall)
        f1_scores.append(f1)
    return max(f1_scores)


def calc_em_score(answers, prediction):
    em = 0
    for ans in answers:
        ans_ = remove_punctuation(ans)
        prediction_ = remove_punctuation(prediction)
        if ans_ == prediction_:
            em = 1
            break
    return em


def cmrc_pair(prediction, answers):
    """(EM, F1) of one prediction as the official ``evaluate`` loop computes them (fractions, not x100)."""
    return calc_em_score(answers, prediction), calc_f1_score(answers, prediction)
