"""Pretty JSON text of reports, written fast: :func:`dumps_pretty`.

``json.dumps(obj, ensure_ascii=False, indent=2)`` runs Python's pure-Python encoder whenever
``indent`` is set (the C accelerator only writes compact JSON), which made encoding most of the
time of a narrative batch report (0.34 s of a 12.9 MB report, against 0.012 s with orjson).
``orjson.dumps(obj, option=OPT_INDENT_2)`` writes the same text for the same values, with one
difference in numbers: floats below 1e-4 in magnitude (``0.0000999`` where Python writes
``9.99e-05``).  NaN and infinities orjson writes as ``null``, as ``to_jsonable`` makes them.
:func:`dumps_pretty` therefore looks, at the end of every line of orjson's text (where each
number stands), for a number with an exponent or written ``0.0000...`` and, when there is one
or when orjson refuses the object (non-string keys, lone surrogates, integers over 64 bits,
types orjson does not know), falls back to ``json.dumps``.  The text is then always
``json.dumps``'s (tested on random documents, random float bit patterns and real reports).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from evaluators.results import to_jsonable

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is in requirements.txt
    _orjson = None

__all__ = ["dumps_pretty", "dumps_pretty_bytes"]

# In orjson's indented text every number ends its line (a value after '": ' or a list element); one that json
# writes otherwise has an exponent or is below 1e-4 (0.0000...).  A string ends in '"', so neither pattern
# matches inside one at a line's end; "10.00001" and the like only cost the slower path.
_EXPONENT_AT_END = re.compile(rb"e[-+]?[0-9]+,?\n")
_TINY_AT_END = re.compile(rb"0\.0000[0-9]*,?\n")


def _orjson_pretty(obj: Any) -> bytes | None:
    """orjson's indented text of ``obj`` when it is ``json.dumps``'s too, else ``None``."""
    if _orjson is None or not isinstance(obj, (dict, list, tuple)):  # a bare scalar: json.dumps is as quick
        return None
    try:
        raw = _orjson.dumps(obj, option=_orjson.OPT_INDENT_2)
    except (TypeError, ValueError, _orjson.JSONEncodeError):
        return None
    if _EXPONENT_AT_END.search(raw) or _TINY_AT_END.search(raw):
        return None
    return raw


def _json_pretty(obj: Any, default: Callable[[Any], Any] | None = None) -> str:
    return json.dumps(to_jsonable(obj), ensure_ascii=False, indent=2, allow_nan=False, default=default)


def dumps_pretty(obj: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(to_jsonable(obj), ensure_ascii=False, indent=2)``, the same text, written by orjson where
    that gives the same text.

    Parameters
    ----------
    obj : JSON-able value
        Dicts, lists, tuples, strings, ints, floats, bools and None (what :func:`evaluators.results.
        to_jsonable` returns).
    default : callable, optional
        ``json.dumps``'s ``default``: the JSON value of an object neither :func:`~evaluators.results.to_jsonable`
        nor ``json`` knows (``str`` writes its text).  Given, the text is always ``json.dumps``'s (orjson
        would write some such objects itself, differently: datetimes in ISO form).

    Returns
    -------
    str
        Indented 2 spaces, ``": "`` and ``","`` separators, non-ASCII characters kept, no trailing newline;
        NaN and infinities written as ``null`` (as ``to_jsonable`` makes them: JSON has no NaN).

    Raises
    ------
    TypeError
        For a value neither can write (orjson writes some that ``json.dumps`` refuses: dataclasses,
        datetimes, UUIDs).
    """
    raw = _orjson_pretty(obj) if default is None else None
    return raw.decode("utf-8") if raw is not None else _json_pretty(obj, default)


def dumps_pretty_bytes(obj: Any) -> bytes:
    """:func:`dumps_pretty` encoded as UTF-8 (orjson's bytes as they are: no decoding and encoding again).

    For writers that stream pretty JSON in pieces (the QA report's records,
    :func:`evaluators.reports.qa.render_json_rows`): the same text, one home.
    """
    raw = _orjson_pretty(obj)
    return raw if raw is not None else _json_pretty(obj).encode("utf-8")
