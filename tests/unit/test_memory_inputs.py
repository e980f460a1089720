"""evaluators.memory.inputs: the one resolver of the page's uploads and the CLI's options."""

from __future__ import annotations

import json

from evaluators.memory.inputs import LLM_SCORE_SOURCE, pick_judge_scores, resolve_inputs
from evaluators.memory.judge import Judgement

QUESTIONS = [
    {"question_id": "t1", "question_type": "temporal-reasoning", "question": "When did I move?", "answer": "May 2023"},
    {"question_id": "u1", "question_type": "single-session-user", "question": "我的猫叫什么？", "answer": "咪咪"},
    {"question_id": "u2_abs", "question_type": "single-session-user", "question": "What is my dog's name?",
     "answer": "You never mentioned a dog."},
]
#: LongMemEval's judge output: the judged hypothesis and the judge's label, for two of the three questions.
LABELS = [
    {"question_id": "t1", "hypothesis": "In May 2023.",
     "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": True}},
    {"question_id": "u1", "hypothesis": "叫咪咪。", "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": False}},
]


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def test_questions_and_a_judge_output_score_the_judged_hypotheses():
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), labels=("out.eval-results", _jsonl(LABELS)))
    assert [(r.question_id, r.prediction) for r in inputs.results] == [("t1", "In May 2023."), ("u1", "叫咪咪。")]
    assert inputs.stored_labels == {"t1": 1.0, "u1": 0.0}
    assert inputs.stored_source == "out.eval-results"
    assert "Predictions: the 2 hypotheses in out.eval-results; the other 1 question(s) of lme.json are left out." \
        in inputs.notes
    # LongMemEval's table counts the labelled questions of the whole question file
    assert [r.question_id for r in inputs.longmemeval_questions()] == ["t1", "u1", "u2_abs"]
    assert inputs.issues == []


def test_a_predictions_file_wins_over_the_hypotheses():
    preds = _jsonl([{"question_id": "t1", "prediction": "June"}])
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), predictions=("p.jsonl", preds),
                            labels=("out.eval-results", _jsonl(LABELS)))
    assert [(r.question_id, r.prediction) for r in inputs.results] == [("t1", "June"), ("u1", ""), ("u2_abs", "")]
    assert any("2 question(s) have no prediction" in i.message for i in inputs.issues)


def test_questions_alone_are_scored_with_empty_predictions_and_said_so():
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)))
    assert [r.prediction for r in inputs.results] == ["", "", ""]
    assert inputs.notes == ["No predictions file: every prediction of the 3 question(s) of lme.json is empty "
                            "(give one keyed by question_id)."]
    assert inputs.longmemeval_questions() is None  # no stored labels


def test_mem0_results_carry_their_stored_labels():
    mem0 = {"0": [{"question": "Where?", "answer": "Oslo", "response": "Oslo", "category": "4", "llm_score": 1},
                  {"question": "When?", "answer": "May", "response": "June", "category": "2", "llm_score": 0}]}
    inputs = resolve_inputs(results=("results.json", _json(mem0)))
    assert inputs.stored_labels == {"conv0_0": 1.0, "conv0_1": 0.0}
    assert inputs.stored_source == f"{LLM_SCORE_SOURCE} results.json"
    assert inputs.longmemeval_questions() is None
    # a labels file replaces them
    labels = _jsonl([{"question_id": "conv0_1", "label": "yes"}])
    assert resolve_inputs(results=("results.json", _json(mem0)), labels=("l.jsonl", labels)).stored_labels == {
        "conv0_1": 1.0}


def test_bad_inputs_are_located_never_raised():
    inputs = resolve_inputs(questions=("q.json", b'[{"a": 1}]'), predictions=("p.jsonl", b"{oops\n"),
                            judge_cache=("c.json", b'{"entries": {}}'))
    assert inputs.results == []
    messages = [(i.file, i.severity, i.message) for i in inputs.issues]
    assert ("q.json", "error", "not a LoCoMo or LongMemEval question file; ignored") in messages
    assert any(f == "c.json" and m.startswith("not a judge cache") for f, _, m in messages)
    assert ("p.jsonl", "warning", "ignored: predictions need a question file to be joined with") in messages
    broken = resolve_inputs(questions=("q.json", b'[{"question_id": "x",\n oops]'))
    assert broken.results == [] and broken.issues[0].file == "q.json" and broken.issues[0].line == 2


def test_judgements_win_over_stored_labels():
    j = Judgement(score=0.6, mode="continuous")
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), labels=("out.eval-results", _jsonl(LABELS)))
    assert pick_judge_scores({"t1": j}, inputs.stored, inputs.stored_source) == ({"t1": j}, "judge")
    assert pick_judge_scores({}, inputs.stored, inputs.stored_source) == (
        {"t1": 1.0, "u1": 0.0}, "stored labels from out.eval-results")
    assert pick_judge_scores(None, None) == (None, "")


def test_an_undecodable_file_in_any_role_is_an_issue_not_an_exception():
    binary = b"\x81\x00\xff garbage"
    for role in ("results", "predictions", "labels", "judge_cache"):
        inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), **{role: (f"{role}.bin", binary)})
        assert any(i.file == f"{role}.bin" and "cannot be decoded" in i.message for i in inputs.issues), role
    inputs = resolve_inputs(questions=("q.bin", binary))
    assert inputs.results == [] and inputs.issues[0].file == "q.bin"


