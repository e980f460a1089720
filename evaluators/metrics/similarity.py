"""String similarity: fuzzy ratio, normalized edit similarity, keyword Jaccard.

fuzzy_ratio (default, rapidfuzz)
    ``rapidfuzz.fuzz.ratio(p, r) / 100`` on the normalized texts (NFKC, lower case):
    the normalized Indel similarity ``1 - indel(p, r) / (len(p) + len(r))``, i.e.
    ``2 * LCS / (len(p) + len(r))`` with LCS the longest common *subsequence* of
    characters.  It is symmetric.
fuzzy_ratio, mode ``"difflib"``
    ``difflib.SequenceMatcher(None, reference, prediction).ratio()`` on the raw texts,
    the earlier persona script's "fuzzy match".  SequenceMatcher computes ``2 * M / T``
    too, but M is the number of characters in the matching blocks found by the
    Ratcliff/Obershelp heuristic (longest contiguous block first, then recursively left
    and right of it), which can be smaller than the LCS; it is not symmetric (argument
    order matters), and for sequences of 200+ characters its "autojunk" rule ignores
    characters that make up more than 1% of the second sequence.  Hence
    difflib <= rapidfuzz on the same texts, with equality when the greedy blocks happen
    to form an LCS (always for short, simple cases).  The two modes also differ in
    normalization: difflib mode compares the raw texts.
edit_similarity
    ``1 - Levenshtein(p, r) / max(len(p), len(r))`` on the normalized texts
    (rapidfuzz ``Levenshtein.normalized_similarity``; unit costs for insert, delete,
    substitute).  Both empty: 1.0.
keyword_jaccard (default)
    Jaccard ``|K_p & K_r| / |K_p | K_r|`` of keyword sets: jieba words of the normalized
    text (English words come out as words), punctuation dropped, minus the stop words
    shipped in ``evaluators/text/data/stopwords_{zh,en}.txt``.  When either side has no
    keyword left (a reply made only of stop words, such as "我也是"), both sides use all
    their words instead; both still empty: 1.0.
keyword_jaccard, mode ``"difflib"``
    The earlier persona script: ``set(jieba.cut(text))`` of the raw texts (punctuation
    and stop words kept, only ``""`` removed), Jaccard; both empty 1.0, one empty 0.0.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources
from importlib.metadata import version as _pkg_version

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from evaluators.metrics.registry import PERSONA_SCRIPT, Metric, register
from evaluators.text.provenance import stopwords_sha256
from evaluators.text.tokenize import NORMALIZATION, TOKENIZERS, TextView, jieba_dictionary_sha256, jieba_version

RAPIDFUZZ_VERSION = _pkg_version("rapidfuzz")


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """The shipped Chinese and English stop words (lower case)."""
    words: set[str] = set()
    for name in ("stopwords_zh.txt", "stopwords_en.txt"):
        text = resources.files("evaluators.text").joinpath("data", name).read_text(encoding="utf-8")
        words.update(line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return frozenset(words)


def jaccard(a: set, b: set) -> float:
    """Jaccard similarity ``|a & b| / |a | b|``; 1.0 when both sets are empty.

    Parameters
    ----------
    a, b : set
        Any hashable items (keywords, words).

    Returns
    -------
    float
        In [0, 1]; 1.0 for two empty sets, 0.0 when exactly one is empty.

    References
    ----------
    Jaccard (1912), "The distribution of the flora in the alpine zone".

    Examples
    --------
    >>> jaccard({"猫", "狗"}, {"猫", "鱼"})  # 1 shared of 3 distinct
    0.3333333333333333
    """
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def fuzzy_ratio(prediction: TextView, reference: TextView) -> float:
    """rapidfuzz ratio / 100 of the normalized texts (see module notes).

    Parameters
    ----------
    prediction, reference : TextView
        The two texts (Chinese, English or mixed).

    Returns
    -------
    float
        ``2 * LCS / (len(p) + len(r))`` over characters of the normalized (NFKC, lower case) texts,
        in [0, 1]; symmetric. Two empty texts give 1.0.

    References
    ----------
    rapidfuzz ``fuzz.ratio`` (normalized Indel similarity), https://rapidfuzz.github.io/RapidFuzz/.
    """
    return fuzz.ratio(prediction.normalized, reference.normalized) / 100.0


def fuzzy_ratio_difflib(prediction: TextView, reference: TextView) -> float:
    """``SequenceMatcher(None, reference, prediction).ratio()`` on the raw texts.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts; the raw ``text`` is compared (no normalization). Not symmetric: the
        reference is SequenceMatcher's first sequence, as in the earlier script.

    Returns
    -------
    float
        ``2 * M / T`` in [0, 1], ``M`` the characters of the Ratcliff/Obershelp matching blocks;
        never above :func:`fuzzy_ratio` on the same texts (module notes).

    References
    ----------
    Python's ``difflib.SequenceMatcher.ratio`` (Ratcliff & Obershelp 1988, "Pattern matching: the
    Gestalt approach"); the earlier persona-dialogue script's "fuzzy match".
    """
    return SequenceMatcher(None, reference.text, prediction.text).ratio()


def edit_similarity(prediction: TextView, reference: TextView) -> float:
    """``1 - Levenshtein / max length`` of the normalized texts; both empty gives 1.0.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts (Chinese, English or mixed).

    Returns
    -------
    float
        In [0, 1], over characters of the normalized (NFKC, lower case) texts, unit costs.

    References
    ----------
    Levenshtein (1966), "Binary codes capable of correcting deletions, insertions and reversals";
    rapidfuzz ``Levenshtein.normalized_similarity``.

    Examples
    --------
    >>> from evaluators.text.tokenize import TextView
    >>> edit_similarity(TextView("猫在睡觉"), TextView("狗在睡觉"))  # 1 substitution / 4 characters
    0.75
    """
    return Levenshtein.normalized_similarity(prediction.normalized, reference.normalized)


def keywords(view: TextView) -> set[str]:
    """Keyword set of a text: jieba words minus the shipped stop words.

    Parameters
    ----------
    view : TextView
        The text; its ``jieba`` tokens (of the normalized text, punctuation dropped) are read.

    Returns
    -------
    set of str
        The words not in :func:`stopwords`; may be empty (a text of stop words only).
    """
    stop = stopwords()
    return {w for w in view.tokens("jieba") if w not in stop}


def keyword_jaccard(prediction: TextView, reference: TextView, tokenizer: str = "jieba") -> float:
    """Jaccard of keyword sets, falling back to all words when one side has none.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts.
    tokenizer : str
        Name of the jieba tokenizer in :data:`evaluators.text.tokenize.TOKENIZERS` (``"jieba"``, or
        one registered with a user dictionary by ``Metric.with_tokenizer``).

    Returns
    -------
    float
        :func:`jaccard` of the keyword sets (words minus :func:`stopwords`), in [0, 1]; when either
        side has no keyword left, of all the words of both sides; 1.0 when both have no word.

    References
    ----------
    Jaccard (1912); jieba (https://github.com/fxsjy/jieba) for the words.
    """
    stop = stopwords()
    wp, wr = prediction.tokens(tokenizer), reference.tokens(tokenizer)
    kp, kr = {w for w in wp if w not in stop}, {w for w in wr if w not in stop}
    if not kp or not kr:
        kp, kr = set(wp), set(wr)
    return jaccard(kp, kr)


#: Where ``keyword_jaccard`` comes from (the default and every jieba setup of it).
KEYWORD_JACCARD_SOURCE = ("Jaccard (1912), The distribution of the flora in the alpine zone; jieba words "
                          "(https://github.com/fxsjy/jieba) minus EvalBoard's stop words")


def _keyword_jaccard_metric(tok) -> Metric:
    """``keyword_jaccard`` over the words of jieba tokenizer ``tok`` (a user dictionary, HMM ...)."""
    return Metric(
        "keyword_jaccard", "Jaccard of keyword sets (jieba words minus shipped stop words)", (0.0, 1.0),
        f"{tok.signature}|stopwords=evalboard-zh+en v1 ({len(stopwords())} words, sha256:{stopwords_sha256()[:12]})"
        "|set Jaccard", fn=lambda p, r, _t=tok.name: keyword_jaccard(p, r, _t), with_tokenizer=_keyword_jaccard_metric,
        source=KEYWORD_JACCARD_SOURCE,
    )


def keyword_jaccard_difflib(prediction: TextView, reference: TextView) -> float:
    """The earlier script's keyword similarity: Jaccard of ``set(jieba.cut(raw text))``.

    Parameters
    ----------
    prediction, reference : TextView
        The two texts (raw, not normalized; punctuation and stop words kept).

    Returns
    -------
    float
        :func:`jaccard` of the two word sets (``""`` removed), in [0, 1].

    References
    ----------
    The persona-dialogue evaluation script EvalBoard replaced (its ``keyword_similarity``);
    registered as the ``difflib`` mode of ``keyword_jaccard``.
    """
    kp, kr = set(prediction.jieba_raw), set(reference.jieba_raw)
    kp.discard("")
    kr.discard("")
    return jaccard(kp, kr)


def _register_all() -> None:
    jieba_sig = TOKENIZERS["jieba"].signature
    register(Metric(
        "fuzzy_ratio", "rapidfuzz ratio: 2*LCS/(len p + len r) of characters (Indel similarity)", (0.0, 1.0),
        f"norm={NORMALIZATION}|rapidfuzz {RAPIDFUZZ_VERSION} fuzz.ratio/100", fn=fuzzy_ratio,
        source="rapidfuzz fuzz.ratio (normalized Indel similarity), https://rapidfuzz.github.io/RapidFuzz/",
    ))
    register(Metric(
        "fuzzy_ratio_difflib", "difflib SequenceMatcher(None, reference, prediction).ratio() (earlier persona script)",
        (0.0, 1.0), "norm=none|difflib.SequenceMatcher.ratio (Ratcliff/Obershelp, autojunk on)|mode=difflib",
        mode="difflib", variant_of="fuzzy_ratio", fn=fuzzy_ratio_difflib,
        source="Python difflib.SequenceMatcher.ratio (Ratcliff & Obershelp 1988, Pattern matching: the Gestalt "
        f"approach); {PERSONA_SCRIPT} (its fuzzy match)",
    ))
    register(Metric(
        "edit_similarity", "1 - Levenshtein distance / max length (characters)", (0.0, 1.0),
        f"norm={NORMALIZATION}|rapidfuzz {RAPIDFUZZ_VERSION} Levenshtein.normalized_similarity", fn=edit_similarity,
        source="Levenshtein (1966), Binary codes capable of correcting deletions, insertions and reversals; "
        "rapidfuzz Levenshtein.normalized_similarity",
    ))
    register(Metric(
        "keyword_jaccard", "Jaccard of keyword sets (jieba words minus shipped stop words)", (0.0, 1.0),
        f"{jieba_sig}|stopwords=evalboard-zh+en v1 ({len(stopwords())} words, sha256:{stopwords_sha256()[:12]})"
        "|set Jaccard", fn=keyword_jaccard, with_tokenizer=_keyword_jaccard_metric, source=KEYWORD_JACCARD_SOURCE,
    ))
    register(Metric(
        "keyword_jaccard_difflib", "Jaccard of set(jieba.cut(text)) on raw text (earlier persona script)", (0.0, 1.0),
        f"tok=jieba-{jieba_version()}(accurate,hmm,dict=sha256:{jieba_dictionary_sha256()[:12]})|norm=none|punct=kept|stopwords=none"
        "|mode=difflib",
        mode="difflib", variant_of="keyword_jaccard", fn=keyword_jaccard_difflib,
        source=f"{PERSONA_SCRIPT} (its keyword_similarity); Jaccard (1912); jieba https://github.com/fxsjy/jieba",
    ))


_register_all()
