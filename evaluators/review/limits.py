"""Input limits of the review database, checked before the database sees a value.

Every check raises one :class:`ValueError` that names the field (and, through ``where``, the
item or line), so SQLite and PostgreSQL answer the same: PostgreSQL cannot store a NUL or a lone
surrogate in text, and a name over its column's length would be a database error there but
silently kept by SQLite.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any

#: Longest session, annotator or adjudicator name (characters).
MAX_NAME = 256
#: Longest comment or adjudication note (characters).
MAX_COMMENT = 10_000
#: Longest guidelines text of a session (characters).
MAX_GUIDELINES = 100_000
#: Largest item payload (bytes of its canonical JSON) and its deepest nesting.
MAX_PAYLOAD_BYTES = 1_000_000
MAX_DEPTH = 32
#: Most items in one session.
MAX_ITEMS = 1_000_000
#: Most reviewers per item (a session's ``k``).
MAX_K = 100


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def check_text(value: Any, field: str, *, limit: int = MAX_COMMENT, where: str = "") -> str:
    """A free text (comment, note, guidelines): a string of at most ``limit`` characters, no NUL, no lone surrogate."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{_prefix(where)}{field} must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise ValueError(f"{_prefix(where)}{field} has {len(value):,} characters, over the limit of {limit:,}")
    at = value.find("\x00")
    if at >= 0:
        raise ValueError(f"{_prefix(where)}{field} contains a NUL character (U+0000) at character {at}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{_prefix(where)}{field} contains a lone surrogate at character {exc.start}") from None
    return value


def check_name(value: Any, field: str = "annotator", *, where: str = "") -> str:
    """A person's or a session's name: non-empty after trimming, at most :data:`MAX_NAME` characters,
    no control character; returns it trimmed."""
    if not isinstance(value, str):
        raise ValueError(f"{_prefix(where)}{field} must be a string, not {type(value).__name__}")
    name = value.strip()
    if not name:
        raise ValueError(f"{_prefix(where)}{field} is required (an empty name)")
    check_text(name, field, limit=MAX_NAME, where=where)
    bad = next((n for n, ch in enumerate(name) if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise ValueError(f"{_prefix(where)}{field} contains a control character (U+{ord(name[bad]):04X}) "
                         f"at character {bad}")
    return name


def check_k(value: Any) -> int:
    """A session's reviewers per item ``k``: an integer (not a bool) from 1 to :data:`MAX_K`; returned as is.

    Raises
    ------
    ValueError
        Anything else, with the one message every caller shows.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise ValueError(f"k (reviewers per item) must be an integer from 1 to {MAX_K}, not {value!r:.40}")
    return value


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a JSON value (iterative: a 10,000-deep value costs no recursion); stops past ``limit``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((child, d + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def canonical_payload(payload: Any, *, where: str = "") -> str:
    """The canonical JSON of an item payload (sorted keys, compact, UTF-8), checked.

    Raises
    ------
    ValueError
        Not an object, nested deeper than :data:`MAX_DEPTH`, over :data:`MAX_PAYLOAD_BYTES`, a
        lone surrogate, NaN or infinity, or a value JSON cannot hold.
    """
    if not isinstance(payload, Mapping):
        raise ValueError(f"{_prefix(where)}item must be a JSON object, not {type(payload).__name__}")
    if depth(payload) > MAX_DEPTH:
        raise ValueError(f"{_prefix(where)}item is nested deeper than {MAX_DEPTH} levels")
    try:
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValueError(f"{_prefix(where)}item contains a lone surrogate ({exc.reason})") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_prefix(where)}item is not plain JSON: {exc}") from None
    if size > MAX_PAYLOAD_BYTES:
        raise ValueError(f"{_prefix(where)}item is {size:,} bytes of JSON, over the limit of {MAX_PAYLOAD_BYTES:,}")
    return text
