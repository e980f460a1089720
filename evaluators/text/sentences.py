"""Sentence splitting for Chinese, English and mixed text.

The splitter returns contiguous half-open character spans that cover the whole text
(whitespace after a sentence belongs to it), so sentence *starts* are the candidate
segment boundaries used by :mod:`evaluators.narrative.text_span`.

Rules
-----
- Chinese terminators ``。！？；…`` (and ``！？`` runs, ``……``), each possibly followed by
  closing quotes or brackets ``”’」』）】》"')]``, end a sentence.
- English ``.``, ``!``, ``?`` end a sentence when followed by whitespace (or the end of
  the text), optionally after closing quotes/brackets; a period after a common
  abbreviation (``Mr.``, ``Dr.``, ``e.g.`` ...), after an initial that stands beside
  another initial (``J. R. R. Tolkien``), or between digits (``3.5``) does not.
- A line break always ends a sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache

SIGNATURE = "sentences=zh(。！？；…)+en(.!?)+newline/v1"

_CLOSERS = "”’」』）】》\"')\\]"
_ZH_END = re.compile(r"(?:[。！？；]+|…+|\.{3,})[" + _CLOSERS + r"]*")
_EN_END = re.compile(r"[.!?]+[" + _CLOSERS + r"]*(?=\s|$)")
_NEWLINE = re.compile(r"\n+")
# Titles and Latin abbreviations only: words such as "no" or "etc" end sentences too often.
_ABBREVIATIONS = frozenset("mr mrs ms dr prof sr jr st mt vs e.g i.e cf fig vol pp".split())
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_INITIAL_BEFORE = re.compile(r"(?:^|\s)[A-Z]\.\s*$")
_INITIAL_AFTER = re.compile(r"\s+[A-Z]\.")


def _is_abbreviation(text: str, end_index: int) -> bool:
    """True when the period at ``end_index`` closes an abbreviation or an initial next to another."""
    m = _WORD_BEFORE.search(text, 0, end_index)
    if not m:
        return False
    word = m.group(1).rstrip(".").lower()
    if word in _ABBREVIATIONS:
        return True
    if len(word) == 1 and m.group(1)[0].isupper():  # "J. R. R. Tolkien", not "Plan A. Then"
        return bool(_INITIAL_AFTER.match(text, end_index + 1)
                    or _INITIAL_BEFORE.search(text, 0, m.start()))
    return False


@lru_cache(maxsize=512)
def sentence_starts(text: str) -> tuple[int, ...]:
    """Character offsets where sentences start; always begins with 0 for non-empty text.

    Parameters
    ----------
    text : str
        Chinese, English or mixed text.

    Returns
    -------
    tuple of int
        Strictly increasing offsets in ``[0, len(text))``; ``()`` for empty text.
    """
    if not text:
        return ()
    ends: set[int] = set()
    for m in _ZH_END.finditer(text):
        ends.add(m.end())
    for m in _EN_END.finditer(text):
        if text[m.start()] == "." and m.end() - m.start() == 1 and _is_abbreviation(text, m.start()):
            continue
        ends.add(m.end())
    for m in _NEWLINE.finditer(text):
        ends.add(m.end())
    # A sentence starts after the terminator and any whitespace that follows it.
    starts = {0}
    n = len(text)
    for e in ends:
        while e < n and text[e].isspace():
            e += 1
        if e < n:
            starts.add(e)
    return tuple(sorted(starts))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``[start, end)`` covering ``text`` contiguously.

    Parameters
    ----------
    text : str
        Chinese, English or mixed.

    Returns
    -------
    list of (int, int)
        Character offsets; consecutive spans share their boundary and the last ends at ``len(text)``
        (``[]`` for an empty text).

    >>> t = "牛郎很穷。老牛说：“去吧！”他去了。"
    >>> [t[s:e] for s, e in split_sentences(t)]
    ['牛郎很穷。', '老牛说：“去吧！”', '他去了。']
    >>> t = "Mr. Li met Dr. Wang. They talked! Then 3.5 hours passed."
    >>> [t[s:e] for s, e in split_sentences(t)]
    ['Mr. Li met Dr. Wang. ', 'They talked! ', 'Then 3.5 hours passed.']
    """
    starts = sentence_starts(text)
    if not starts:
        return []
    bounds = list(starts) + [len(text)]
    return [(bounds[i], bounds[i + 1]) for i in range(len(starts))]
