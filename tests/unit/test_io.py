"""evaluators.io: encodings, located JSON errors, JSONL/CSV readers, pairing, zips."""

import io
import json
import zipfile

import pytest

from evaluators.io import (
    InputError, InputFile, decode_bytes, expand_archives, load_json_bytes, pair_files, read_records, story_id,
)

DOC = {"title": "牛郎织女", "note": "English and 中文"}


@pytest.mark.parametrize(
    "data, encoding",
    [
        (json.dumps(DOC, ensure_ascii=False).encode("utf-8"), "utf-8"),
        (b"\xef\xbb\xbf" + json.dumps(DOC, ensure_ascii=False).encode("utf-8"), "utf-8-sig"),
        (json.dumps(DOC, ensure_ascii=False).encode("gb18030"), "gb18030"),
    ],
)
def test_decode_and_parse_in_each_encoding(data, encoding):
    value, used = load_json_bytes(data, "doc.json")
    assert value == DOC
    assert used == encoding


def test_undecodable_bytes_name_the_file():
    with pytest.raises(InputError) as exc:
        decode_bytes(b"\xff\xfe\xfa\xfb\x81", "bad.json")
    assert exc.value.issue.file == "bad.json"
    assert exc.value.issue.kind == "decode"


def test_invalid_json_gives_line_and_column():
    text = '{\n  "a": 1,\n  "b": [1, 2,,]\n}'
    with pytest.raises(InputError) as exc:
        load_json_bytes(text.encode(), "broken.json")
    issue = exc.value.issue
    # Third line '  "b": [1, 2,,]': 2 spaces, '"b":' (cols 3-6), ' ' (7), '[' (8), '1' (9), ',' (10),
    # ' ' (11), '2' (12), ',' (13); the unexpected second comma is column 14.
    assert (issue.file, issue.line, issue.column) == ("broken.json", 3, 14)
    assert "broken.json:3:14" in str(exc.value)


def test_jsonl_broken_line_is_reported_and_skipped():
    text = '{"id": 1, "q": "北京?"}\n{"id": 2, broken\n\n{"id": 3, "q": "Paris?"}\n[1, 2]\n'
    rs = read_records(text.encode("utf-8"), "qa.jsonl")
    assert [r.data["id"] for r in rs.records] == [1, 3]
    assert [r.line for r in rs.records] == [1, 4]
    assert [(i.line, i.kind) for i in rs.issues] == [(2, "json"), (5, "schema")]


def test_csv_reader_keeps_good_rows_and_locates_bad_ones():
    text = "id,answer\n1,北京\n2,Paris,extra\n3,\"multi\nline\"\n4,\n"
    rs = read_records(text.encode("gb18030"), "qa.csv")
    assert rs.encoding == "gb18030"
    assert [r.data["id"] for r in rs.records] == ["1", "3", "4"]
    assert rs.records[1].data["answer"] == "multi\nline"
    assert rs.records[2].data["answer"] == ""  # empty cell stays "", treated as absent downstream
    assert [(i.line, i.message) for i in rs.issues] == [(3, "expected 2 columns, found 3")]


def test_json_array_and_wrapped_list():
    rs = read_records(b'[{"a": 1}, 5, {"a": 2}]', "x.json")
    assert [r.data for r in rs.records] == [{"a": 1}, {"a": 2}]
    assert rs.issues[0].path == "[1]"
    rs = read_records(b'{"items": [{"a": 1}]}', "x.json")
    assert [r.data for r in rs.records] == [{"a": 1}]


@pytest.mark.parametrize(
    "name, sid",
    [
        ("CH_002_牛郎织女_v3.json", "CH_002_牛郎织女"),
        ("CH_002_牛郎织女_v3_prediction.json", "CH_002_牛郎织女"),
        ("CH_003_孟姜女哭长城_prediction.json", "CH_003_孟姜女哭长城"),
        ("gt/EN_001_fox_v2.json", "EN_001_fox"),
        ("EN_001_fox_pred.json", "EN_001_fox"),
    ],
)
def test_story_id(name, sid):
    assert story_id(name) == sid


def test_pairing_lists_unpaired_and_duplicates():
    gt = [InputFile("A_v3.json", b""), InputFile("B_v3.json", b""), InputFile("C_v3.json", b"")]
    pred = [InputFile("A_v3_prediction.json", b""), InputFile("A_pred.json", b""), InputFile("D_pred.json", b"")]
    p = pair_files(gt, pred)
    # Two predictions for story A: the v3-named one is preferred, the other reported.
    assert [(s, g.name, q.name) for s, g, q in p.pairs] == [("A", "A_v3.json", "A_v3_prediction.json")]
    assert p.unpaired_gt == ["B_v3.json", "C_v3.json"]
    assert p.unpaired_pred == ["D_pred.json"]
    assert any("second prediction file" in i.message for i in p.issues)


def test_zip_members_are_expanded():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("gt/A_v3.json", "{}")
        zf.writestr("__MACOSX/gt/._A_v3.json", "junk")
        zf.writestr("readme.txt", "x")
    files = expand_archives([InputFile("batch.zip", buf.getvalue()), InputFile("B.json", b"{}")])
    assert [f.name for f in files] == ["batch.zip/gt/A_v3.json", "B.json"]


def test_iter_jsonl_streams_records_and_issues_with_line_numbers():
    from evaluators.io.readers import iter_jsonl

    data = '{"q": "长城多长?"}\n\nnot json\n{"q": "Who?"}'.encode("gb18030")
    items = list(iter_jsonl(data, "x.jsonl"))
    assert [(type(i).__name__, i.line) for i in items] == [("Record", 1), ("InputIssue", 3), ("Record", 4)]
    assert items[0].data == {"q": "长城多长?"}
    bom = b"\xef\xbb\xbf" + '{"a": 1}\n'.encode()
    assert [r.data for r in iter_jsonl(bom)] == [{"a": 1}]


