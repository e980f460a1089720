"""dumps_pretty writes exactly json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.io import json_text
from evaluators.io.json_text import dumps_pretty

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def reference(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False)


finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | finite | st.text(max_size=12)
documents = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids,
                                                                                            max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_random_documents_equal_json_dumps(doc):
    assert dumps_pretty(doc) == reference(doc)


@pytest.mark.parametrize("x", [0.0, -0.0, 1.0, 0.1, 1e-4, 9.99e-5, 1e-5, -1e-5, 1.5e-7, 5e-324, 1e15, 9999999999999998.0,
                               1e16, 1.234e17, -1e300, 123456789.123, 0.30000000000000004])
def test_every_number_form_equals_json_dumps(x):
    # orjson writes 9.99e-05 as 0.0000999: those fall back to json.dumps
    for doc in ({"score": x}, [x, 1], {"a": [{"b": x}]}):
        assert dumps_pretty(doc) == reference(doc)


def test_random_bit_patterns_equal_json_dumps():
    import random

    rng = random.Random(7)
    values = []
    while len(values) < 3000:
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            values.append(x)
    for i in range(0, len(values), 50):
        doc = {"values": values[i:i + 50], "first": values[i]}
        assert dumps_pretty(doc) == reference(doc)


@pytest.mark.parametrize("doc", [
    {"t": "控制\x00\x1f\x7f\u2028 \"引号\" \\ \n\t"},  # escapes as json's (lowercase \u00XX), CJK kept
    {"s": "\ud800"},  # a lone surrogate: orjson refuses, json writes it
    {1: "int key", "k": [(), {}, []]},  # non-string keys and empty containers
    [2**64, -(2**63) - 1],  # beyond 64 bits
    {"text": "ends with 1e5\n", "x": "10.00001"},  # number-like text: still equal
    "a bare string", 3, 0.25, None,
])
def test_edge_values_equal_json_dumps(doc):
    assert dumps_pretty(doc) == reference(doc)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -math.inf])
@pytest.mark.parametrize("tiny", [0.5, 1e-5])  # orjson's path, and json's after the fallback
def test_nan_and_infinities_are_written_as_null_as_to_jsonable_makes_them(bad, tiny):
    assert dumps_pretty({"x": [None, bad, tiny]}) == reference({"x": [None, None, tiny]})


def test_orjson_writes_the_plain_documents(monkeypatch):
    """The fast path is taken for an ordinary report (no fallback to json.dumps)."""
    doc = {"documents": [{"id": "05828210-380c-4e6f-936c-d5164c1524f6", "f1": 0.641, "n": 14, "spans": [[0, 12]],
                          "missing": None, "name": "牛郎织女"}]}
    expected = reference(doc)
    calls = []
    real = json.dumps
    monkeypatch.setattr(json_text.json, "dumps", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert dumps_pretty(doc) == expected
    assert calls == []


@pytest.mark.skipif(not (SHARED / "fairytales" / "gt_v3").is_dir(), reason="shared fairytale data not present")
def test_real_narrative_reports_equal_json_dumps():
    from evaluators.narrative.run import NarrativeInputs, run_narrative

    folder = SHARED / "fairytales"
    report = run_narrative(NarrativeInputs.from_paths(folder / "gt_v3", folder / "gt_v3"))
    doc = report.to_dict()
    assert dumps_pretty(doc) == reference(doc)


@settings(max_examples=200, deadline=None)
@given(documents)
def test_the_bytes_form_is_the_text_encoded(doc):
    """dumps_pretty_bytes (the QA report's streamed records) is dumps_pretty's text in UTF-8."""
    assert json_text.dumps_pretty_bytes(doc) == reference(doc).encode("utf-8")


def test_default_writes_unknown_objects_as_json_dumps_does():
    """``default=str`` (the sensitivity report): json.dumps's text, never orjson's own form of a datetime."""
    import datetime

    when = datetime.datetime(2026, 11, 27, 14, 5, tzinfo=datetime.timezone.utc)
    doc = {"when": when, "path": Path("a/答案.json"), "scores": [0.5, 9.99e-5], "名": "林远"}
    assert dumps_pretty(doc, default=str) == json.dumps(doc, ensure_ascii=False, indent=2, default=str)
    assert '"when": "2026-11-27 14:05:00+00:00"' in dumps_pretty(doc, default=str)  # str(), not ISO "T"
    with pytest.raises(TypeError):
        dumps_pretty({"when": object()})
