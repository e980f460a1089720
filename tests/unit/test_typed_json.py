"""evaluators/io/typed_json.py: results as typed JSON, decoded into equal values of the same types,
and decoding builds only the engine's own dataclasses, named tuples, models and enums."""

from __future__ import annotations

import importlib
import json
import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.io import typed_json
from evaluators.io.errors import InputIssue
from evaluators.io.typed_json import CodecError, decode, dumps, encode, loads
from evaluators.memory.judge import Judgement
from evaluators.narrative.base import Mismatch
from evaluators.schema.narrative import Relationship
from evaluators.testsets.schema import Source, TestItem


def round_trip(value):
    return loads(dumps(value))


def test_plain_values_keep_their_types():
    # one Chinese and one English string; a tuple stays a tuple, a list a list, 1.0 a float and 1 an int
    value = {"zh": "牛郎织女", "en": "Cowherd", "n": 1, "x": 1.0, "ok": True, "none": None,
             "pair": (1, "a"), "list": [1, (2, 3)], "nested": [[], (), {}]}
    back = round_trip(value)
    assert back == value
    assert type(back["pair"]) is tuple and type(back["list"]) is list and type(back["list"][1]) is tuple
    assert type(back["x"]) is float and type(back["n"]) is int and type(back["nested"][1]) is tuple


def test_special_floats_sets_bytes_and_non_string_keys():
    back = round_trip({"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "neg0": -0.0,
                       "tiny": 5e-324, "third": 1 / 3})
    assert math.isnan(back["nan"]) and back["inf"] == math.inf and back["-inf"] == -math.inf
    assert math.copysign(1, back["neg0"]) == -1 and back["tiny"] == 5e-324 and back["third"] == 1 / 3
    text = dumps({"nan": math.nan})
    assert "NaN" not in text and json.loads(text) == {"nan": {"$float": "nan"}}
    value = {1: "一", (2, "b"): {"x"}, None: frozenset({1, 2}), "$dollar": b"\x00\xff", "plain": "two"}
    back = round_trip(value)
    assert back == value and type(back[None]) is frozenset and type(back[(2, "b")]) is set


def test_engine_types_come_back_as_their_classes():
    issue = InputIssue(file="故事.json", line=3, path="$.events[0]", message="missing 'agent'")
    judgement = Judgement(score=0.5, mode="continuous", reasoning="部分一致 / partly", reply="{}",
                          error=None, note=None)
    mismatch = Mismatch("relationships", "relationship_level1", "friend", "enemy", "e1", "e1", "label differs")
    relationship = Relationship(agent="牛郎", target="织女", relationship_level1="family")
    item = TestItem(id="fact_001", category="factual", difficulty="easy", question="Who?",
                    expected_answer="伊法", source=Source(file="a.txt", line_range=(1, 2)), keywords=[" 伊法 "],
                    reviewer="extra field kept")
    value = (issue, frozenset({("q1", judgement)}), [mismatch], {"r": relationship}, item)
    back = round_trip(value)
    assert back == value
    assert [type(v) for v in back[0:1]] == [InputIssue] and type(back[2][0]) is Mismatch
    assert back[3]["r"].model_fields_set == relationship.model_fields_set  # fields set, not defaults
    assert back[4].__pydantic_extra__ == {"reviewer": "extra field kept"} and back[4].keywords == ["伊法"]
    assert back[4].source.line_range == (1, 2)


def test_an_enum_member_is_written_by_name():
    from evaluators.policy import GTStatus

    member = next(iter(GTStatus))  # a str enum: written as its member, not as the string it equals
    assert encode({"status": member}) == {"status": {"$enum": "evaluators.policy:GTStatus", "name": member.name}}
    assert round_trip(member) is member
    with pytest.raises(CodecError, match="no member"):
        decode({"$enum": "evaluators.policy:GTStatus", "name": "RETIRED"})


def test_a_lazy_sequence_is_written_as_the_tuple_it_equals():
    from evaluators.narrative.alignment import EventLabels

    labels = EventLabels([], [], "")
    assert round_trip(labels) == () and type(round_trip(labels)) is tuple


def test_a_type_without_typed_json_is_refused_naming_where():
    with pytest.raises(TypeError, match=r"\$\.a\[0\]: no typed JSON for builtins.object"):
        encode({"a": [object()]})


@settings(deadline=None)  # a loaded shared machine; no test asserts a time
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner) | st.tuples(inner, inner)
                    | st.dictionaries(st.text() | st.integers(), inner), max_leaves=30))
def test_random_trees_round_trip(value):
    back = round_trip(value)
    assert repr(back) == repr(value)  # NaN written as nan on both sides; types of containers in the repr


