"""CMRC 2018 exact match and F1 (Chinese answers), as the official evaluation script.

The official script (``squad-style-data/cmrc2018_evaluate.py``, "v5 - special", Python 2,
Cui et al., 2019, https://github.com/ymcui/cmrc2018) defines:

``mixed_segmentation(text, rm_punc=True)``
    lowercase and strip the text, then walk it character by character: a character of
    the fixed symbol list ``SP_CHARS`` is dropped (``rm_punc``); a CJK character in
    ``[\\u4e00-\\u9fa5]`` is a token of its own; everything between such characters is
    collected and split into words by ``nltk.word_tokenize``.
``remove_punctuation(text)``
    lowercase, strip, drop the characters of ``SP_CHARS`` (whitespace stays).
F1
    from the *longest common contiguous run* of tokens (``find_lcs``, a longest common
    substring, not subsequence): ``P = lcs / len(pred)``, ``R = lcs / len(gold)``; 0 if
    nothing is shared; maximum over the gold answers.  "中国北京" vs "北京中国" gives 0.5.
EM
    1 if ``remove_punctuation`` of the prediction equals that of any gold answer.

Details kept on purpose, because they change numbers:

- Only the script's symbol list is removed.  ASCII ``. , ! ? ( ) " ' % $ & # @ ; < > [ ]``
  and full-width characters not in the list stay and become tokens (through NLTK).
  The list contains the two-character string ``"……"``, which a single character never
  equals, so ``…`` is *not* removed.
- Python 2 ``unicode.lower`` used simple case mappings: ``"İ"`` lowers to ``"i"`` and a
  final ``"Σ"`` to ``"σ"``; Python 3 differs for exactly these two, so they are mapped the
  Python 2 way here.
- ``nltk.word_tokenize`` first splits sentences with the Punkt model, which is data that
  NLTK downloads; EvalBoard downloads nothing, so the NLTK word tokenizer is applied to
  each non-Chinese run as one line (``word_tokenize(..., preserve_line=True)``).  This
  only differs when a non-Chinese run holds a sentence-ending period followed by more
  text (e.g. ``"end. Next"``: official ``end . Next`` vs here ``end. Next``).

Speed: runs of letters, digits and whitespace (the usual case) are split with
``str.split``, which is what the NLTK tokenizer does to them (contractions such as
``cannot`` and the other characters it treats specially go to NLTK itself); the longest
common run is found by a binary search on its length with substring tests instead of
the quadratic table.  Values are identical to the official algorithm (tests and
``bench/qa_em_f1.py`` compare them on the whole CMRC 2018 dev set).

Reference
---------
Y. Cui, T. Liu, W. Che, L. Xiao, Z. Chen, W. Ma, S. Wang, G. Hu. 2019. "A Span-Extraction
Dataset for Chinese Machine Reading Comprehension". EMNLP-IJCNLP 2019.
Official script ``cmrc2018_evaluate.py`` (ymcui/cmrc2018, squad-style-data/).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from evaluators.metrics.squad import gold_list
from evaluators.results import f1_score

#: The official script's symbol list, verbatim (``"……"`` is one two-character entry).
SP_CHARS: tuple[str, ...] = (
    "-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=",
    "，", "。", "：", "？", "！", "“", "”", "；", "’", "《", "》", "……", "·", "、",
    "「", "」", "（", "）", "－", "～", "『", "』",
)

#: Characters removed in practice (single-character entries of :data:`SP_CHARS`).
_REMOVED = "".join(c for c in SP_CHARS if len(c) == 1)
_REMOVE_RE = re.compile("[" + re.escape(_REMOVED) + "]")
_CJK = "\u4e00-\u9fa5"
_CJK_SPLIT = re.compile(f"([{_CJK}])")
_ALL_CJK = re.compile(f"[{_CJK}]*")
# With rm_punc=False, symbols of the list are tokens of their own like CJK characters.
_CJK_OR_SP_SPLIT = re.compile("([" + _CJK + re.escape(_REMOVED) + "])")

# Characters (and patterns) on which NLTK's word tokenizer does more than split on
# whitespace.  A run matching none of these is tokenized by ``str.split`` exactly.
_NLTK_SPECIAL = re.compile(
    r"[«“‘„`\"'»”’:;@#$%&\u2012-\u2015?!*\[\](){}<>\-]"   # quotes, punctuation, brackets, dashes
    r"|\.\.|\.\s*$"                                        # ellipsis, final period
    r"|,(?!\d)"                                             # comma not followed by a digit
)
# The MacIntyre contractions NLTK splits (those without an apostrophe).
_NLTK_CONTRACTIONS = re.compile(r"(?i)\b(?:cannot|gimme|gonna|gotta|lemme)\b|\bwanna(?=\s|$)")

_PY2_LOWER = {"\u0130": "i", "\u03a3": "\u03c3"}

#: Signature written next to every CMRC-scored number.
SIGNATURE = (
    "cmrc2018-official(lower+strip, script symbol list removed, CJK [\\u4e00-\\u9fa5] as single tokens, "
    "other runs by NLTK word tokenizer preserve_line; F1 from longest common contiguous token run; "
    "EM after symbol removal; max over golds)"
)


def _nltk_version() -> str:
    try:
        from importlib.metadata import version

        return version("nltk")
    except Exception:  # pragma: no cover - nltk is a runtime requirement
        return "unknown"


def signature() -> str:
    """:data:`SIGNATURE` with the NLTK version that tokenizes non-Chinese runs."""
    return f"{SIGNATURE}; nltk=={_nltk_version()}"


def py2_lower(text: str) -> str:
    """``unicode.lower`` of Python 2: simple case mapping (``İ`` -> ``i``, ``Σ`` -> ``σ`` always).

    The official ``cmrc2018_evaluate.py`` ran under Python 2; Python 3's ``str.lower`` maps these
    two letters differently (``İ`` -> ``i̇``, a final ``Σ`` -> ``ς``), which would change tokens.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        The lower-case text, one character for one character.

    Examples
    --------
    >>> py2_lower("ΟΔΟΣ"), "ΟΔΟΣ".lower()
    ('οδοσ', 'οδος')
    """
    if text.isascii():
        return text.lower()
    if "\u0130" in text or "\u03a3" in text:
        return "".join(_PY2_LOWER.get(ch) or ch.lower() for ch in text)
    return text.lower()


@lru_cache(maxsize=1)
def _nltk_tokenizer():
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


@lru_cache(maxsize=65536)
def _nltk_tokens(run: str) -> tuple[str, ...]:
    return tuple(_nltk_tokenizer().tokenize(run))


def word_tokenize_run(run: str) -> list[str]:
    """Split a non-Chinese run into words exactly as ``nltk.word_tokenize(run, preserve_line=True)``.

    Runs of letters, digits and whitespace take a ``str.split`` fast path; anything NLTK
    treats specially goes through NLTK's tokenizer (cached).

    Parameters
    ----------
    run : str
        A run of text holding no CJK character (the parts between them in ``mixed_segmentation``).

    Returns
    -------
    list of str
        NLTK's words (Treebank rules: contractions, quotes and punctuation split off).

    References
    ----------
    CMRC 2018 ``cmrc2018_evaluate.py`` ``mixed_segmentation`` (which calls ``nltk.word_tokenize``).
    """
    if _NLTK_SPECIAL.search(run) is None and _NLTK_CONTRACTIONS.search(run) is None:
        return run.split()
    return list(_nltk_tokens(run))


def _clean(text: str) -> str:
    """Lowercase (Python 2 rules), strip, drop the script's symbols: ``remove_punctuation``."""
    return _REMOVE_RE.sub("", py2_lower(text).strip())