def test_a_memoryview_of_the_bytes_resolves_as_the_bytes():
    """The Long Memory page passes its uploads as views of Streamlit's buffer (no copy): every format
    resolves exactly as from bytes (JSONL, JSON, CSV, GB18030, a BOM; questions, labels, judge cache)."""
    from evaluators.demo import demo_path

    results = [{"question_id": "q1", "question_type": "single_hop", "question": "谁？", "ground_truth": "林远",
                "prediction": "林远 went"}, {"question_id": "q2", "question_type": 2, "question": "When?",
                                              "ground_truth": "2023", "prediction": "May 2023"}]
    csv_bytes = "question_id,question_type,question,ground_truth,prediction\nq1,single_hop,谁？,林远,林远\n".encode()
    cases = [
        {"results": ("r.jsonl", _jsonl(results)), "labels": ("l.jsonl", _jsonl(LABELS))},
        {"results": ("r.json", _json(results))},
        {"results": ("r.csv", b"\xef\xbb\xbf" + csv_bytes)},
        {"results": ("r.jsonl", _jsonl(results).decode("utf-8").encode("gb18030"))},
        {"questions": ("q.json", _json(QUESTIONS)), "labels": ("l.jsonl", _jsonl(LABELS))},
        {name: (name, demo_path("memory", f"demo_{name}.{ext}").read_bytes())
         for name, ext in (("results", "jsonl"), ("judge_cache", "json"))},
    ]
    for case in cases:
        a = resolve_inputs(**case)
        b = resolve_inputs(**{role: (name, memoryview(data)) for role, (name, data) in case.items()})
        assert a.results and a.results == b.results, case
        assert (a.issues, a.notes, a.stored_labels) == (b.issues, b.notes, b.stored_labels)
        assert (a.judge_cache.entries if a.judge_cache else None) == (b.judge_cache.entries if b.judge_cache else None)


def test_every_hostile_corpus_file_resolves_from_a_memoryview_as_from_bytes():
    """Each file of tests/hostile/corpus in each role (undecodable, deep, truncated, NaN, surrogates ...):
    the same records, problems, notes, labels and judge cache, or the same exception."""
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[1] / "hostile" / "corpus"
    files = [f for f in sorted(corpus.rglob("*")) if f.is_file()]
    assert len(files) >= 80
    questions = ("questions.json", _json(QUESTIONS))

    def resolve(kwargs: dict, as_view: bool):
        try:
            r = resolve_inputs(**{role: (name, memoryview(data) if as_view else data)
                                  for role, (name, data) in kwargs.items()})
        except Exception as exc:  # noqa: BLE001 - compared, not hidden
            return type(exc).__name__, str(exc)
        return r.results, r.issues, r.notes, r.stored_labels, r.judge_cache.entries if r.judge_cache else None

    for f in files:
        data = f.read_bytes()
        for role in ("results", "questions", "predictions", "labels", "judge_cache"):
            kwargs = {role: (f.name, data), **({"questions": questions} if role == "predictions" else {})}
            assert resolve(kwargs, True) == resolve(kwargs, False), (f.name, role)


def test_jsonl_is_read_line_by_line_without_first_trying_one_json_document(monkeypatch):
    """A first line holding a whole object with more than whitespace after it is JSONL: its lines are read at
    once (the whole file is not decoded and parsed as one document first); everything else, and a file that
    does not decode as a whole, still goes through the document reader, with the same records and problems."""
    from evaluators.memory import loaders

    documents = []
    original = loaders.read_json_document
    monkeypatch.setattr(loaders, "read_json_document", lambda data, file: documents.append(file) or original(data, file))
    a = '{"question_id": "a", "question_type": "single_hop", "ground_truth": "北京", "prediction": "北京"}'
    b = '{"question_id": "b", "question_type": 2, "ground_truth": "y"}'
    cases = {  # name: (bytes, question ids read, read as one document first)
        "crlf.jsonl": (f"{a}\r\n{b}\r\n".encode(), ["a", "b"], False),
        "bom.jsonl": (("\ufeff" + f"{a}\n{b}\n").encode(), ["a", "b"], False),
        "named.json": (f"{a}\n{b}\n".encode(), ["a", "b"], False),
        "gb18030.jsonl": (f"{a}\n{b}\n".encode("gb18030"), ["a", "b"], True),  # first line not UTF-8: as before
        "object_then_blanks.json": (f"{a}\n  \n\t\n".encode(), ["a"], True),  # one document
        "array.json": (f"[{a}]\n".encode(), ["a"], True),
        # a bad byte on line 2: not decodable as a whole, so the document reader's path keeps line 1
        "bad_byte.jsonl": (f"{a}\n".encode() + b'{"question_id": "b", "question_type": 2, "ground_truth": "\xff"}\n',
                           ["a"], True),
    }
    for name, (data, ids, as_document) in cases.items():
        documents.clear()
        report = loaders.load_results_file(data, name)
        assert [r.question_id for r in report.results] == ids, name
        assert (documents == [name]) is as_document, name
    bad = loaders.load_results_file(cases["bad_byte.jsonl"][0], "bad_byte.jsonl")
    assert [(i.line, i.kind, i.severity) for i in bad.issues] == [(None, "decode", "warning"), (2, "decode", "error")]
