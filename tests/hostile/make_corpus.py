"""Write the hostile-input corpus (tests/hostile/corpus/) and its manifest (tests/hostile/manifest.json).

    python tests/hostile/make_corpus.py [OUT_DIR]

Deterministic: the same files, byte for byte, on every run (fixed seeds, fixed zip dates).
Every case pairs hostile files with good ones, so a test can check that the good part is
still scored.  A case of the manifest names the CLI command to run (``{c}`` stands for the
corpus folder), the exit codes allowed, how many good records must be scored, the file an
error must name and whether it must be located (a line number or a JSON path), and the page
uploader that takes the same files.  The 20 MB one-line file is made by the tests at run
time (``huge`` cases), not committed.
"""

from __future__ import annotations

import codecs
import io
import json
import random
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "evaluators" / "demo"

# Payloads that must stay inert everywhere.
XSS = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=1</script>"
MD = "![b](http://127.0.0.1:9/beacon.png) :red[RED] $x^2$ **bold** [l](javascript:alert(1))"
FORMULA = "=cmd|' /C calc'!A0"
RTL = "evil\u202egnp.exe"
ZW = "zero\u200bwidth"
CRLF = "a\r\r<b>x</b>\n\n<div>\n\n" + XSS
PAYLOADS = [XSS, SCRIPT, MD, FORMULA, RTL, ZW, CRLF]
DEEP_ARRAY = "[" * 10_000 + "]" * 10_000
DEEP_OBJECT = '{"a":' * 10_000 + "1" + "}" * 10_000
DEEP_VALUE = "[" * 1000 + '"x"' + "]" * 1000  # under the nesting limit, deep enough to break recursion


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def jsonl(rows) -> bytes:
    return ("\n".join(r if isinstance(r, str) else dumps(r) for r in rows) + "\n").encode("utf-8")


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = compression
            zf.writestr(info, data)
    return buf.getvalue()


