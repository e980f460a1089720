"""GT patches (evaluators.io.gt_patch): format, located errors, size cap, idempotent application, refusal."""

from __future__ import annotations

import hashlib
import json

import pytest

from evaluators.io import InputError
from evaluators.io import gt_patch as gp
from evaluators.io.gt_patch import (GTPatchMismatch, PatchEntry, apply_gt_patch, file_sha256, read_gt_patch,
                                    write_gt_patch)

GT = b'{"id": "q1", "answer": "Paris"}\n{"id": "q2", "answer": "\xe5\x8c\x97\xe4\xba\xac"}\n'
DIGEST = hashlib.sha256(GT).hexdigest()
GOLD = {"q1": ("Paris",), "q2": ("北京",), "q3": ("1843",)}


def entry(rid, op, old, new, **kw):
    return PatchEntry(rid, kw.pop("gt_digest", DIGEST), op, tuple(old), tuple(new), kw.pop("who", "ann"), **kw)


def test_file_sha256_equals_hashlib_for_bytes_paths_and_files(tmp_path):
    path = tmp_path / "gt.jsonl"
    path.write_bytes(GT)
    assert file_sha256(GT) == file_sha256(path) == DIGEST
    with open(path, "rb") as f:
        assert file_sha256(f) == DIGEST


def test_write_then_read_round_trip_chinese_and_english():
    entries = [entry("q1", "add_answer", ["Paris"], ["the city of Paris"], why="acceptable variant", session="s1"),
               entry("q2", "replace", ["北京"], ["北京市", "北京"], why="GT error: 全称", session="s1")]
    text = write_gt_patch(entries)
    first = json.loads(text.splitlines()[0])
    assert first == {"format": "evalboard.gt_patch", "version": 1, "gt_digest": DIGEST, "record_id": "q1",
                     "op": "add_answer", "old": ["Paris"], "answer": "the city of Paris", "who": "ann",
                     "why": "acceptable variant", "session": "s1"}
    assert "北京市" in text  # written as UTF-8, not \u escapes
    patch = read_gt_patch(text.encode("utf-8"), "p.jsonl")
    assert patch.issues == () and patch.entries == tuple(entries)
    assert [(e.file, e.line) for e in patch.entries] == [("p.jsonl", 1), ("p.jsonl", 2)]


def test_bad_lines_are_located_and_the_good_lines_kept():
    good = write_gt_patch([entry("q1", "add_answer", ["Paris"], ["Paris, France"])]).strip()
    lines = [
        good,                                                          # 1 ok
        "{not json",                                                   # 2
        json.dumps({**json.loads(good), "format": "other"}),           # 3
        json.dumps({**json.loads(good), "version": 99}),               # 4
        json.dumps({k: v for k, v in json.loads(good).items() if k != "who"}),   # 5
        json.dumps({**json.loads(good), "op": "delete"}),              # 6
        json.dumps({**json.loads(good), "gt_digest": "abc"}),          # 7
        "",                                                            # 8 blank: ignored
        json.dumps({**json.loads(good), "op": "replace"}),             # 9 replace without 'new'
        "[1, 2]",                                                      # 10
        json.dumps({**json.loads(good), "record_id": 7}),              # 11 ok: an integer id is read as text
    ]
    patch = read_gt_patch("\n".join(lines).encode("utf-8"), "p.jsonl")
    assert [e.line for e in patch.entries] == [1, 11] and patch.entries[1].record_id == "7"
    assert [i.line for i in patch.issues] == [2, 3, 4, 5, 6, 7, 9, 10]
    messages = {i.line: i.message for i in patch.issues}
    assert "invalid JSON" in messages[2] and "evalboard.gt_patch" in messages[3] and "version 99" in messages[4]
    assert "'who'" in messages[5] and "delete" in messages[6] and "64 lowercase hex" in messages[7]
    assert "'new'" in messages[9] and "JSON object" in messages[10]
    assert all(i.file == "p.jsonl" and i.kind == "gt_patch" for i in patch.issues)


def test_size_cap(monkeypatch, tmp_path):
    monkeypatch.setattr(gp, "MAX_PATCH_BYTES", 10)
    with pytest.raises(InputError, match="over the GT patch limit"):
        read_gt_patch(b"x" * 11, "big.jsonl")
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputError, match="big.jsonl"):
        gp.read_gt_patch_file(path)


