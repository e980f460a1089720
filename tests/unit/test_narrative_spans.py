"""Span verification and repair: verified, shifted, whitespace-insensitive, unverified, missing."""

from evaluators.narrative.spans import MISSING, REPAIRED, UNVERIFIED, VERIFIED, resolve_span
from evaluators.schema import TextSpan

TEXT = "从前有座山。山里有座庙。庙里有个老和尚。"  # 20 characters; "山里有座庙。" is [6, 12)


def test_verified_span():
    r = resolve_span(TextSpan(start=6, end=12, text="山里有座庙。"), TEXT)
    assert (r.start, r.end, r.status) == (6, 12, VERIFIED)


def test_shifted_header_is_repaired_to_nearest_occurrence():
    # The span was written against a text with a 4-character header: offsets are +4.
    r = resolve_span(TextSpan(start=10, end=16, text="山里有座庙。"), TEXT)
    assert (r.start, r.end, r.status) == (6, 12, REPAIRED)
    assert "moved by -4" in r.note


def test_nearest_of_several_occurrences():
    text = "ab. xx ab. yy ab."
    # "ab." occurs at 0, 7 and 14; the given start 12 is nearest to 14.
    r = resolve_span(TextSpan(start=12, end=15, text="ab."), text)
    assert (r.start, r.end, r.status) == (14, 17, REPAIRED)


def test_whitespace_insensitive_repair():
    text = "The old   man\nwent to the sea."
    # The annotation normalised whitespace: "old man went" is found ignoring spaces, at [4, 18).
    r = resolve_span(TextSpan(start=0, end=12, text="old man went"), text)
    assert (r.start, r.end, r.status) == (4, 18, REPAIRED)
    assert "ignoring whitespace" in r.note
    assert text[r.start:r.end] == "old   man\nwent"


def test_changed_character_keeps_offsets_unverified():
    # One character differs (庙 -> 寺): not found, offsets kept as given.
    r = resolve_span(TextSpan(start=6, end=12, text="山里有座寺。"), TEXT)
    assert (r.start, r.end, r.status) == (6, 12, UNVERIFIED)


def test_empty_source_text_keeps_offsets_unverified():
    r = resolve_span(TextSpan(start=3, end=9, text="whatever"), "")
    assert (r.start, r.end, r.status, r.usable) == (3, 9, UNVERIFIED, True)


def test_missing_spans():
    assert resolve_span(None, TEXT).status == MISSING
    r = resolve_span(TextSpan(start=None, end=None, text=""), TEXT)
    assert r.status == MISSING and not r.usable
    # offsets absent but the text is found: repaired from the text alone
    r = resolve_span(TextSpan(start=None, end=None, text="庙里有个老和尚。"), TEXT)
    assert (r.start, r.end, r.status) == (12, 20, REPAIRED)


def test_out_of_range_offsets():
    r = resolve_span(TextSpan(start=40, end=50, text="not here"), TEXT)
    assert r.status == MISSING
    r = resolve_span(TextSpan(start=15, end=50, text="not here"), TEXT)
    assert (r.start, r.end, r.status) == (15, 20, UNVERIFIED)
    assert "clamped" in r.note


def test_offsets_past_the_end_are_never_verified():
    # "abcdef"[3:100] == "def" in Python; the offsets are still wrong: located again at [3, 6).
    r = resolve_span(TextSpan(start=3, end=100, text="def"), "abcdef")
    assert (r.start, r.end, r.status) == (3, 6, REPAIRED)
    r = resolve_span(TextSpan(start=20, end=30, text=""), "甲。乙。丙。丁。戊。己。")
    assert r.status == MISSING


def test_absurd_offsets_are_missing_not_a_crash():
    r = resolve_span(TextSpan(start=2**63, end=2**63 + 10, text=""), "")
    assert r.status == MISSING and not r.usable
