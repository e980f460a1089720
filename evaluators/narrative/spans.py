"""Verify and repair text-span offsets against the source text.

Real files carry spans whose offsets do not match their ``text`` (a header added to the
story shifts every offset, one character was changed, the story text is empty).  Each
span is checked: ``text_content[start:end] == text``.  When it is not, the span text is
searched for in the source, first exactly, then ignoring whitespace, and the occurrence
nearest to the given ``start`` is used.  Every span gets a status:

``verified``
    offsets and text agree.
``offset_repaired``
    offsets replaced by the located occurrence (the note says how far it moved).
``offset_unverified``
    the offsets could not be checked or the text was not found; the given offsets are
    kept (clamped to the text) and used.
``missing``
    no usable span (``text_span`` absent, offsets absent and text not found, or empty).
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple
from functools import lru_cache

from evaluators.schema.narrative import TextSpan

VERIFIED = "verified"
REPAIRED = "offset_repaired"
UNVERIFIED = "offset_unverified"
MISSING = "missing"

_WS = re.compile(r"\s+")
#: Offsets above this (a trillion characters) are treated as garbage, not as positions.
MAX_OFFSET = 10**12


class ResolvedSpan(NamedTuple):
    """A span after verification.

    Attributes
    ----------
    start, end : int or None
        Offsets used for scoring (half-open); ``None`` when the span is missing.
    status : str
        One of ``verified``, ``offset_repaired``, ``offset_unverified``, ``missing``.
    given_start, given_end : int or None
        Offsets as written in the file.
    note : str
        Why the status was given (empty for ``verified``).
    """

    start: int | None
    end: int | None
    status: str
    given_start: int | None = None
    given_end: int | None = None
    note: str = ""

    @property
    def usable(self) -> bool:
        """True when the span has offsets with ``end > start``."""
        return self.start is not None and self.end is not None and self.end > self.start

    @property
    def interval(self) -> tuple[int, int]:
        """``(start, end)``; only meaningful when :attr:`usable`."""
        return (self.start or 0, self.end or 0)


@lru_cache(maxsize=64)
def _squeezed(text: str) -> tuple[str, tuple[int, ...]]:
    """The text without whitespace and, for each kept character, its offset in ``text``."""
    chars = []
    index = []
    for i, ch in enumerate(text):
        if not ch.isspace():
            chars.append(ch)
            index.append(i)
    return "".join(chars), tuple(index)


def _nearest(haystack: str, needle: str, anchor: int) -> int | None:
    """Start of the occurrence of ``needle`` nearest to ``anchor`` (ties: the earlier)."""
    best = None
    pos = haystack.find(needle)
    while pos != -1:
        if best is None or abs(pos - anchor) < abs(best - anchor):
            best = pos
        if pos > anchor and best is not None and pos - anchor > abs(best - anchor):
            break
        pos = haystack.find(needle, pos + 1)
    return best


def resolve_span(span: TextSpan | None, text: str) -> ResolvedSpan:
    """Verify a span against the source ``text`` and repair its offsets if needed.

    Parameters
    ----------
    span : TextSpan or None
        The span as written (``start``, ``end``, ``text``).
    text : str
        The reference source text (may be empty).

    Returns
    -------
    ResolvedSpan
        See the module docstring for the statuses.
    """
    if span is None:
        return ResolvedSpan(None, None, MISSING, note="no text_span")
    gs, ge, stext = span.start, span.end, span.text or ""
    has_offsets = gs is not None and ge is not None and ge > gs >= 0
    if has_offsets and ge > MAX_OFFSET:
        return ResolvedSpan(None, None, MISSING, gs, ge, f"offsets [{gs}, {ge}) are not plausible character offsets")
    if has_offsets and text and ge <= len(text) and text[gs:ge] == stext:
        return ResolvedSpan(gs, ge, VERIFIED, gs, ge)
    anchor = gs if gs is not None else 0
    if stext.strip() and text:
        pos = _nearest(text, stext, anchor)
        if pos is not None:
            moved = f"moved by {pos - gs:+d} characters" if gs is not None else "offsets were absent"
            return ResolvedSpan(pos, pos + len(stext), REPAIRED, gs, ge, f"located exactly; {moved}")
        squeezed, index = _squeezed(text)
        needle = _WS.sub("", stext)
        if needle:
            # Anchor in squeezed coordinates: number of non-space characters before `anchor`.
            sq_anchor = bisect.bisect_left(index, anchor)
            spos = _nearest(squeezed, needle, sq_anchor)
            if spos is not None:
                start = index[spos]
                end = index[spos + len(needle) - 1] + 1
                moved = f"moved by {start - gs:+d} characters" if gs is not None else "offsets were absent"
                return ResolvedSpan(start, end, REPAIRED, gs, ge, f"located ignoring whitespace; {moved}")
    if has_offsets:
        if text:
            start, end = min(gs, len(text)), min(ge, len(text))
            if end <= start:
                return ResolvedSpan(None, None, MISSING, gs, ge, f"offsets [{gs}, {ge}) lie outside the text "
                                                                 f"({len(text)} characters)")
            if not stext.strip():
                note = "no span text to verify the offsets against"
            else:
                note = "span text not found in the source text; offsets kept as given"
            if end != ge:
                note += f" (end clamped from {ge} to {end})"
            return ResolvedSpan(start, end, UNVERIFIED, gs, ge, note)
        return ResolvedSpan(gs, ge, UNVERIFIED, gs, ge, "no source text to verify the offsets against")
    return ResolvedSpan(None, None, MISSING, gs, ge, "no usable offsets and the span text was not found")