def _segment_clean(s: str) -> list[str]:
    """``mixed_segmentation(rm_punc=True)`` of an already cleaned string."""
    if _ALL_CJK.fullmatch(s):
        return list(s)
    out: list[str] = []
    for i, part in enumerate(_CJK_SPLIT.split(s)):
        if i % 2:
            out.append(part)
        elif part:
            out.extend(word_tokenize_run(part))
    return out


def mixed_segmentation(text: str, rm_punc: bool = True) -> list[str]:
    """Tokens of CMRC 2018's ``mixed_segmentation``.

    Parameters
    ----------
    text : str
        Answer text (Chinese, English or mixed).
    rm_punc : bool
        Drop the characters of :data:`SP_CHARS` (the F1 setting).  With ``False`` they
        become single tokens.

    Returns
    -------
    list of str
        Each CJK character (``[\\u4e00-\\u9fa5]``) as a token, other runs split into words.

    Examples
    --------
    >>> mixed_segmentation("光荣和ω-force")
    ['光', '荣', '和', 'ωforce']
    """
    if rm_punc:
        return _segment_clean(_clean(text))
    out: list[str] = []
    for i, part in enumerate(_CJK_OR_SP_SPLIT.split(py2_lower(text).strip())):
        if i % 2:
            out.append(part)
        elif part:
            out.extend(word_tokenize_run(part))
    return out


