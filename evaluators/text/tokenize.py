"""Tokenizers for Chinese, English and mixed text, each with a signature string.

Three tokenizers, all applied after the same normalization (``NORMALIZATION``: Unicode
NFKC, lower case):

``char`` (alias ``mixed``)
    Every CJK character (Han ideographs incl. extensions and compatibility forms, kana)
    is one token; any other run of letters/digits is one word token.  Punctuation,
    symbols and whitespace are dropped.  On ASCII English text this gives exactly the
    tokens of rouge-score's default tokenizer (lower case, split on ``[^a-z0-9]+``), and
    on Chinese text it gives the character tokens used by the CMRC2018/CLUE scripts.
``jieba``
    jieba's accurate mode with dictionary words only (``jieba.lcut(text, HMM=False)``, see
    :func:`jieba_tokens`) on the normalized text, punctuation/whitespace tokens dropped.
    English words come out as words.
``whitespace``
    ``str.split()`` on the normalized text, punctuation stripped from both ends of each
    word (English words; a Chinese sentence without spaces stays one token).

Tokenize once and reuse: :class:`TextView` holds a text and computes each tokenization
lazily, once; every metric of :mod:`evaluators.metrics` takes views, so scoring many
metrics of one pair never re-tokenizes (see :func:`evaluators.metrics.registry.score_pair`).

jieba is initialised from the dictionary it ships (no network); its log output is
silenced.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from itertools import islice
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterator, Sequence

#: Normalization applied before every tokenizer.
NORMALIZATION = "nfkc+lower"

#: CJK characters that are tokens on their own: CJK Unified Ideographs (and Extension A,
#: B-G), compatibility ideographs, the ideographic iteration mark, Hiragana and Katakana.
CJK_CLASS = (
    "\u3005\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002ffff\U00030000-\U0003134f"
)
_CHAR_TOKEN = re.compile(rf"[{CJK_CLASS}]|[^\W_{CJK_CLASS}]+")
_CJK_CHAR = re.compile(rf"[{CJK_CLASS}]")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_NO_WORD_CHAR = re.compile(r"[\W_]*")


def normalize(text: str) -> str:
    """NFKC then lower case (full-width letters and digits become ASCII).

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        The normalized text (same or shorter length is not guaranteed: NFKC may expand).
    """
    return unicodedata.normalize("NFKC", text).lower()


def is_punct_or_space(token: str) -> bool:
    """True if the token has no letter, digit or CJK character (only punctuation, symbols, spaces).

    Parameters
    ----------
    token : str

    Returns
    -------
    bool

    Examples
    --------
    >>> is_punct_or_space("，"), is_punct_or_space("北京"), is_punct_or_space("")
    (True, False, True)
    """
    return _NO_WORD_CHAR.fullmatch(token) is not None


def contains_cjk(text: str) -> bool:
    """True if the text contains at least one CJK character (see ``CJK_CLASS``).

    Parameters
    ----------
    text : str

    Returns
    -------
    bool
    """
    return _CJK_CHAR.search(text) is not None


def char_tokens(text: str) -> list[str]:
    """Mixed tokenizer: CJK characters as tokens, other letter/digit runs as words.

    Parameters
    ----------
    text : str
        Raw text (normalized here).

    Returns
    -------
    list of str
        Tokens in order; punctuation, symbols and whitespace dropped.

    Examples
    --------
    >>> char_tokens("我喜欢 Peppa Pig！3个")
    ['我', '喜', '欢', 'peppa', 'pig', '3', '个']
    """
    return _CHAR_TOKEN.findall(normalize(text))


_JIEBA = None


def _jieba():
    """Import and initialise jieba once, quietly, from its shipped dictionary."""
    global _JIEBA
    if _JIEBA is None:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        _JIEBA = jieba
    return _JIEBA


def jieba_version() -> str:
    """Installed jieba version (``"missing"`` if not installed)."""
    try:
        from importlib.metadata import version

        return version("jieba")
    except Exception:  # pragma: no cover - jieba is a core requirement
        return "missing"


def jieba_dictionary_sha256() -> str:
    """SHA-256 of the dictionary jieba ships (``jieba/dict.txt``), found without importing jieba; cached."""
    global _JIEBA_DICT_SHA
    if _JIEBA_DICT_SHA is None:
        import hashlib
        import importlib.util
        import os

        spec = importlib.util.find_spec("jieba")
        path = os.path.join(os.path.dirname(spec.origin), "dict.txt") if spec and spec.origin else None
        try:
            with open(path, "rb") as fh:  # type: ignore[arg-type]
                _JIEBA_DICT_SHA = hashlib.sha256(fh.read()).hexdigest()
        except (OSError, TypeError):  # pragma: no cover - jieba is a core requirement
            _JIEBA_DICT_SHA = "missing"
    return _JIEBA_DICT_SHA


_JIEBA_DICT_SHA: str | None = None


def jieba_raw(text: str) -> list[str]:
    """jieba accurate mode on the text as given, every token kept (punctuation too).

    This is what the earlier persona-dialogue script used for keyword similarity
    (``set(jieba.cut(text))``), so it is kept separate from :func:`jieba_tokens`.

    Parameters
    ----------
    text : str
        Raw text (not normalized).

    Returns
    -------
    list of str
        jieba's tokens in order, HMM on, whitespace and punctuation tokens included.
    """
    return _jieba().lcut(text)


def jieba_tokens(text: str) -> list[str]:
    """jieba words of the normalized text (dictionary words, HMM off), punctuation and space dropped.

    jieba's HMM new-word discovery is off: with it, a word the dictionary lacks (a name
    such as 佩奇) may be merged or split differently depending on its neighbours, which
    makes keyword sets of two texts disagree on the same word; without it, such words are
    always split the same way (into dictionary words or characters).  It also halves the
    cost.  The earlier script's keyword similarity (``difflib`` mode) keeps jieba's
    default, HMM on (:func:`jieba_raw`).

    Parameters
    ----------
    text : str
        Raw text (normalized here with ``NORMALIZATION``).

    Returns
    -------
    list of str
        Words in order (duplicates kept).
    """
    return [t for t in _jieba().lcut(normalize(text), HMM=False) if not is_punct_or_space(t)]


def whitespace_tokens(text: str) -> list[str]:
    """Whitespace-separated words of the normalized text, punctuation stripped at both ends.

    Parameters
    ----------
    text : str
        Raw text (normalized here with ``NORMALIZATION``).

    Returns
    -------
    list of str
        Words in order; a word made only of punctuation is dropped.

    Examples
    --------
    >>> whitespace_tokens("Hello, World! (test)")
    ['hello', 'world', 'test']
    """
    out = []
    for word in normalize(text).split():
        word = _EDGE_PUNCT.sub("", word)
        if word:
            out.append(word)
    return out


@dataclass(frozen=True)
class Tokenizer:
    """A named tokenizer and the signature string written beside every score.

    Attributes
    ----------
    name : str
        ``"char"``, ``"jieba"`` or ``"whitespace"``.
    signature : str
        Tokenizer, normalization, library version and (jieba) dictionary digests, e.g.
        ``"tok=jieba-0.42.1(accurate,hmm=off,dict=sha256:1a2b3c4d5e6f,user=none)|norm=nfkc+lower|punct=dropped|script=none"``
        (see :mod:`evaluators.text.provenance` for other jieba setups).
    func : callable
        ``str -> list[str]``.
    """

    name: str
    signature: str
    func: Callable[[str], list[str]]

    def __call__(self, text: str) -> list[str]:
        return self.func(text)


def _build_tokenizers() -> dict[str, Tokenizer]:
    return {
        "char": Tokenizer("char", f"tok=char(cjk-chars+words)|norm={NORMALIZATION}|punct=dropped|script=none",
                          char_tokens),
        "jieba": Tokenizer(
            "jieba", f"tok=jieba-{jieba_version()}(accurate,hmm=off,dict=sha256:{jieba_dictionary_sha256()[:12]},user=none)"
            f"|norm={NORMALIZATION}|punct=dropped|script=none", jieba_tokens
        ),
        "whitespace": Tokenizer("whitespace", f"tok=whitespace|norm={NORMALIZATION}|punct=stripped|script=none",
                                whitespace_tokens),
    }


TOKENIZERS: dict[str, Tokenizer] = _build_tokenizers()
TOKENIZERS["mixed"] = TOKENIZERS["char"]

#: jieba setups other than the default (HMM on, another dictionary, a user dictionary), registered by
#: :func:`evaluators.text.provenance.jieba_tokenizer` under names such as ``jieba[hmm]``.
JIEBA_SETUPS: dict[str, Tokenizer] = {}


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name`` (``char``/``mixed``, ``jieba``, ``whitespace``).

    Parameters
    ----------
    name : str
        A key of :data:`TOKENIZERS`, or a jieba setup registered in :data:`JIEBA_SETUPS`.

    Returns
    -------
    Tokenizer

    Raises
    ------
    KeyError
        Unknown name; the message lists the known names.
    """
    found = TOKENIZERS.get(name) or JIEBA_SETUPS.get(name)
    if found is None:
        raise KeyError(f"unknown tokenizer {name!r}; known: {', '.join(sorted(TOKENIZERS))}") from None
    return found


