"""The Review page's link (``/Review?session=3&item=1204&annotator=alice``) read as untrusted data.

A link is typed or pasted by anyone: each parameter is parsed strictly, and a bad one is dropped with a
one-line notice instead of reaching the database or raising (``"²".isdigit()`` is true in Python and
``int("²")`` raises; a 40-digit id overflows the database's 64-bit integer).

========== ===========================================================================================
parameter  accepted
========== ===========================================================================================
session    1 to :data:`MAX_ID_DIGITS` ASCII digits, value 1 .. 2**63 - 1 (a database id)
item       the same
annotator  a name as :func:`evaluators.review.limits.check_name` accepts it (trimmed, non-empty, at
           most :data:`~evaluators.review.limits.MAX_NAME` characters, no control characters)
========== ===========================================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from evaluators.review.limits import MAX_NAME, check_name

#: Longest id accepted: 2**63 - 1 has 19 digits.
MAX_ID_DIGITS = 19
_MAX_ID = 2 ** 63 - 1
_ASCII_DIGITS = re.compile(r"[0-9]{1,%d}" % MAX_ID_DIGITS, re.ASCII)
#: Longest parameter value quoted back in a notice.
_QUOTE = 40


@dataclass(frozen=True)
class ReviewLink:
    """The parameters of a Review link that passed the checks, and a notice for each that did not.

    Attributes
    ----------
    session, item : int or None
        Database ids (``None`` when absent or refused).
    annotator : str or None
        The name the link offers (never taken as the person acting without their confirmation).
    notices : tuple of str
        One line per refused parameter, naming it and what was expected; the value is shortened and
        given with ``repr`` so control characters show as escapes (escape it again before rendering).
    """

    session: int | None = None
    item: int | None = None
    annotator: str | None = None
    notices: tuple[str, ...] = ()


def _quote(value: str) -> str:
    return repr(value if len(value) <= _QUOTE else value[:_QUOTE] + "…")


def parse_id(value: object) -> int | None:
    """A database id from a link parameter: ASCII digits only, 1 .. 2**63 - 1; ``None`` otherwise."""
    if not isinstance(value, str) or not _ASCII_DIGITS.fullmatch(value):
        return None
    number = int(value)
    return number if 0 < number <= _MAX_ID else None


def parse_link(params: Mapping[str, object]) -> ReviewLink:
    """Read ``session``, ``item`` and ``annotator`` from a page's query parameters.

    Parameters
    ----------
    params : mapping of str to str
        The query parameters (``st.query_params`` or a dict); other keys are ignored.

    Returns
    -------
    ReviewLink
        Never raises: a bad value becomes ``None`` and a notice.
    """
    values: dict[str, object] = {}
    notices = []
    for key in ("session", "item"):
        raw = params.get(key)
        if raw is None or raw == "":
            continue
        parsed = parse_id(raw)
        if parsed is None:
            notices.append(f"The link's {key} {_quote(str(raw))} is not an id (1 to {MAX_ID_DIGITS} digits 0-9): "
                           "ignored.")
        values[key] = parsed
    raw = params.get("annotator")
    if raw not in (None, ""):
        try:
            values["annotator"] = check_name(raw, "annotator")
        except ValueError:
            notices.append(f"The link's annotator {_quote(str(raw))} is not a name (at most {MAX_NAME} characters, "
                           "no control characters): ignored.")
    return ReviewLink(**values, notices=tuple(notices))


def review_url(session: int, item: int | None = None) -> str:
    """The Review page's link to a session (and one of its items): ``/Review?session=3&item=1204``.

    Parameters
    ----------
    session, item : int
        Database ids (checked as :func:`parse_id` reads them back).

    Returns
    -------
    str
        A path relative to the dashboard's root.

    Raises
    ------
    ValueError
        An id that :func:`parse_link` would refuse.

    >>> review_url(3, 1204), parse_link({"session": "3", "item": "1204"}).item
    ('/Review?session=3&item=1204', 1204)
    """
    for name, value in (("session", session), ("item", item)):
        if value is not None and (isinstance(value, bool) or parse_id(str(value)) is None):
            raise ValueError(f"{name} must be a database id (1 .. 2**63 - 1), not {value!r}")
    return f"/Review?session={int(session)}" + (f"&item={int(item)}" if item is not None else "")