def remove_punctuation(text: str) -> str:
    """CMRC 2018's ``remove_punctuation``: lowercase, strip, drop :data:`SP_CHARS` (whitespace stays).

    Parameters
    ----------
    text : str
        Answer text.

    Returns
    -------
    str
        Lower case (Python 2 rules, :func:`py2_lower`), stripped, without the characters of
        :data:`SP_CHARS`; what exact match compares.

    References
    ----------
    CMRC 2018 ``cmrc2018_evaluate.py`` ``remove_punctuation`` (Cui et al. 2019).
    """
    return _clean(text)


# One character per token: CJK characters and single-character words stand for themselves,
# longer words get a code point of the supplementary private use planes.  Equal tokens
# get equal characters, so token sequences compare as strings.  Texts that already hold
# characters of those planes take the exact list-based path instead.
_CODE_BASE = 0xF0000
_CODE_LIMIT = 0x10FFFE - _CODE_BASE
_CODES: dict[str, str] = {}
_PUA_PLANES = re.compile("[\U000F0000-\U0010FFFF]")


def _encode_clean(s: str) -> str | None:
    """The cleaned text's tokens as a string, one character each; ``None`` when not encodable."""
    if _ALL_CJK.fullmatch(s):
        return s
    if _PUA_PLANES.search(s):
        return None
    out: list[str] = []
    codes = _CODES
    for i, part in enumerate(_CJK_SPLIT.split(s)):
        if i % 2:
            out.append(part)
        elif part:
            for tok in word_tokenize_run(part):
                if len(tok) == 1:
                    out.append(tok)
                    continue
                code = codes.get(tok)
                if code is None:
                    if len(codes) >= _CODE_LIMIT:
                        return None
                    code = codes[tok] = chr(_CODE_BASE + len(codes))
                out.append(code)
    return "".join(out)


def _as_string(tokens: Sequence[str], codes: dict[str, str]) -> str:
    return "".join([codes.setdefault(t, chr(_CODE_BASE + len(codes))) for t in tokens])


def _longest_common_run(a: str, b: str) -> int:
    """Length of the longest common substring of two strings."""
    if len(a) > len(b):
        a, b = b, a
    if not a:
        return 0
    if a in b:
        return len(a)
    # Binary search on the length: a common run of length L implies one of L - 1.
    lo, hi = 0, len(a) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if any(a[i:i + mid] in b for i in range(len(a) - mid + 1)):
            lo = mid
        else:
            hi = mid - 1
    return lo


