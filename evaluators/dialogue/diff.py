"""Character-level diff of an expected and a predicted reply, for display.

Uses ``difflib.SequenceMatcher`` opcodes (autojunk off, so long replies are diffed
character by character too).  The output is plain data; rendering (with HTML escaping)
is done by ``components.textdiff``.
"""

from __future__ import annotations

from difflib import SequenceMatcher


def char_diff(expected: str, predicted: str) -> list[tuple[str, str, str]]:
    """Diff two texts character by character.

    Parameters
    ----------
    expected, predicted : str

    Returns
    -------
    list of (tag, expected_part, predicted_part)
        ``tag`` is ``"equal"``, ``"replace"``, ``"delete"`` (only in expected) or
        ``"insert"`` (only in predicted); concatenating the expected parts gives
        ``expected`` and the predicted parts give ``predicted``.

    Examples
    --------
    >>> char_diff("再见。", "再见，妈妈！")
    [('equal', '再见', '再见'), ('replace', '。', '，妈妈！')]
    """
    sm = SequenceMatcher(None, expected or "", predicted or "", autojunk=False)
    return [(tag, expected[i1:i2], predicted[j1:j2]) for tag, i1, i2, j1, j2 in sm.get_opcodes()]