def test_a_class_with_other_fields_now_does_not_decode():
    tree = encode(InputIssue(file="f", line=1, path="$", message="m"))
    added = dict(tree, hint="try again")  # written when the class had a field it has no more
    with pytest.raises(CodecError, match="other fields now"):
        decode(added)
    removed = {k: v for k, v in tree.items() if k != "line"}  # the class has a field the file lacks
    with pytest.raises(CodecError, match=r"missing \['line'\]"):
        decode(removed)
    mismatch = encode(Mismatch("characters", "name"))
    with pytest.raises(CodecError, match="other fields now"):
        decode({k: v for k, v in mismatch.items() if k != "note"})
    model = encode(Relationship(agent="a", target="b"))
    with pytest.raises(CodecError, match="other fields now"):
        decode(dict(model, weight=1))
    with pytest.raises(CodecError, match="not found"):
        decode({"$dataclass": "evaluators.io.errors:GoneIssue", "file": "f"})
    with pytest.raises(CodecError, match="not found"):
        decode({"$dataclass": "evaluators.no_such_module:X"})


@pytest.mark.parametrize("name", [
    "os:system", "subprocess:Popen", "builtins:eval", "pickle:loads", "evaluatorsx.io:Thing",
    "evaluators.__main__:main", "evaluators.io.errors:__class__", "evaluators.io.errors:InputIssue.__init__",
    "evaluators.io.errors", "evaluators..io:X", "evaluators.io.errors:InputIssue;import os",
])
def test_only_classes_of_the_engine_are_looked_up_and_nothing_else_is_imported(name, monkeypatch):
    imported = []
    real = importlib.import_module
    monkeypatch.setattr(typed_json.importlib, "import_module", lambda m, *a: imported.append(m) or real(m, *a))
    with pytest.raises(CodecError):
        decode({"$dataclass": name})
    assert all(m.startswith("evaluators.") and "__" not in m for m in imported), imported


def test_a_class_is_built_only_when_it_is_of_the_kind_its_tag_says():
    # a class imported into an engine module but defined elsewhere is not built from there
    assert "Path" in vars(importlib.import_module("evaluators.io.sources"))
    with pytest.raises(CodecError, match="not a class defined there"):
        decode({"$dataclass": "evaluators.io.sources:Path"})
    with pytest.raises(CodecError, match="not a class defined there"):  # a function, not a class
        decode({"$dataclass": "evaluators.io.errors:format_json_path"})
    with pytest.raises(CodecError, match="is not a dataclass"):
        decode({"$dataclass": "evaluators.schema.narrative:Relationship", "agent": "a", "target": "b"})
    with pytest.raises(CodecError, match="is not a namedtuple"):
        decode({"$namedtuple": "evaluators.io.errors:InputIssue"})
    with pytest.raises(CodecError, match="is not a enum"):
        decode({"$enum": "evaluators.io.errors:InputIssue", "name": "x"})


def test_decoding_does_not_call_init_or_validators(monkeypatch):
    tree = encode(InputIssue(file="f", line=1, path="$", message="m"))
    monkeypatch.setattr(InputIssue, "__init__", lambda *a, **k: pytest.fail("__init__ called"))
    assert decode(tree).message == "m"
    # a model is constructed, not validated: the stored value is kept as written
    item = decode(encode(Source(file="a.txt", line_range=(1, 2))) | {"line_range": {"$tuple": [5, 1]}})
    assert item.line_range == (5, 1)


@pytest.mark.parametrize("tree", [
    {"$pickle": "gASV"}, {"$tuple": "ab"}, {"$tuple": [], "x": 1}, {"$float": "1e400"}, {"$map": [[1]]},
    {"$set": [[1, 2]]}, {"$map": [[[1], 2]]}, {"$bytes": "***"}, {"a": 1, "$tuple": []},
    {"$enum": "evaluators.policy:Nope", "name": "X"}, {"$enum": "evaluators.policy:GTStatus"},
])
def test_a_tree_that_is_not_typed_json_raises_codec_error(tree):
    with pytest.raises(CodecError):
        decode(tree)


def test_loads_refuses_nan_literals_and_deep_nesting():
    with pytest.raises(CodecError):
        loads('{"x": NaN}')
    with pytest.raises(CodecError):
        loads("[" * 100_000 + "]" * 100_000)
    deep = {"$tuple": [1]}
    for _ in range(sys.getrecursionlimit() + 10):
        deep = {"$tuple": [deep]}
    with pytest.raises(CodecError, match="deeply"):
        decode(deep)