def longest_common_run(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> int:
    """Length of the longest common contiguous run of tokens (CMRC's ``find_lcs`` length).

    Parameters
    ----------
    tokens_a, tokens_b : sequence of str
        Token lists (order matters).

    Returns
    -------
    int
        ``0 <= n <= min(len(tokens_a), len(tokens_b))``.

    References
    ----------
    CMRC 2018 ``cmrc2018_evaluate.py`` ``find_lcs`` (Cui et al. 2019): despite its name, the longest
    common *substring* of the two token lists.
    """
    codes: dict[str, str] = {}
    return _longest_common_run(_as_string(tokens_a, codes), _as_string(tokens_b, codes))


def _f1(n_ans: int, n_pred: int, lcs: int) -> float:
    if lcs == 0:
        return 0.0
    return f1_score(lcs / n_pred, lcs / n_ans)


def _scores_exact_path(pred_clean: str, golds_clean: Sequence[str]) -> float:
    """F1 through token lists (texts holding private-use-plane characters)."""
    pred_segs = _segment_clean(pred_clean)
    best = 0.0
    for g in golds_clean:
        ans_segs = _segment_clean(g)
        if ans_segs and pred_segs:
            best = max(best, _f1(len(ans_segs), len(pred_segs), longest_common_run(ans_segs, pred_segs)))
    return best


def cmrc_scores(prediction: str, answers: str | Sequence[str]) -> tuple[float, float]:
    """CMRC 2018 exact match and F1 of one prediction, maximized over the gold answers.

    Parameters
    ----------
    prediction : str
        Model answer.
    answers : str or sequence of str
        One or several gold answers.

    Returns
    -------
    (exact_match, f1) : tuple of float
        ``exact_match`` is 0.0 or 1.0 and ``f1`` in [0, 1] (the official script reports
        both times 100).

    Raises
    ------
    ValueError
        If no gold answer is given.

    Examples
    --------
    >>> cmrc_scores("北京中国", ["中国北京"])   # common run 中国 (2 of 4 tokens each side)
    (0.0, 0.5)
    """
    golds = gold_list(answers)
    if len(_CODES) > _CODE_LIMIT // 2:
        _CODES.clear()
    pred_clean = _clean(prediction)
    golds_clean = list(dict.fromkeys(_clean(g) for g in golds))
    em = 1.0 if pred_clean in golds_clean else 0.0
    pred = _encode_clean(pred_clean)
    f1 = 0.0
    for g in golds_clean:
        ans = _encode_clean(g) if pred is not None else None
        if ans is None:
            return em, _scores_exact_path(pred_clean, golds_clean)
        if ans and pred:
            score = _f1(len(ans), len(pred), _longest_common_run(ans, pred))
            if score > f1:
                f1 = score
    return em, f1


def cmrc_f1(prediction: str, answers: str | Sequence[str]) -> float:
    """CMRC 2018 F1 in [0, 1]; see :func:`cmrc_scores`.

    Parameters
    ----------
    prediction : str
        Model answer.
    answers : str or sequence of str
        One or several gold answers.

    Returns
    -------
    float
        F1 of the longest common contiguous run of ``mixed_segmentation`` tokens, maximized over
        the answers, in [0, 1]; 0.0 when a side has no token.

    Raises
    ------
    ValueError
        No gold answer.

    References
    ----------
    Cui et al. (2019), "A Span-Extraction Dataset for Chinese Machine Reading Comprehension",
    EMNLP; official script ``cmrc2018_evaluate.py`` (``calc_f1_score`` over ``find_lcs``).
    """
    return cmrc_scores(prediction, answers)[1]


def cmrc_exact_match(prediction: str, answers: str | Sequence[str]) -> float:
    """CMRC 2018 exact match (0.0 or 1.0); see :func:`cmrc_scores`.

    Compares the cleaned strings directly (no tokenization, no F1); same value as
    ``cmrc_scores(...)[0]``.

    Parameters
    ----------
    prediction : str
        Model answer.
    answers : str or sequence of str
        One or several gold answers.

    Returns
    -------
    float
        1.0 if :func:`remove_punctuation` of the prediction equals that of one answer, else 0.0.

    Raises
    ------
    ValueError
        No gold answer.

    References
    ----------
    Cui et al. (2019); official script ``cmrc2018_evaluate.py`` (``calc_em_score``).

    Examples
    --------
    >>> cmrc_exact_match("北京。", ["北京", "中国北京"])
    1.0
    """
    golds = gold_list(answers)
    pred = _clean(prediction)
    return 1.0 if any(_clean(g) == pred for g in golds) else 0.0
