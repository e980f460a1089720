"""Text normalization for names and labels (Chinese and English)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: Alias separators found in real annotations: ASCII and full-width semicolons and commas,
#: and the Chinese enumeration comma.
ALIAS_SEPARATORS = re.compile(r"[;；,，、]")

_NON_KEY = re.compile(r"[\W_]+", re.UNICODE)


def nfkc(text: str) -> str:
    """Unicode NFKC normalization (full-width ASCII to half-width, compatibility forms folded).

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> nfkc("ＡＢＣ１２３，")
    'ABC123,'
    """
    return unicodedata.normalize("NFKC", text)


@lru_cache(maxsize=65536)
def label_key(label: str) -> str:
    """Comparison key of a label: NFKC, case-folded, every non-alphanumeric run removed.

    ``"Family & Kinship"``, ``"family_kinship"`` and ``"FAMILY-KINSHIP"`` share the key
    ``"familykinship"``; CJK characters are kept (``"家庭与亲缘"``).  An empty or
    punctuation-only label gives ``""``.

    Parameters
    ----------
    label : str

    Returns
    -------
    str

    Examples
    --------
    >>> label_key("Family & Kinship"), label_key("家庭与亲缘")
    ('familykinship', '家庭与亲缘')
    """
    return _NON_KEY.sub("", nfkc(label).casefold())


@lru_cache(maxsize=65536)
def name_key(name: str) -> str:
    """Comparison key of a character name: NFKC, case-folded, whitespace and punctuation removed.

    ``"Chen Xiang"`` and ``"chen  xiang"`` match; ``"孙悟空"`` stays ``"孙悟空"``; the
    middle dot of transliterated names (``"爱丽丝·梦游"``) is ignored.  If nothing is
    left (a name made only of punctuation) the stripped, case-folded name is used.

    Parameters
    ----------
    name : str

    Returns
    -------
    str

    Examples
    --------
    >>> name_key("Chen  Xiang"), name_key("爱丽丝·梦游")
    ('chenxiang', '爱丽丝梦游')
    """
    folded = nfkc(name).casefold()
    key = "".join(ch for ch in folded if not (ch.isspace() or unicodedata.category(ch)[0] in "PS"))
    return key or folded.strip()


def split_aliases(value: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Split an alias field into names.

    Accepts a string separated by ``;``, ``；``, ``,``, ``，`` or ``、`` (with any
    spaces), or a list of such strings.  Empty parts are dropped and order is kept.

    Parameters
    ----------
    value : str, list or tuple of str, or None

    Returns
    -------
    list of str
        Stripped names; ``[]`` for ``None``.

    >>> split_aliases("孩子; 一对儿女;儿女们")
    ['孩子', '一对儿女', '儿女们']
    >>> split_aliases("梁; 山伯; ")
    ['梁', '山伯']
    """
    if value is None:
        return []
    parts: list[str] = []
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str):
            continue
        for part in ALIAS_SEPARATORS.split(item):
            part = part.strip()
            if part:
                parts.append(part)
    return parts