#: Token lists up to this length are matched by ``list.count`` (no Counter built); longer ones by Counters.
SMALL_MATCH_TOKENS = 32


def ngram_matches(a: Sequence[str], b: Sequence[str], max_n: int) -> list[int]:
    """Clipped n-gram matches of two token sequences for n = 1 .. ``max_n``.

    ``out[n - 1]`` is the sum over n-grams g of min(count of g in ``a``, count of g in ``b``):
    ROUGE-n's overlap, BLEU's clipped n-gram count (one reference) and, for n = 1, token F1's
    common count (Lin 2004; Papineni et al. 2002; SQuAD v1.1 ``f1_score``).

    Parameters
    ----------
    a, b : sequence of str
        Tokens, shape (len_a,) and (len_b,).
    max_n : int
        Highest order, >= 1.

    Returns
    -------
    list of int
        Length ``max_n``, each in [0, min(len_a, len_b)], non-increasing in n.

    Notes
    -----
    An order without a shared n-gram ends the count: every (n+1)-gram shared by both
    contains a shared n-gram, so the higher orders are 0.  Only n-grams the two sides share
    are counted; long sequences are never copied into lists of n-grams (the n-grams of the
    shorter side are counted, then those of the longer side that occur in it).
    """
    out = [0] * max_n
    if not a or not b:
        return out
    shared = set(a).intersection(b)
    if not shared:
        return out
    small = len(a) <= SMALL_MATCH_TOKENS and len(b) <= SMALL_MATCH_TOKENS
    if len(b) > len(a):
        a, b = b, a  # b is the shorter side
    if small:  # the shifted copies of both lists, made once for every order
        sa, sb = [a[i:] for i in range(max_n)], [b[i:] for i in range(max_n)]
    for n in range(1, max_n + 1):
        if len(b) < n:
            break
        if small:
            if n == 1:
                ga, gb, common = a, b, shared
            else:
                ga, gb = list(zip(*sa[:n])), list(zip(*sb[:n]))
                common = set(gb).intersection(ga)
            m = 0
            for g in common:
                x, y = ga.count(g), gb.count(g)
                m += x if x < y else y
        else:
            cb = Counter(zip(*[islice(b, i, None) for i in range(n)]))
            ca = Counter(filter(cb.__contains__, zip(*[islice(a, i, None) for i in range(n)])))
            m = sum(min(c, cb[g]) for g, c in ca.items())
        if not m:
            break
        out[n - 1] = m
    return out