def bomb_zip(good: dict[str, bytes], size: int) -> bytes:
    """A zip with the good members and one ``size``-byte member of spaces (deflates about 1000 to 1)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in good.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        info = zipfile.ZipInfo("BOMB_v3.json", date_time=(2026, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(size >> 20):
                member.write(chunk)
    return buf.getvalue()


class Corpus:
    def __init__(self, out: Path):
        self.out = out
        self.cases: list[dict] = []
        self.files: dict[str, bytes] = {}

    def file(self, rel: str, data: bytes | str) -> str:
        self.files[rel] = data.encode("utf-8") if isinstance(data, str) else data
        return rel

    def case(self, name: str, task: str, args: list[str], *, exit=(0,), scored: int | None = None,
             names: str | None = None, located: bool = False, page: dict | None = None, huge: bool = False):
        self.cases.append({"name": name, "task": task, "args": args, "exit": list(exit), "scored": scored,
                           "names": names, "located": located, "page": page, "huge": huge})

    def write(self) -> None:
        for rel, data in sorted(self.files.items()):
            path = self.out / "corpus" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (self.out / "manifest.json").write_text(json.dumps({"cases": self.cases}, ensure_ascii=False, indent=1) + "\n",
                                                encoding="utf-8")


# ----------------------------------------------------------------------------------------- QA
QA_GOOD = [{"id": "g1", "question": "首都是哪里？", "answer": "北京", "prediction": "北京"},
           {"id": "g2", "question": "Who wrote Emma?", "answer": "Jane Austen", "prediction": "Austen"},
           {"id": "g3", "question": "Largest planet?", "answer": "Jupiter", "prediction": "Saturn"}]


def qa_cases(c: Corpus) -> None:
    def qa(name: str, data: bytes, suffix: str = "jsonl", *, exit=(0,), scored=3, located=True, extra=()):
        rel = c.file(f"qa/{name}.{suffix}", data)
        c.case(f"qa/{name}", "qa", ["qa", "--input", "{c}/" + rel, "--ci-resamples", "0", *extra], exit=exit,
               scored=scored, names=Path(rel).name, located=located,
               page={"page": "qa", "uploads": {"qa_upload": rel}})

    good = [dumps(r) for r in QA_GOOD]
    qa("bad_line", jsonl(good + ['{"id": "b1", "question": "q", "answer": "a", "prediction": ']))
    qa("not_an_object_line", jsonl(good + ["[1, 2, 3]", '"just a string"']))
    qa("deep_line", jsonl(good + [DEEP_ARRAY]))
    qa("deep_object_line", jsonl(good + [DEEP_OBJECT]))
    qa("deep_value", jsonl(good + ['{"id": "d1", "question": "q", "answer": "a", "prediction": %s}' % DEEP_VALUE]),
       scored=4, located=False)
    qa("deep_answer_string", jsonl(good + [dumps({"id": "d2", "question": "q", "answer": DEEP_ARRAY,
                                                  "prediction": "x"})]), scored=4, located=False)
    qa("lone_surrogate", jsonl(good + ['{"id": "s1", "question": "q\\ud800", "answer": "a\\udc00", '
                                       '"prediction": "x\\ud800"}']), scored=4)
    qa("nan_values", jsonl(good + ['{"id": "n1", "question": "q", "answer": NaN, "prediction": Infinity}',
                                   '{"id": "n2", "question": "q", "answer": "a", "prediction": NaN}']),
       scored=4, located=False)
    qa("wrong_types", jsonl(good + [dumps({"id": ["x"], "question": {"a": 1}, "answer": {"text": 5}, "prediction": 7}),
                                    dumps({"id": 5, "question": None, "answer": [1, None, {"b": 2}],
                                           "prediction": ["p"]})]), scored=None, located=False)
    qa("injection", jsonl([dumps({"id": f"p{i}", "question": p, "answer": p, "prediction": p})
                           for i, p in enumerate(PAYLOADS)] + good), scored=len(PAYLOADS) + 3, located=False)
    qa("duplicate_ids", jsonl(good + good), scored=6, located=False)
    qa("truncated", dumps(QA_GOOD)[:-30].encode(), "json", exit=(2,), scored=None)
    qa("container_wrong_type", dumps({"data": "not a list"}).encode(), "json", exit=(2,), scored=None, located=False)
    qa("array_with_junk", dumps(QA_GOOD + [1, "x", None, [2]]).encode(), "json", located=True)
    qa("invalid_utf8", jsonl(good) + b'{"id": "u1", "question": "\xff\xfe\xfa", "answer": "a"}\n', exit=(2,),
       scored=None, located=False)
    qa("gb18030", ("id,question,answer,prediction\n" + "\n".join(
        f"{r['id']},{r['question']},{r['answer']},{r['prediction']}" for r in QA_GOOD) + "\n").encode("gb18030"),
       "csv", located=False)
    qa("utf16_bom", codecs.BOM_UTF16_LE + "\n".join(good).encode("utf-16-le"), exit=(0, 2), scored=None,
       located=False)
    qa("empty", b"", exit=(2,), scored=None, located=False)
    qa("bom_only", codecs.BOM_UTF8, "json", exit=(2,), scored=None, located=False)
    qa("binary_junk", bytes(random.Random(7).randrange(256) for _ in range(4096)), exit=(2,), scored=None,
       located=False)
    qa("ragged_nul", ("id,question,answer,prediction\n" + "\n".join(
        f"{r['id']},{r['question']},{r['answer']},{r['prediction']}" for r in QA_GOOD)
        + "\nr1,too,many,cells,here,x\nr2,nul\x00byte,a,a\nr3,short\n").encode(), "csv", scored=4)
    qa("squad_no_predictions", dumps({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "Q1", "question": "首都？", "answers": [{"text": "北京"}]}]}]}]}).encode(), "json", exit=(2,),
       scored=None, located=False)
    qa("factcheck_no_predictions", jsonl([{"id": str(i), "claim": f"claim {i}", "label": "T"} for i in range(3)]),
       exit=(2,), scored=None, located=False, extra=["--dataset", "fever"])
    qa("numbers_as_everything", jsonl(good + ["1", "true", "null", "{}"]))
    rel = "qa/huge_line.jsonl"  # written at test time: 3 good lines and one 20 MB line
    c.case("qa/huge_line", "qa", ["qa", "--input", "{c}/" + rel, "--ci-resamples", "0"], scored=4, huge=True,
           names="huge_line.jsonl")


# ----------------------------------------------------------------------------------------- narrative
def narrative_cases(c: Corpus) -> None:
    gt = (DEMO / "narrative" / "EN_001_lantern_keeper_v3.json").read_bytes()
    pred = (DEMO / "narrative" / "EN_001_lantern_keeper_prediction.json").read_bytes()
    doc = json.loads(gt)

    def pair(name: str, bad_gt: bytes, bad_pred: bytes, *, scored=1, located=True, exit=(0,)):
        """A GT folder and a prediction folder: the good demo pair and the hostile pair BAD."""
        c.file(f"narrative/{name}/gt/EN_001_lantern_keeper_v3.json", gt)
        c.file(f"narrative/{name}/pred/EN_001_lantern_keeper_prediction.json", pred)
        c.file(f"narrative/{name}/gt/BAD_v3.json", bad_gt)
        c.file(f"narrative/{name}/pred/BAD_prediction.json", bad_pred)
        c.case(f"narrative/{name}", "narrative",
               ["narrative", "--gt", "{c}/narrative/" + name + "/gt", "--pred", "{c}/narrative/" + name + "/pred",
                "--format", "json", "--quiet"], exit=exit, scored=scored, names="BAD_", located=located,
               page={"page": "narrative", "uploads": {
                   "nar_gt_upload": [f"narrative/{name}/gt/EN_001_lantern_keeper_v3.json", f"narrative/{name}/gt/BAD_v3.json"],
                   "nar_pred_upload": [f"narrative/{name}/pred/EN_001_lantern_keeper_prediction.json",
                                       f"narrative/{name}/pred/BAD_prediction.json"]}})

    def variant(mutate) -> bytes:
        d = json.loads(gt)
        mutate(d)
        return dumps(d).encode()

    def spans(bad):
        def m(d):
            for ev, v in zip(d["narrative_events"], bad):
                ev["text_span"] = v
        return m

    pair("truncated", gt, pred[: len(pred) // 2])
    pair("deep", DEEP_ARRAY.encode(), DEEP_OBJECT.encode(), scored=1)
    pair("surrogate", gt, pred.replace(b'"name": "', b'"name": "\\ud800', 1), scored=2, located=False)
    pair("bad_offsets", gt, variant(spans([{"start": -5, "end": 3, "text": "x"}, {"start": 10, "end": 2, "text": ""},
                                          {"start": 10 ** 9, "end": 10 ** 9 + 5, "text": "far"},
                                          {"start": 1.5, "end": "9", "text": None}])), scored=None, located=False)
    pair("wrong_types", variant(lambda d: d.update(characters="not a list")),
         variant(lambda d: d.update(narrative_events={"a": 1})), scored=None, located=False)
    pair("duplicate_ids", gt, variant(lambda d: [ev.update(id="same") for ev in d["narrative_events"]]),
         scored=2, located=False)
    pair("injection", variant(lambda d: d["characters"].extend({"name": p, "alias": p, "archetype": p}
                                                               for p in PAYLOADS)),
         variant(lambda d: d["characters"].extend({"name": p, "alias": "", "archetype": ""} for p in PAYLOADS[:3])),
         scored=2, located=False)
    pair("nan", gt, pred.replace(b'"time_order": 1', b'"time_order": NaN', 1), scored=2, located=False)
    pair("empty_and_bom", b"", codecs.BOM_UTF8, located=False)
    pair("binary", bytes(random.Random(3).randrange(256) for _ in range(2048)), b"\x00\x01\x02", located=False)
    pair("gb18030", dumps(doc).encode("gb18030"), pred, scored=2, located=False)
    pair("invalid_utf8", gt + b"\xff", pred, located=False)
    pair("wrong_top_level", b"[1, 2, 3]", b'"a string"')

    def zipped(name: str, data: bytes, *, scored=1, exit=(0,), names="gt.zip"):
        rel = c.file(f"narrative/{name}/gt.zip", data)
        c.file(f"narrative/{name}/pred/EN_001_lantern_keeper_prediction.json", pred)
        c.case(f"narrative/{name}", "narrative",
               ["narrative", "--gt", "{c}/" + rel, "--pred", "{c}/narrative/" + name + "/pred", "--format", "json",
                "--quiet"], exit=exit, scored=scored, names=names,
               page={"page": "narrative", "uploads": {
                   "nar_gt_upload": [rel], "nar_pred_upload": [f"narrative/{name}/pred/EN_001_lantern_keeper_prediction.json"]}})

    good_member = {"EN_001_lantern_keeper_v3.json": gt}
    zipped("zip_bomb_gib", bomb_zip(good_member, 1 << 30), scored=0, exit=(2,))  # total over the limit: refused whole
    zipped("zip_bomb_member", bomb_zip(good_member, 300 << 20), names="BOMB_v3.json")  # 300 MB member refused
    zipped("zip_many_small", zip_bytes({**good_member, **{f"m{i}_v3.json": b" " * (512 << 10) for i in range(40)}}),
           scored=0, exit=(2,))
    zipped("zip_traversal", zip_bytes({"../../etc/EN_001_lantern_keeper_v3.json": gt, "/abs/x_v3.json": b"{}",
                                       "..\\..\\win\\y_v3.json": b"{}"}), names="x_v3.json")
    corrupt = bytearray(zip_bytes({**good_member, "ZZ_v3.json": gt}, zipfile.ZIP_STORED))
    at = bytes(corrupt).index(b"ZZ_v3.json") + 100
    corrupt[at] ^= 0xFF
    zipped("zip_corrupt_member", bytes(corrupt), names="ZZ_v3.json")
    zipped("zip_not_a_zip", b"PK\x03\x04 this is not really a zip", scored=0, exit=(2,))


# ----------------------------------------------------------------------------------------- test sets
def testset_cases(c: Corpus) -> None:
    items = json.loads((DEMO / "testsets" / "factual_demo.json").read_text(encoding="utf-8"))
    answers = json.loads((DEMO / "testsets" / "factual_demo_answers.json").read_text(encoding="utf-8"))
    n_items = len(items["items"])

    def ts(name: str, item_bytes: bytes | None, answer_bytes: bytes | None, *, exit=(0,), scored=None,
           located=True, names=None, answers_suffix="json"):
        irel = c.file(f"testsets/{name}_items.json", item_bytes if item_bytes is not None else dumps(items).encode())
        arel = c.file(f"testsets/{name}_answers.{answers_suffix}",
                      answer_bytes if answer_bytes is not None else dumps(answers).encode())
        c.case(f"testsets/{name}", "testsets", ["testsets", "--items", "{c}/" + irel, "--pred", "{c}/" + arel],
               exit=exit, scored=scored, names=names, located=located,
               page={"page": "testsets", "uploads": {"ts_items": irel, "ts_answers": arel}})

    def with_items(extra) -> bytes:
        d = json.loads(dumps(items))
        d["items"] = d["items"] + extra
        return dumps(d).encode()

    base = items["items"][0]
    ts("unknown_category", with_items([{**base, "id": "org_1", "category": "organization"}]), None,
       names="unknown_category_items.json")
    ts("bad_items", with_items([{"id": "x"}, "not an object", {**base, "id": base["id"]},
                                {**base, "id": "bad_diff", "difficulty": "extreme"}]), None,
       names="bad_items_items.json")
    ts("deep_items", DEEP_ARRAY.encode(), None, exit=(2,), names="deep_items_items.json", located=False)
    ts("truncated_items", dumps(items).encode()[:-50], None, exit=(2,), names="truncated_items_items.json")
    ts("injection_items", with_items([{**base, "id": f"inj{i}", "question": p, "expected_answer": p,
                                       "keywords": [p]} for i, p in enumerate(PAYLOADS)]), None, located=False)
    ts("answers_bad_lines", None, jsonl([{"id": k, "answer": v if isinstance(v, str) else str(v)}
                                         for k, v in list(answers.items())[:3]]
                                        + ['{"id": "x", "answer": ', DEEP_ARRAY, '{"answer": "no id"}']),
       answers_suffix="jsonl", names="answers_bad_lines_answers.jsonl")
    good_answers = [{"id": k, "answer": v if isinstance(v, str) else v["answer"]} for k, v in list(answers.items())[:3]]
    # one line (row) that is not UTF-8 among good ones: the good answers are kept, the line located
    ts("answers_undecodable_line", None, jsonl(good_answers[:2]) + b'{"id": "bad", "answer": "\xff\xfe"}\n'
       + jsonl(good_answers[2:]), answers_suffix="jsonl", names="answers_undecodable_line_answers.jsonl")
    ts("answers_undecodable_row", None, ("id,answer\n" + "".join(f"{a['id']},{a['answer']}\n" for a in good_answers[:2])
                                         ).encode() + b"bad,\xff\xfe\n"
       + f"{good_answers[2]['id']},{good_answers[2]['answer']}\n".encode(), answers_suffix="csv",
       names="answers_undecodable_row_answers.csv")
    ts("answers_surrogate", None, (dumps(answers)[:-1] + ', "zz_extra": "y\\ud800"}').encode(), located=False)
    ts("answers_wrong_types", None, dumps({k: [1, {"a": None}] for k in answers}).encode(), exit=(2,),
       names="answers_wrong_types_answers.json")
    ts("answers_empty", None, b"", exit=(0, 2), located=False)
    ts("items_empty", b"", None, exit=(2,), located=False)
    ts("items_wrong_top", b'{"items": "nope"}', None, exit=(2,), names="items_wrong_top_items.json")
    assert n_items > 0


# ----------------------------------------------------------------------------------------- dialogue
def dialogue_cases(c: Corpus) -> None:
    cases = (DEMO / "dialogue" / "persona_cases.json").read_bytes()
    preds = (DEMO / "dialogue" / "panda-chat-large.jsonl").read_bytes()
    good_lines = [ln for ln in preds.decode("utf-8").splitlines() if ln.strip()]

    def dlg(name: str, case_bytes: bytes | None, pred_bytes: bytes | None, *, exit=(0,), scored=None,
            located=True, names=None, pred_suffix="jsonl"):
        crel = c.file(f"dialogue/{name}_cases.json", case_bytes if case_bytes is not None else cases)
        prel = c.file(f"dialogue/{name}_pred.{pred_suffix}", pred_bytes if pred_bytes is not None else preds)
        c.case(f"dialogue/{name}", "dialogue", ["dialogue", "--cases", "{c}/" + crel, "--pred", "{c}/" + prel,
                                                "--format", "json"], exit=exit, scored=scored, names=names,
               located=located, page={"page": "dialogue", "uploads": {"dialogue_cases": crel,
                                                                       "dialogue_preds": [prel]}})

    first = json.loads(good_lines[0])
    dlg("pred_bad_lines", None, jsonl(good_lines + ['{"model": "m", "scene": ', DEEP_ARRAY, "[1]"]),
        names="pred_bad_lines_pred.jsonl")
    dlg("pred_injection", None, jsonl(good_lines + [dumps({**first, "model": p, "prediction": p}) for p in PAYLOADS]),
        located=False)
    dlg("pred_surrogate", None, jsonl(good_lines + ['{"model": "m\\ud800", "scene": "%s", "dialogue_index": %s, '
                                                    '"prediction": "x\\udc00"}' % (first["scene"],
                                                                                  dumps(first["dialogue_index"]))]),
        located=False)
    dlg("pred_wrong_types", None, jsonl(good_lines + [dumps({**first, "prediction": ["x"]}),
                                                      dumps({**first, "dialogue_index": {"a": 1}})]),
        names="pred_wrong_types_pred.jsonl")
    dlg("cases_deep", DEEP_OBJECT.encode(), None, exit=(2,), names="cases_deep_cases.json", located=False)
    dlg("cases_truncated", cases[: len(cases) // 2], None, exit=(2,), names="cases_truncated_cases.json")
    cd = json.loads(cases)
    scene = next(iter(cd["test_cases_by_scene"]))
    cd["test_cases_by_scene"][scene] = cd["test_cases_by_scene"][scene] + [
        {"context": p, "expected_response": p, "scene": scene, "dialogue_index": 900 + i} for i, p in enumerate(PAYLOADS)]
    dlg("cases_injection", dumps(cd).encode(), None, located=False)
    dlg("cases_wrong_types", dumps({"test_cases_by_scene": {"s": "not a list", "t": [1, {"context": None}]}}).encode(),
        None, exit=(2,), names="cases_wrong_types_cases.json")
    dlg("pred_csv_ragged", None, ("model,scene,dialogue_index,prediction\n"
                                  + f"m,{first['scene']},{first['dialogue_index']},ok\n"
                                  + "m,too,many,cells,here\nm,\x00,1,x\n").encode(), pred_suffix="csv",
        names="pred_csv_ragged_pred.csv")
    # empty and BOM-only uploads are read and said to be empty (not taken for "no upload")
    dlg("cases_empty", b"", None, exit=(2,), names="cases_empty_cases.json")
    dlg("cases_bom_only", codecs.BOM_UTF8, None, exit=(2,), names="cases_bom_only_cases.json")
    dlg("pred_empty", None, b"", exit=(2,), names="pred_empty_pred.jsonl")
    dlg("pred_bom_only", None, codecs.BOM_UTF8 + b"\n", exit=(2,), names="pred_bom_only_pred.jsonl")
    dlg("pred_binary", None, bytes(random.Random(5).randrange(256) for _ in range(1024)), exit=(2,), located=False)


# ----------------------------------------------------------------------------------------- memory
def memory_cases(c: Corpus) -> None:
    results = (DEMO / "memory" / "demo_results.jsonl").read_bytes()
    good = [ln for ln in results.decode("utf-8").splitlines() if ln.strip()]
    first = json.loads(good[0])

    def mem(name: str, data: bytes, *, suffix="jsonl", exit=(0,), scored=None, located=True, extra=(),
            uploads=None):
        rel = c.file(f"memory/{name}.{suffix}", data)
        c.case(f"memory/{name}", "memory", ["memory", "--results", "{c}/" + rel, "--format", "json",
                                            "--ci-resamples", "0", *extra],
               exit=exit, scored=scored, names=Path(rel).name, located=located,
               page={"page": "memory", "uploads": uploads or {"mem_results": rel}})

    mem("bad_lines", jsonl(good + ['{"question_id": ', DEEP_ARRAY, "[1]", '{"question": "no id"}']),
        scored=len(good))
    mem("deep_value", jsonl(good + ['{"question_id": "dv", "question_type": "single_hop", "question": "q", '
                                    '"ground_truth": %s, "prediction": "b"}' % DEEP_VALUE]), scored=len(good))
    mem("surrogate", jsonl(good + [dumps({**first, "question_id": "sur"})[:-1] + ', "prediction": "x\\ud800"}']),
        scored=len(good) + 1)
    mem("injection", jsonl(good + [dumps({**first, "question_id": f"inj{i}", "question": p, "prediction": p,
                                          "ground_truth": p, "question_type": p}) for i, p in enumerate(PAYLOADS)]),
        scored=len(good) + len(PAYLOADS), located=False)
    mem("duplicate_ids", jsonl(good + good[:3]), scored=len(good))
    # one line that is not UTF-8 (nor GB18030) among good ones: the good lines are scored, the bad one located
    mem("undecodable_line", jsonl(good[:10]) + b'{"question_id": "bad", "question": "\xff\xfe\xc3("}\n'
        + jsonl(good[10:]), scored=len(good))
    # a 1,000-deep value in an extra field: the question is scored, the field left out with a located warning
    mem("deep_metadata", jsonl(good + ['{"question_id": "dm", "question_type": "single_hop", "question": "q", '
                                       '"ground_truth": "a", "prediction": "a", "extra": %s}' % DEEP_VALUE]),
        scored=len(good) + 1)
    mem("wrong_types", jsonl(good + [dumps({**first, "question_id": ["x"]}), dumps({**first, "question_id": 7,
                                                                                     "prediction": {"a": 1}})]),
        scored=None, located=False)
    mem("nan", jsonl(good + [dumps({**first, "question_id": "nan1"})[:-1] + ', "ground_truth": NaN}']),
        scored=None, located=False)
    mem("truncated", dumps([json.loads(x) for x in good]).encode()[:-40], suffix="json", exit=(2,))
    mem("deep_doc", DEEP_OBJECT.encode(), suffix="json", exit=(2,), located=False)
    mem("empty", b"", exit=(2,), located=False)
    mem("binary", bytes(random.Random(9).randrange(256) for _ in range(2048)), exit=(2,), located=False)
    mem("csv_ragged", ("question_id,question_type,question,ground_truth,prediction\n"
                       "c1,single_hop,q,a,a\nc2,single_hop,too,many,cells,here\nc3,\x00,q,a,b\n").encode(),
        suffix="csv", scored=2)
    rel = "memory/huge_line.jsonl"  # written at test time: the demo's lines and one 20 MB prediction
    c.case("memory/huge_line", "memory", ["memory", "--results", "{c}/" + rel, "--format", "json",
                                          "--ci-resamples", "0"], scored=len(good) + 1, huge=True,
           names="huge_line.jsonl")
    # questions + predictions, labels and judge caches next to good results
    qrel = c.file("memory/questions_deep.json", DEEP_ARRAY.encode())
    c.case("memory/questions_deep", "memory", ["memory", "--questions", "{c}/" + qrel, "--format", "json"],
           exit=(2,), names="questions_deep.json", page={"page": "memory", "uploads": {"mem_questions": qrel}})
    rrel = c.file("memory/good_results.jsonl", results)
    for name, data in [("labels_bad", jsonl([{"question_id": "x", "label": True}, "{oops", DEEP_ARRAY])),
                       ("labels_deep", DEEP_OBJECT.encode())]:
        lrel = c.file(f"memory/{name}.jsonl", data)
        c.case(f"memory/{name}", "memory", ["memory", "--results", "{c}/" + rrel, "--labels", "{c}/" + lrel,
                                            "--format", "json", "--ci-resamples", "0"],
               scored=len(good), names=f"{name}.jsonl", page={"page": "memory", "uploads": {
                   "mem_results": rrel, "mem_labels": lrel}})
    for name, data in [("cache_deep", DEEP_OBJECT.encode()),
                       ("cache_wrong", dumps({"format": "evalboard-memory-judge-cache", "entries": {"q": "x", "r": [1]}}))]:
        crel = c.file(f"memory/{name}.json", data)
        c.case(f"memory/{name}", "memory", ["memory", "--results", "{c}/" + rrel, "--cache", "{c}/" + crel,
                                            "--format", "json", "--ci-resamples", "0"],
               exit=(0, 2), scored=None, names=f"{name}.json", page={"page": "memory", "uploads": {
                   "mem_results": rrel, "mem_cache": crel}})


# ----------------------------------------------------------------------------------------- review
def _review_line(**fields) -> str:
    return json.dumps(fields, ensure_ascii=False, sort_keys=True)


def _digest(payload: dict) -> str:
    import hashlib

    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


REVIEW_ITEMS = [{"kind": "qa", "id": f"r{i}", "question": ["首都是哪里？", "Who wrote Emma?"][i % 2] + f" #{i}",
                 "ground_truth": ["北京", "Jane Austen"][i % 2], "prediction": ["北京", XSS][i % 2],
                 "system": "sys-" + "ab"[i % 2], "exact_match": float(i % 2 == 0), "token_f1": 0.5}
                for i in range(6)]


def review_files() -> dict[str, str]:
    """Review session exports (format 2) and hostile variants, for ``review import`` and the Review page.

    ``full_session.jsonl``: a blind session (k = 2, seed 7, guidelines, an adjudicator), 6 items (the
    last a gold item), 3 decided (4 decisions, one with its time on the item), one adjudication.  The other files are read against it (tests/hostile/
    test_review_hostile.py)."""
    name = "盲审 blind session"
    head = _review_line(type="session", format=2, session=name, kind="qa", created_by="owner-olga",
                        created_at="2026-01-05T09:00:00.000000+00:00", blind=True, k=2, seed=7,
                        settings={"adjudicators": ["adj-ada"], "guidelines": "Mark **GT errors** first.",
                                  "guidelines_version": 1}, uploads=[])
    # the last item is a gold item (its label is known), still undecided
    items = [_review_line(type="item", session=name, item_digest=_digest(p), position=n, item=p,
                          gold="gt_error" if n == 5 else None) for n, p in enumerate(REVIEW_ITEMS)]
    d = [_digest(p) for p in REVIEW_ITEMS]

    def dec(n, who, label, version, stamp, comment="", **extra):
        return _review_line(type="decision", session=name, item_digest=d[n], annotator=who, label=label, score=None,
                            comment=comment, status="submitted", version=version, updated_at=stamp, **extra)

    decisions = [dec(0, "alice", "model_error", 3, "2026-01-06T10:00:00.000000+00:00", "third look"),
                 dec(0, "bob", "gt_error", 1, "2026-01-06T10:05:00.000000+00:00", FORMULA),
                 dec(1, "alice", "acceptable_variant", 1, "2026-01-06T10:01:00.000000+00:00", seconds=12.5),
                 dec(2, "bob", "model_error", 2, "2026-01-06T10:02:00.000000+00:00", "说明")]
    adjudication = _review_line(type="adjudication", session=name, item_digest=d[0], adjudicator="adj-ada",
                                label="gt_error", comment="the key is wrong", updated_at="2026-01-07T08:00:00.000000+00:00")
    full = [head, *items, *decisions, adjudication]
    files = {"full_session.jsonl": "\n".join(full) + "\n"}
    # an older copy of alice's and bob's decisions (lower version / earlier time): conflicts, never imported
    files["older_export.jsonl"] = "\n".join([
        head, dec(0, "alice", "acceptable_variant", 2, "2026-01-06T09:00:00.000000+00:00", "older"),
        dec(2, "bob", "gt_error", 2, "2026-01-06T09:59:00.000000+00:00", "earlier time"),
        dec(1, "alice", "acceptable_variant", 1, "2026-01-06T10:01:00.000000+00:00"),  # the same: unchanged
        dec(3, "carol", "model_error", 1, "2026-01-06T11:00:00.000000+00:00", "new")]) + "\n"
    files["duplicates.jsonl"] = "\n".join([
        head, *items, dec(4, "dave", "model_error", 1, "2026-01-08T10:00:00.000000+00:00"),
        dec(4, "dave", "gt_error", 1, "2026-01-08T10:00:01.000000+00:00"),
        dec(5, "dave", "model_error", 1, "2026-01-08T10:00:02.000000+00:00")]) + "\n"
    qa_item = json.loads(items[3])
    bad_items = [dict(qa_item, item=dict(REVIEW_ITEMS[3], exact_match="yes"), item_digest=None),
                 dict(qa_item, item={"kind": "dialogue_pair", "id": "p1", "sides": {"A": "left", "B": ["x"]}},
                      item_digest=None)]
    files["bad_types.jsonl"] = "\n".join([
        head, *items,
        _review_line(**dict(json.loads(dec(1, "x", "model_error", 1, "2026-01-09T00:00:00.000000+00:00")),
                            annotator={"name": "alice"})),
        dec(1, "erin", "model_error", 1, "2026-01-09T00:00:00.000000+00:00").replace(
            '"score": null', '"score": true'),
        dec(2, "erin", "a_better", 1, "2026-01-09T00:00:00.000000+00:00"),
        *(_review_line(**{k: v for k, v in b.items() if v is not None}) for b in bad_items),
        dec(3, "erin", "model_error", 1, "2026-01-09T00:00:00.000000+00:00", "good line")]) + "\n"
    files["deep_value.jsonl"] = "\n".join([
        head, *items,
        dec(1, "frank", "model_error", 1, "2026-01-09T00:00:00.000000+00:00").replace('"comment": ""',
                                                                                       '"comment": ' + DEEP_VALUE),
        '{"type": "item", "session": "%s", "position": 9, "item": {"id": "deep", "x": %s}}' % (name, DEEP_VALUE),
        dec(4, "frank", "model_error", 1, "2026-01-09T00:00:00.000000+00:00", "after the deep lines")]) + "\n"
    undecodable = [head, *items, dec(1, "gina", "model_error", 1, "2026-01-09T00:00:00.000000+00:00", "NUL \x00"),
                   dec(2, "gina", "model_error", 1, "2026-01-09T00:00:00.000000+00:00", "good after")]
    files["undecodable.jsonl"] = "\n".join(undecodable) + "\n"  # its bad bytes are added by review_cases
    # keys the importer keeps for itself: today an item line with "_text" and no item ended the import
    # with a KeyError; "_where" must not place an issue where the file says
    files["private_keys.jsonl"] = "\n".join([
        head, items[0],
        _review_line(type="item", session=name, item_digest="ab" * 32, position=1, _text="not a payload"),
        _review_line(**dict(json.loads(dec(0, "hal", "model_error", 1, "2026-01-09T00:00:00.000000+00:00")),
                            _where="$[99]", score=9)),
        dec(0, "ida", "model_error", 1, "2026-01-09T00:00:00.000000+00:00", "good line")]) + "\n"
    files["control_names.jsonl"] = "\n".join([
        _review_line(type="session", format=2, session="evil\x1b[2J\x1b]0;pwned\x07name", kind="qa",
                     created_by="o", blind=False, k=1, seed=0, settings={}, uploads=[]),
        _review_line(type="session", format=2, session="two\nlines", kind="qa", created_by="o", blind=False, k=1,
                     seed=0, settings={}, uploads=[]),
        _review_line(type="session", format=2, session="plain " + RTL, kind="qa", created_by="o", blind=False, k=1,
                     seed=0, settings={}, uploads=[]),
        _review_line(type="item", session="plain " + RTL, item_digest=_digest(REVIEW_ITEMS[0]), position=0,
                     item=REVIEW_ITEMS[0], gold=None)]) + "\n"
    files["label_studio_bad.json"] = label_studio_bad(name)
    return files


def label_studio_bad(name: str) -> str:
    """A Label Studio tasks file (JSON array, one task a line after the ``[``) with bad tasks and
    annotations between good ones, cut off inside its last task: tasks 0, 3 and 6 import, each with
    one annotation; every other problem is located by its line and JSON path."""

    def meta(n):
        return {"session": name, "item_digest": _digest(REVIEW_ITEMS[n]), "position": n, "gold": None}

    def choice(label):
        return {"from_name": "label", "to_name": "question", "type": "choices", "value": {"choices": [label]}}

    def ann(who, label="model_error", **extra):
        return {"completed_by": {"email": who}, "result": [choice(label)],
                "updated_at": "2026-01-09T00:00:00Z", **extra}

    deep: dict = {}
    node = deep
    for _ in range(40):
        node["x"] = {}
        node = node["x"]
    tasks = [
        {"data": {**REVIEW_ITEMS[0], "evalboard": meta(0)}, "annotations": [ann("alice@example.com")]},   # good
        42,                                                                                       # not a task
        {"data": "just text"},                                                                    # data not an object
        {"data": {**REVIEW_ITEMS[3], "evalboard": meta(3)}, "annotations": [
            {"completed_by": ["x"], "result": [choice("model_error")]},                           # completed_by
            {"completed_by": 7, "result": [choice("Positive")]},                                  # not our label
            {"completed_by": 8, "result": [choice("model_error"), choice("gt_error")]},           # two choices
            dict(ann("r@example.com"), result=[choice("gt_error"), {"from_name": "score", "to_name": "question",
                                                "type": "rating", "value": {"rating": 9}}]),      # score 9
            ann("n@example.com", lead_time=-1),                                                    # negative time
            ann("y@example.com", updated_at="yesterday"),                                         # not a time
            dict(ann("erin@example.com"), result=[choice("model_error"), {                             # good
                "from_name": "comment", "to_name": "question", "type": "textarea", "value": {"text": [FORMULA]}}])]},
        {"data": dict(REVIEW_ITEMS[4], exact_match="yes"), "annotations": [ann("z@example.com")]},  # bad item type
        {"data": {"id": "deep", "question": "q", "x": deep}},                                    # nested too deep
        {"data": {**REVIEW_ITEMS[1], "evalboard": meta(1)}, "annotations": [ann("bob@example.com", "gt_error")]},
    ]
    lines = [json.dumps(t, ensure_ascii=False, sort_keys=True) for t in tasks]
    return "[\n" + ",\n".join(lines) + ',\n{"data": {"question": "cut off here'


def judge_cases(c: Corpus) -> None:
    """``judge calibrate`` (and the Judge lab page) with hostile labels or verdicts beside the demo's good ones."""
    labels = (DEMO / "judgelab" / "labels.jsonl").read_bytes()
    verdicts = (DEMO / "judgelab" / "verdicts_v1.jsonl").read_bytes()
    good = [ln for ln in labels.decode("utf-8").splitlines() if ln.strip()]
    vgood = [ln for ln in verdicts.decode("utf-8").splitlines() if ln.strip()]
    vrel = c.file("judge/good_verdicts.jsonl", verdicts)
    lrel = c.file("judge/good_labels.jsonl", labels)

    def judge(name: str, data: bytes, *, suffix="jsonl", exit=(0,), scored=None, located=True, role="labels"):
        rel = c.file(f"judge/{name}.{suffix}", data)
        lab, ver = (rel, vrel) if role == "labels" else (lrel, rel)
        c.case(f"judge/{name}", "judge", ["judge", "calibrate", "--labels", "{c}/" + lab, "--verdicts", "{c}/" + ver,
                                          "--format", "json", "--resamples", "0"],
               exit=exit, scored=scored, names=Path(rel).name, located=located,
               page={"page": "judgelab", "uploads": {"jl_labels": lab, "jl_verdicts": [ver]}})

    judge("bad_lines", jsonl(good + ['{"item_id": ', DEEP_ARRAY, "[1]", '{"label": 1}', '{"item_id": "x", "label": 7}']),
          scored=len(good))
    judge("injection", jsonl(good + [dumps({"item_id": p, "label": i % 2, "slice": p,
                                            "guidelines_version": json.loads(good[0])["guidelines_version"]})
                                     for i, p in enumerate(PAYLOADS)]), scored=len(good) + len(PAYLOADS), located=False)
    # a line that is neither UTF-8 nor GB18030: the file is refused whole, named (labels are read in one decoding)
    judge("undecodable_line", jsonl(good[:10]) + b'{"item_id": "bad", "label": "\xff\xfe\xc3("}\n' + jsonl(good[10:]),
          exit=(2,), located=False)
    judge("deep_doc", DEEP_OBJECT.encode(), suffix="json", exit=(2,), located=False)
    judge("empty", b"", exit=(2,), located=False)
    judge("binary", bytes(random.Random(11).randrange(256) for _ in range(2048)), exit=(2,), located=False)
    judge("verdicts_bad", jsonl(vgood + ['{"item_id": ', DEEP_ARRAY, dumps({"item_id": "c000", "verdict": "maybe"}),
                                         dumps({"item_id": SCRIPT, "verdict": 1, "judge": SCRIPT})]),
          scored=len(good), role="verdicts")


def review_cases(c: Corpus) -> None:
    """Files only (no CLI case in the manifest): tests/hostile/test_review_hostile.py imports them."""
    for rel, text in review_files().items():
        data = text.encode("utf-8")
        if rel == "undecodable.jsonl":
            lines = data.split(b"\n")
            lines.insert(8, b'{"type": "decision", "comment": "\xff\xfe not UTF-8 \xc3\x28"}')
            data = b"\n".join(lines)
        c.file(f"review/{rel}", data)


def build(out: Path) -> Corpus:
    corpus = Corpus(out)
    for make in (qa_cases, narrative_cases, testset_cases, dialogue_cases, memory_cases, judge_cases,
                 review_cases):
        make(corpus)
    corpus.write()
    return corpus


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    made = build(target)
    print(f"{len(made.files)} files, {len(made.cases)} cases -> {target}")