def test_apply_adds_replaces_and_is_idempotent():
    entries = [entry("q1", "add_answer", ["Paris"], ["Paris, France"]),
               entry("q2", "replace", ["北京"], ["北京市"]),
               entry("q1", "add_answer", ["Paris"], ["Paris, France"])]  # the same decision twice
    once = apply_gt_patch(GOLD, entries, DIGEST)
    assert once.answers == {"q1": ("Paris", "Paris, France"), "q2": ("北京市",)}
    assert [c.status for c in once.changes] == ["applied", "applied", "unchanged"]
    assert once.n_applied == 2 and once.issues == ()
    assert GOLD["q1"] == ("Paris",)  # the input is not modified
    # applying the same patch to the patched GT changes nothing
    patched_gold = {k: once.patched(k, v) for k, v in GOLD.items()}
    twice = apply_gt_patch(patched_gold, entries, DIGEST)
    assert twice.answers == {} and {c.status for c in twice.changes} == {"unchanged"}
    assert {k: twice.patched(k, v) for k, v in patched_gold.items()} == patched_gold
    # two patches in order (the same file given twice) give what one gives
    assert apply_gt_patch(GOLD, entries + entries, DIGEST).answers == once.answers


def test_conflicts_and_unknown_ids_are_reported_and_skipped():
    entries = [entry("q2", "replace", ["北京"], ["北京市"]),
               entry("q2", "replace", ["北京"], ["Beijing"]),    # made on the old GT: conflict
               entry("nope", "add_answer", [], ["x"])]
    out = apply_gt_patch(GOLD, entries, DIGEST)
    assert out.answers == {"q2": ("北京市",)}
    assert [c.status for c in out.changes] == ["applied", "conflict", "unknown_record"]
    assert [(i.severity, "北京" in i.message or "nope" in i.message) for i in out.issues] == [("error", True),
                                                                                             ("warning", True)]


def test_a_patch_for_another_gt_file_is_refused():
    other = hashlib.sha256(b"another GT file").hexdigest()
    entries = [entry("q1", "add_answer", ["Paris"], ["Paris, France"], gt_digest=other)]
    text = write_gt_patch(entries)
    patch = read_gt_patch(text.encode(), "p.jsonl")
    with pytest.raises(GTPatchMismatch, match=r"p\.jsonl:1: .*made for the GT file with sha256 " + other[:12]):
        apply_gt_patch(GOLD, patch.entries, DIGEST)


