"""The one JSON reader on hostile text: nesting past the limit and lone surrogates, for every loader."""

from __future__ import annotations

import json

import pytest

from evaluators.io import InputError, read_records
from evaluators.io.readers import MAX_JSON_DEPTH, loads_json_line, parse_json_text, replace_lone_surrogates

DEEP = "[" * 10_000 + "]" * 10_000


@pytest.mark.parametrize("text", [DEEP, '{"a":' * 5000 + "1" + "}" * 5000,
                                  "[" * 1020 + "NaN" + "]" * 1020])  # NaN: the standard library's path
def test_deep_json_is_a_located_error(text):
    with pytest.raises(InputError) as exc:
        parse_json_text(text, "deep.json")
    assert exc.value.issue.file == "deep.json" and exc.value.issue.kind == "json"
    assert f"at most {MAX_JSON_DEPTH} levels" in exc.value.issue.message
    with pytest.raises(InputError) as exc:
        loads_json_line(text, "deep.jsonl", 7)
    assert exc.value.issue.line == 7


def test_a_deep_jsonl_line_loses_only_that_line():
    data = ('{"id": 1}\n' + DEEP + '\n{"id": 3}\n').encode()
    rs = read_records(data, "x.jsonl")
    assert [r.data["id"] for r in rs.records] == [1, 3]
    assert [(i.line, i.kind) for i in rs.issues] == [(2, "json")]


@pytest.mark.parametrize("text,expected,count,line", [
    (r'"\ud800"', "\ufffd", 1, 1),                     # a lone high surrogate
    (r'"a\udc00b"', "a\ufffdb", 1, 1),                 # a lone low surrogate
    (r'"\ud83d\ude00"', "😀", 0, None),                 # a pair is a character: kept
    (r'"\\ud800"', "\\ud800", 0, None),                # an escaped backslash, then text: not an escape
    ('[\n"\\ud800\\ud800\\udc00", "\\udfff"]', ["\ufffd𐀀", "\ufffd"], 2, 2),  # 2 lone ones, first on line 2
])
def test_lone_surrogates_read_as_replacement_characters(text, expected, count, line):
    fixed, n, first = replace_lone_surrogates(text)
    assert (n, first) == (count, line)
    assert json.loads(fixed) == expected
    issues = []
    assert parse_json_text(text, "s.json", issues) == expected
    assert len(issues) == (1 if count else 0)
    if count:
        assert issues[0].severity == "warning" and issues[0].line == line
        assert f"{count} lone surrogate escape(s)" in issues[0].message


def test_a_record_with_a_lone_surrogate_is_kept_with_a_warning_in_every_format():
    jsonl = b'{"id": "1", "prediction": "x\\ud800"}\n{"id": "2", "prediction": "ok"}\n'
    rs = read_records(jsonl, "p.jsonl")
    assert [r.data["prediction"] for r in rs.records] == ["x\ufffd", "ok"]
    assert [(i.line, i.severity) for i in rs.issues] == [(1, "warning")]
    doc = b'[{"id": "1", "prediction": "x\\ud800"}, {"id": "2", "prediction": "ok"}]'
    rs = read_records(doc, "p.json")
    assert [r.data["prediction"] for r in rs.records] == ["x\ufffd", "ok"] and rs.errors == []
    assert [(i.line, i.severity) for i in rs.issues] == [(1, "warning")]
    "".join(r.data["prediction"] for r in rs.records).encode("utf-8")  # encodable: no surrogate left