def test_sniffing_uses_only_the_beginning():
    from evaluators.io.readers import sniff_format

    assert sniff_format("x.json", '{"a": 1}\n{"a": 2}\n') == "jsonl"
    assert sniff_format("x.json", '{\n "a": 1\n}') == "json"
    assert sniff_format("x.txt", "[1, 2]") == "json"
    assert sniff_format("x.txt", "id,answer\n1,2") == "csv"
    # JSONL whose first line is broken stays JSONL (2 of 3 lines are objects), so only that line is lost
    assert sniff_format("x.txt", '{"a": 1,\n{"a": 2}\n{"a": 3}\n') == "jsonl"
    assert sniff_format("x.json", '{"a": 1\n{"a": 2}\n{"a": 3}\n') == "jsonl"
    # a pretty-printed object whose list has one-line elements: 1 of 4 lines parses alone, so JSON
    assert sniff_format("x.json", '{"data": [\n{"a": 1},\n{"a": 2}\n]}\n') == "json"
    # a cut-off last line of the head is not judged
    assert sniff_format("x.txt", '{"a": 1}\n{"a": 2}\n{"a": 3}\n{"a"') == "jsonl"


def test_a_broken_first_line_loses_only_that_line():
    rs = read_records(b'{"q": "a"\n{"q": "b"}\n{"q": "c"}\n', "x.txt")
    assert rs.format == "jsonl"
    assert [r.data["q"] for r in rs.records] == ["b", "c"]
    assert [(i.line, i.kind) for i in rs.issues] == [(1, "json")]


def test_bom_file_with_bad_bytes_later_is_a_located_error():
    from evaluators.io.readers import iter_jsonl

    data = b"\xef\xbb\xbf" + b'{"a": 1}\n' + b'{"a": "\xff"}\n'  # BOM (3) + 9 bytes, then 7 more: 0xff at 3+9+7=19
    with pytest.raises(InputError) as exc:
        list(iter_jsonl(data, "x.jsonl"))
    assert exc.value.issue.kind == "decode" and "byte 19" in exc.value.issue.message
    with pytest.raises(InputError, match="byte 19"):
        read_records(data, "x.jsonl")


def test_gb18030_is_validated_over_the_whole_input():
    from evaluators.io.readers import iter_jsonl

    line = json.dumps({"q": "长城"}, ensure_ascii=False).encode("gb18030") + b"\n"
    body = line * (5 * (1 << 20) // len(line) + 1)  # over 5 MiB: past any sample of the first 4 MiB
    records = list(iter_jsonl(body, "x.jsonl"))
    assert len(records) == body.count(b"\n") and records[-1].data == {"q": "长城"}
    with pytest.raises(InputError) as exc:
        list(iter_jsonl(body + b"\x80\x20\n", "x.jsonl"))  # 0x80 then a space: invalid in GB18030 too
    assert exc.value.issue.kind == "decode"
    # a two-byte character split by the 1 MiB chunk boundary decodes
    pad = b"x" * ((1 << 20) - 1)
    split = list(iter_jsonl(b'{"p": "' + pad[7:] + "长".encode("gb18030") + b'"}\n', "x.jsonl"))
    assert split[0].data["p"].endswith("长")


def test_gb18030_lines_are_kept_as_utf8_without_an_offset():
    from evaluators.io.readers import iter_jsonl, loads_json_line

    rec = next(iter_jsonl(json.dumps({"q": "长城"}, ensure_ascii=False).encode("gb18030") + b"\n"))
    assert rec.offset is None and loads_json_line(rec.raw) == {"q": "长城"}
    assert rec.raw == '{"q": "长城"}'.encode("utf-8")


@pytest.mark.parametrize("value, n_records", [
    ({"version": "1", "data": [{"q": "a"}, {"q": "b"}]}, 2),  # container named like one
    ({"rows": []}, 0),  # the only field: an empty container
    ({"question": "q", "answers": [{"text": "a", "answer_start": 0}]}, 1),  # one record with a list of objects
    ({"question": "q", "answers": ["a", "b"]}, 1),  # one record with a list of strings
    ({"a": [{"x": 1}], "b": [{"x": 2}]}, 1),  # two lists: no container
])
def test_a_json_object_is_a_container_only_when_it_looks_like_one(value, n_records):
    rs = read_records(json.dumps(value).encode(), "x.json")
    assert len(rs.records) == n_records and not rs.issues


def test_v3_is_preferred_over_v2_in_one_folder():
    files = [InputFile("X_v2.json", b""), InputFile("X_v3.json", b"")]
    p = pair_files(files, [InputFile("X_pred.json", b"")])
    assert [(g.name, q.name) for _, g, q in p.pairs] == [("X_v3.json", "X_pred.json")]
    assert any(i.file == "X_v2.json" and "ignored" in i.message for i in p.issues)


def test_json_records_know_their_path():
    rs = read_records(json.dumps([1, {"q": "a"}]).encode(), "x.json")
    assert [(r.path, r.index, r.where()) for r in rs.records] == [("[1]", 0, {"path": "[1]"})]  # not "[0]"
    assert [i.path for i in rs.issues] == ["[0]"]
    contained = read_records(json.dumps({"version": 1, "data": [{"q": "a"}, {"q": "b"}]}).encode(), "x.json")
    assert [r.path for r in contained.records] == ["data[0]", "data[1]"]
    jsonl = read_records(b'{"q": "a"}\n', "x.jsonl")
    assert jsonl.records[0].where() == {"line": 1} and jsonl.records[0].raw is None  # no line copies kept