def test_entry_validation():
    with pytest.raises(ValueError, match="exactly one"):
        entry("q1", "add_answer", [], ["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        entry("q1", "replace", ["a"], [])
    with pytest.raises(ValueError, match="op must be"):
        entry("q1", "drop", [], ["a"])


def test_hostile_lines_do_not_crash():
    good = json.loads(write_gt_patch([entry("q1", "add_answer", ["Paris"], ["Paris, France"])]))
    lines = [json.dumps({**good, "answer": "Par\\ud800is"}).replace("\\\\ud800", "\\ud800"),  # a lone surrogate
             "[" * 5000 + "]" * 5000,                                                          # too deep
             json.dumps({**good, "old": [1, 2]}),                                              # wrong types
             json.dumps({**good, "answer": "   "})]                                            # blank answer
    patch = read_gt_patch("\n".join(lines).encode("utf-8"), "h.jsonl")
    assert [e.line for e in patch.entries] == [1] and patch.entries[0].new == ("Par\ufffdis",)
    assert [i.line for i in patch.issues] == [2, 3, 4]
    assert "nested too deeply" in patch.issues[0].message and "list of strings" in patch.issues[1].message
    assert "non-empty" in patch.issues[2].message
    write_gt_patch(patch.entries).encode("utf-8")  # what was read can be written back as UTF-8


def keyed(rid, op, old, new, **kw):
    return PatchEntry(rid, "", op, tuple(old), tuple(new), kw.pop("who", "ann"), version=3,
                      gt_key=gp.record_key(rid, old), **kw)


def test_record_key_is_the_records_gt_not_a_file():
    # sha256 of the canonical JSON [id, sorted answers] (NFC, surrounding blanks removed)
    expected = hashlib.sha256(json.dumps(["q2", ["北京", "北京市"]], ensure_ascii=False,
                                         separators=(",", ":")).encode("utf-8")).hexdigest()
    assert gp.record_key("q2", ["北京市", " 北京"]) == expected
    assert gp.record_key("q1", ["Paris"]) == gp.record_key("q1", [" Paris"])
    assert gp.record_key("q1", ["Paris"]) != gp.record_key("q1", ["Lyon"]) != gp.record_key("q9", ["Lyon"])


def test_version_3_round_trip_and_bad_keyed_lines_located():
    entries = [keyed("q1", "add_answer", ["Paris"], ["the city of Paris"], session="s1"),
               keyed("q2", "replace", ["北京"], ["上海"], why="GT error", session="s1")]
    text = write_gt_patch(entries)
    first = json.loads(text.splitlines()[0])
    assert first["version"] == 3 and first["gt_key"] == gp.record_key("q1", ["Paris"]) and "gt_digest" not in first
    patch = read_gt_patch(text.encode("utf-8"), "p.jsonl")
    assert patch.issues == () and patch.entries == tuple(entries) and all(e.keyed for e in patch.entries)
    good = json.loads(text.splitlines()[0])
    lines = [json.dumps({k: v for k, v in good.items() if k != "gt_key"}),      # 1 no key
             json.dumps({**good, "old": ["London"]}),                           # 2 key of other answers
             json.dumps({**good, "version": 1})]                                # 3 version 1 needs gt_digest
    bad = read_gt_patch("\n".join(lines).encode("utf-8"), "p.jsonl")
    messages = {i.line: i.message for i in bad.issues}
    assert bad.entries == () and "'gt_key'" in messages[1] and "not the key" in messages[2]
    assert "'gt_digest'" in messages[3]


def test_keyed_entries_apply_to_any_file_with_the_record_and_its_gt():
    entries = [keyed("q1", "add_answer", ["Paris"], ["Paris, France"]), keyed("q2", "replace", ["北京"], ["上海"])]
    other_file = hashlib.sha256(b"another run of the same questions").hexdigest()
    app = apply_gt_patch(GOLD, entries, other_file)
    assert app.answers == {"q1": ("Paris", "Paris, France"), "q2": ("上海",)}
    # a record with another GT: that line is skipped with a warning; the others apply
    app = apply_gt_patch({**GOLD, "q2": ("南京",)}, entries, other_file)
    assert app.answers == {"q1": ("Paris", "Paris, France")}
    assert [c.status for c in app.changes] == ["applied", "other_gt"] and app.issues[0].severity == "warning"
    # no line for these records: refused
    with pytest.raises(GTPatchMismatch, match="none of the 2 correction"):
        apply_gt_patch({"q1": ("Rome",), "q2": ("南京",)}, entries, other_file)


@pytest.mark.parametrize("make", [entry, keyed])
def test_a_correction_and_a_variant_of_one_record_in_either_order(make):
    variant, fix = make("q3", "add_answer", ["1843"], ["in 1842"]), make("q3", "replace", ["1843"], ["1842"])
    for order in ([variant, fix], [fix, variant]):
        app = apply_gt_patch(GOLD, order, DIGEST)
        assert set(app.answers["q3"]) == {"1842", "in 1842"} and app.answers["q3"][0] == "1842"
        assert app.corrected_and_accepted("q3") == (("1842",), ("in 1842",))
        assert not app.issues
    # two different corrections: the second conflicts, the first stands
    app = apply_gt_patch(GOLD, [fix, make("q3", "replace", ["1843"], ["1841"])], DIGEST)
    assert app.answers["q3"] == ("1842",) and app.changes[1].status == "conflict"


def test_changed_records_come_in_the_order_of_their_first_entry():
    """``answers`` (written into every JSON report with a patch) follows the entries, not a set's hash order:
    the same patch gives the same bytes in every process (six ids: 1 order of 720)."""
    d = "e" * 64
    gold = {f"q{i}": (f"a{i}",) for i in range(8)} | {"问题": ("北京",)}
    order = ["q5", "问题", "q1", "q7", "q3", "q0"]
    entries = [PatchEntry(rid, d, "add_answer", gold[rid], (f"{rid}+",), "ann") for rid in order]
    entries.insert(2, PatchEntry("q1", d, "replace", gold["q1"], ("b1",), "ann"))  # q1 first touched here
    entries.append(PatchEntry("q5", d, "replace", ("stale",), ("x",), "ann"))    # a conflict: q5 stays first
    app = apply_gt_patch(gold, entries, d)
    assert list(app.answers) == order
    assert app.answers["q1"] == ("b1", "q1+") and app.answers["问题"] == ("北京", "问题+")
