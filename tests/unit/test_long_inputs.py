"""Long and deep inputs (issue 20.10): the same numbers with bounded memory, no RecursionError.

- ``to_jsonable`` converts values nested deeper than Python's recursion limit (the readers accept 1,024
  levels), to the same result as for shallow values.
- ROUGE-L's LCS on a long side is computed on a reduced copy that keeps the LCS length
  (:func:`evaluators.metrics.overlap.lcs_reduced`); the exact-match key of a long text is cleaned in
  pieces; n-gram counts take no copies of the token list.  Each gives the values of the direct way.
- JSON over :data:`evaluators.io.readers.ORJSON_MAX_BYTES` is read by the standard library, to the same value.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from enum import Enum

import orjson
from rapidfuzz.distance import LCSseq

from evaluators.io import readers
from evaluators.metrics import overlap
from evaluators.results import _jsonable_iterative, to_jsonable
from evaluators.text.tokenize import TextView


class Colour(Enum):
    RED = "red"


@dataclass
class Point:
    x: float
    tags: list


def test_to_jsonable_of_a_1000_deep_value_and_the_iterative_path_agree():
    deep = orjson.loads("[" * 1000 + '"x"' + "]" * 1000)
    value = {"deep": deep, "n": [1, 2.5, float("nan"), {"t": (1, 2), "s": {3, 1}}], "p": Point(float("inf"), [Colour.RED])}
    out = to_jsonable(value)  # raised RecursionError before
    inner, depth = out["deep"], 0
    while isinstance(inner, list):
        inner, depth = inner[0], depth + 1
    assert (depth, inner) == (1000, "x")
    # NaN and infinity -> None, tuples and sets -> lists (sorted by str), enums -> value, dataclasses -> dicts
    shallow = {k: v for k, v in value.items() if k != "deep"}
    assert to_jsonable(shallow) == _jsonable_iterative(shallow) == {
        "n": [1, 2.5, None, {"t": [1, 2], "s": [1, 3]}], "p": {"x": None, "tags": ["red"]}}
    assert json.loads(json.dumps(out["n"])) == out["n"]


def test_lcs_reduced_keeps_the_lcs_length():
    rng = random.Random(7)
    for trial in range(2000):
        long = [rng.choice("abcde") for _ in range(rng.randrange(0, 80))]
        if trial % 2:  # runs of one token
            long = [t for t in long for _ in range(rng.randrange(1, 6))]
        short = [rng.choice("abxy") for _ in range(rng.randrange(0, 12))]
        assert LCSseq.similarity(short, overlap.lcs_reduced(long, short)) == LCSseq.similarity(short, long)
    # English and Chinese: "x" absent from the short side goes, a run is cut to the short side's count
    assert overlap.lcs_reduced(["x", "the", "the", "the", "cat"], ["the", "cat", "the"]) == ["the", "the", "cat"]
    assert overlap.lcs_reduced(["北", "北", "京", "x"], ["北", "京"]) == ["北", "京"]


def test_long_answers_score_as_the_direct_computation(monkeypatch):
    rng = random.Random(3)
    words = ["the", "cat", "sat", "北", "京", "，", "!", "_", "Ünïcode", "  "]
    long_text = " ".join(rng.choice(words) for _ in range(400_000))  # > 1 Mi characters
    ref = TextView("the cat sat in 北京")
    pred = TextView(long_text)
    assert len(pred.tokens("char")) > overlap.LCS_REDUCE_AT and len(pred.normalized) > overlap._EXACT_CHUNK
    reduced = overlap.rouge_l(pred, ref)
    key = overlap.exact_key(pred)
    # the direct ways: the whole text in one re.sub, rapidfuzz on the whole token list, n-grams from slices
    assert key == overlap._NON_WORD.sub("", pred.normalized)
    monkeypatch.setattr(overlap, "LCS_REDUCE_AT", 10 ** 9)
    assert overlap.rouge_l(TextView(long_text), ref) == reduced
    toks = pred.tokens("char")
    for n in (1, 2, 4):
        from collections import Counter
        assert pred.ngrams("char", n) == Counter(zip(*[toks[i:] for i in range(n)]))


def test_json_over_the_orjson_size_is_read_to_the_same_value(monkeypatch):
    record = {"question_id": "q1", "prediction": "北京 " * 50, "n": [1, 2.5, None, True], "big": 2 ** 70}
    line = json.dumps(record, ensure_ascii=False).encode("utf-8")
    small = readers.loads_json_line(line)
    monkeypatch.setattr(readers, "ORJSON_MAX_BYTES", 10)  # every text is "large" now
    assert readers.loads_json_line(line) == small == record
    assert readers.load_json_bytes(line)[0] == record
    assert readers.parse_json_text(line.decode("utf-8")) == record