_CUT = re.compile(rf"[\W_{CJK_CLASS}]")  # a character no word token runs across
#: Characters of normalized text tokenized at once by :func:`char_token_chunks`.
TOKEN_CHUNK_CHARS = 1 << 20


def char_token_chunks(normalized: str, chars: int = TOKEN_CHUNK_CHARS) -> Iterator[list[str]]:
    """The ``char`` tokens of an already normalized text, in lists of about ``chars`` characters' worth.

    Concatenated, the lists are ``_CHAR_TOKEN.findall(normalized)`` (the tokens of
    :func:`char_tokens`): each piece ends before a character that no token runs across (not a
    letter or digit of a word, or a CJK character, which is a token of its own), so no token is
    cut.  A long text is never held as one list of tokens (a 20 MB answer has 10 M of them).

    Parameters
    ----------
    normalized : str
        Text after :func:`normalize`.
    chars : int
        Characters per piece, >= 1 (a piece ends at the next character no token runs across).

    Yields
    ------
    list of str
        The tokens of one piece, in order.
    """
    start, n = 0, len(normalized)
    while start < n:
        end = start + chars
        if end < n:
            cut = _CUT.search(normalized, end)
            end = cut.start() if cut else n
        yield _CHAR_TOKEN.findall(normalized, start, end)
        start = end


