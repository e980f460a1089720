"""A display diff of two texts that reads right in Chinese and English: CJK characters are compared
one by one, other text word by word (a run of letters and digits, a run of spaces, or one other
character), so "is" -> "was" is one replaced word and 北京大学 -> 北京大字 one replaced character.

The output is plain data, ``difflib.SequenceMatcher`` opcodes over those pieces (autojunk off);
rendering, with HTML escaping, is ``components.textdiff``'s.  :func:`char_diff` is the plain
character-by-character diff (the persona replies' view).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from evaluators.text.tokenize import CJK_CLASS

_PIECE = re.compile(rf"[{CJK_CLASS}]|(?:(?![{CJK_CLASS}])\w)+|\s+|.", re.DOTALL)


def diff_pieces(text: str) -> list[str]:
    """The pieces :func:`mixed_diff` compares; ``"".join(diff_pieces(t)) == t``.

    Parameters
    ----------
    text : str
        ``None`` counts as ``""``.

    Returns
    -------
    list of str
        Each CJK character, each run of other word characters, each run of whitespace, and each
        other character, in order.

    Examples
    --------
    >>> diff_pieces("北京 is big!")
    ['北', '京', ' ', 'is', ' ', 'big', '!']
    """
    return _PIECE.findall(text or "")


def mixed_diff(expected: str, predicted: str) -> list[tuple[str, str, str]]:
    """Diff two texts, CJK by character and other text by word.

    Parameters
    ----------
    expected, predicted : str

    Returns
    -------
    list of (tag, expected_part, predicted_part)
        ``tag`` is ``"equal"``, ``"replace"``, ``"delete"`` or ``"insert"``; the expected parts
        concatenate to ``expected`` and the predicted parts to ``predicted``.

    Examples
    --------
    >>> mixed_diff("the capital is Paris", "the capital was Paris")
    [('equal', 'the capital ', 'the capital '), ('replace', 'is', 'was'), ('equal', ' Paris', ' Paris')]
    >>> mixed_diff("北京大学", "北京大字")
    [('equal', '北京大', '北京大'), ('replace', '学', '字')]
    """
    a, b = diff_pieces(expected), diff_pieces(predicted)
    sm = SequenceMatcher(None, a, b, autojunk=False)
    return [(tag, "".join(a[i1:i2]), "".join(b[j1:j2])) for tag, i1, i2, j1, j2 in sm.get_opcodes()]


def char_diff(expected: str, predicted: str) -> list[tuple[str, str, str]]:
    """Diff two texts character by character (``difflib.SequenceMatcher`` opcodes, autojunk off, so long
    texts are diffed character by character too).

    Parameters
    ----------
    expected, predicted : str

    Returns
    -------
    list of (tag, expected_part, predicted_part)
        As :func:`mixed_diff`: the expected parts concatenate to ``expected``, the predicted parts to
        ``predicted``.

    Examples
    --------
    >>> char_diff("再见。", "再见，妈妈！")
    [('equal', '再见', '再见'), ('replace', '。', '，妈妈！')]
    """
    sm = SequenceMatcher(None, expected or "", predicted or "", autojunk=False)
    return [(tag, expected[i1:i2], predicted[j1:j2]) for tag, i1, i2, j1, j2 in sm.get_opcodes()]