class TextView:
    """A text with its tokenizations computed lazily, at most once each.

    Metrics receive views rather than strings so that scoring many metrics of one pair
    tokenizes each side once per tokenizer.

    Parameters
    ----------
    text : str
        The raw text (``None`` is treated as ``""``).
    """

    def __init__(self, text: str | None):
        self.text = "" if text is None else str(text)
        self._tokens: dict[str, list[str]] = {}
        self._ngrams: dict[tuple[str, int], Counter] = {}
        # keyed by the other side's text, not its id(): an id is reused once its view is freed
        self._matches: dict[tuple[str, str], list[int]] = {}

    def tokens(self, tokenizer: str = "char") -> list[str]:
        """Tokens of the text under ``tokenizer`` (cached on the view).

        Parameters
        ----------
        tokenizer : str
            A tokenizer name (:func:`get_tokenizer`).

        Returns
        -------
        list of str
            The cached list itself: do not change it.

        Raises
        ------
        KeyError
            Unknown tokenizer.
        """
        toks = self._tokens.get(tokenizer)
        if toks is None:
            toks = self._tokens[tokenizer] = get_tokenizer(tokenizer).func(self.text)
        return toks

    def ngrams(self, tokenizer: str, n: int) -> Counter:
        """Counts of the n-gram tuples of ``tokens(tokenizer)`` (cached; shared by ROUGE, BLEU, F1).

        Parameters
        ----------
        tokenizer : str
            Tokenizer name.
        n : int
            n-gram order (>= 1); unigrams are 1-tuples.

        Returns
        -------
        collections.Counter
            ``{(tok_1, ..., tok_n): count}``; empty when there are fewer than n tokens.
        """
        key = (tokenizer, n)
        counts = self._ngrams.get(key)
        if counts is None:
            toks = self.tokens(tokenizer)
            # islice, not toks[i:]: no copy of the token list per order (a long answer's list is large)
            counts = self._ngrams[key] = Counter(zip(*[islice(toks, i, None) for i in range(n)]))
        return counts

    def matches(self, other: "TextView", tokenizer: str, n: int) -> int:
        """Clipped n-gram matches with ``other``: sum over n-grams of min(count here, count there).

        This is ROUGE-n's overlap, BLEU's clipped n-gram count (one reference) and, for n = 1,
        token F1's common count; it is computed once per pair and order and cached here, keyed
        by ``other``'s text (the counts depend on nothing else), so a view freed and another
        built at the same address never gets the first one's counts.

        Parameters
        ----------
        other : TextView
            The other side.
        tokenizer : str
            A tokenizer name.
        n : int
            n-gram order, >= 1 (orders 1 to ``max(n, 4)`` are counted at once).

        Returns
        -------
        int
            >= 0.

        References
        ----------
        Lin (2004) (ROUGE-n overlap); Papineni et al. (2002) (clipped counts).
        """
        key = (other.text, tokenizer)
        found = self._matches.get(key)
        if found is None or len(found) < n:  # all orders up to n at once (:func:`ngram_matches`)
            found = self._matches[key] = ngram_matches(self.tokens(tokenizer), other.tokens(tokenizer), max(n, 4))
        return found[n - 1]

    @cached_property
    def normalized(self) -> str:
        """The text under ``NORMALIZATION``."""
        return normalize(self.text)

    @cached_property
    def jieba_raw(self) -> list[str]:
        """jieba tokens of the raw text, punctuation kept (legacy keyword similarity)."""
        return jieba_raw(self.text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"TextView({self.text!r})"
