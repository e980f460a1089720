"""Label Studio interchange of review sessions (evaluators/review/label_studio.py): export -> import
into an empty database -> export gives the same tasks; a file written from Label Studio's documented
format imports; an edit made in Label Studio comes back through the version-respecting import; the
labeling config matches the tasks; the CLI finds the format.  On SQLite and PostgreSQL (``review_url``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from evaluators.cli import main
from evaluators.io.json_array import iter_json_array
from evaluators.reports.review import label_studio_config
from evaluators.review import ReviewStore
from evaluators.review.label_studio import export_tasks, import_label_studio
from evaluators.review.store import item_digest

ITEMS = [{"kind": "qa", "id": f"q{i}", "question": ["首都是哪里？", "Who wrote Emma?"][i % 2] + f" #{i}",
          "ground_truth": ["北京", "Jane Austen"][i % 2], "prediction": ["北京", "Austen"][i % 2], "system": "sys-a",
          "exact_match": float(i % 2 == 0), "token_f1": [1.0, 0.5][i % 2]} for i in range(4)]


def _session(store: ReviewStore, name: str = "审阅 <LS> & \"export\"", **kw):
    s = store.create_session(name, "qa", ITEMS, created_by="olga", k=2, **kw)
    items = store.items(s.id)
    store.save_decision(items[0].id, "alice", label="model_error", score=2, comment="说明\nsecond line", seconds=12.5)
    store.save_decision(items[0].id, "bob", label="gt_error")
    store.save_decision(items[1].id, "alice", label=None, status="skipped", seconds=3)
    store.save_decision(items[2].id, "bob", label="acceptable_variant", status="draft")
    return s, items


def _tasks(text: str) -> list[dict]:
    return json.loads(text)


def _decisions(store: ReviewStore, session_id: int) -> list[tuple]:
    return [(d.item_digest, d.annotator, d.label, d.score, d.comment, d.status, d.updated_at, d.seconds)
            for d in store.decisions(session_id)]


def test_export_then_import_into_an_empty_database_gives_the_same_decisions(review_url, tmp_path):
    source = ReviewStore(tmp_path / "source.sqlite")
    s, items = _session(source, gold={item_digest(ITEMS[3]): "gt_error"})
    first = export_tasks(source, s.id)
    tasks = _tasks(first)
    assert len(tasks) == 4                                    # every item, the undecided one too
    t0 = tasks[0]
    alice, bob = t0["annotations"]
    assert alice == {"completed_by": {"email": "alice"}, "created_at": alice["updated_at"], "ground_truth": False,
                     "lead_time": 12.5, "updated_at": alice["updated_at"], "was_cancelled": False,
                     "result": [{"from_name": "label", "to_name": "question", "type": "choices",
                                 "value": {"choices": ["model_error"]}},
                                {"from_name": "score", "to_name": "question", "type": "rating", "value": {"rating": 2}},
                                {"from_name": "comment", "to_name": "question", "type": "textarea",
                                 "value": {"text": ["说明\nsecond line"]}}]}
    assert "lead_time" not in bob                              # not measured
    # the automatic verdict: exact match 1.0 >= 0.5 is acceptable; item 1's 0.0 is a model error
    assert t0["predictions"] == [{"model_version": "sys-a", "score": 1.0, "result": [
        {"from_name": "label", "to_name": "question", "type": "choices", "value": {"choices": ["acceptable_variant"]}}]}]
    assert tasks[1]["predictions"][0]["result"][0]["value"]["choices"] == ["model_error"]
    assert tasks[1]["annotations"][0]["was_cancelled"] is True and tasks[1]["annotations"][0]["result"] == []
    assert tasks[2]["annotations"] == [] and tasks[2]["drafts"][0]["completed_by"] == {"email": "bob"}
    assert tasks[3]["data"]["evalboard"]["gold"] == "gt_error" and tasks[3]["annotations"] == []
    assert {k: v for k, v in t0["data"].items() if k != "evalboard"} == ITEMS[0]

    store = ReviewStore(review_url)
    report = import_label_studio(store, first.encode("utf-8"), "tasks.json")
    assert (report.sessions_created, report.items_added, report.written, report.issues) == (1, 4, 4, [])
    again = store.session_by_name(s.name)
    assert export_tasks(store, again.id) == first             # the same tasks, byte for byte
    assert _decisions(store, again.id) == _decisions(source, s.id)
    assert [i.gold for i in store.items(again.id)] == [None, None, None, "gt_error"]
    report = import_label_studio(store, first.encode("utf-8"), "tasks.json")
    assert (report.written, report.unchanged, report.conflicts) == (0, 4, 0)  # idempotent


# Written from Label Studio's documentation, not by EvalBoard: the task of "Label Studio JSON format of
# annotated tasks" (https://labelstud.io/guide/task_format: id, created_at, project, annotations with
# id/result/was_cancelled/ground_truth/created_at/updated_at/lead_time/result_count/task/completed_by as a
# user id; predictions with created_ago/model_version/score), the annotators of "Specifying annotators during
# import" on the same page ({"email": ...} and null), the result fields of the text classification example
# of "Basic Label Studio JSON format" (https://labelstud.io/guide/tasks: readonly, hidden, extra data keys
# ref_id and meta_info) and a pre-1.0 "completions" task.  The labels are those of our labeling config.
DOCUMENTED = """[
  {
    "id": 1,
    "created_at": "2021-03-09T21:52:49.513742Z",
    "updated_at": "2021-03-09T22:16:08.746926Z",
    "project": 83,
    "data": {"question": "Who wrote Emma?", "ground_truth": "Jane Austen", "prediction": "Austen",
             "ref_id": 456, "meta_info": {"timestamp": "2020-03-09 18:15:28.212882", "location": "North Pole"}},
    "annotations": [
      {
        "id": "1001",
        "result": [{"from_name": "label", "id": "Dx_aB91ISN", "to_name": "question", "type": "choices",
                    "readonly": false, "hidden": false, "value": {"choices": ["acceptable_variant"]}}],
        "was_cancelled": false,
        "ground_truth": false,
        "created_at": "2021-03-09T22:16:08.728353Z",
        "updated_at": "2021-03-09T22:16:08.728378Z",
        "lead_time": 4.288,
        "result_count": 0,
        "task": 1,
        "completed_by": 10
      },
      {
        "result": [{"from_name": "label", "to_name": "question", "type": "choices", "value": {"choices": ["model_error"]}},
                   {"from_name": "score", "to_name": "question", "type": "rating", "value": {"rating": 2}},
                   {"from_name": "comment", "to_name": "question", "type": "textarea",
                    "value": {"text": ["只写了姓", "surname only"]}}],
        "completed_by": {"email": "annotator@example.com"},
        "created_at": "2021-03-10T08:00:00Z",
        "updated_at": "2021-03-10T08:05:00.5+01:00",
        "lead_time": 30
      },
      {"result": [], "was_cancelled": true, "completed_by": null, "created_at": "2021-03-11T09:00:00Z"}
    ],
    "predictions": [
      {"created_ago": "3 hours", "model_version": "model 1", "score": 0.95,
       "result": [{"from_name": "label", "to_name": "question", "type": "choices",
                   "value": {"choices": ["acceptable_variant"]}}]}
    ]
  },
  {"data": {"question": "首都是哪里？", "ground_truth": "北京", "prediction": "上海"},
   "completions": [{"result": [{"from_name": "label", "to_name": "question", "type": "choices",
                                "value": {"choices": ["model_error"]}}], "completed_by": 11}]}
]
"""


def test_a_file_in_label_studios_documented_format_imports(review_url):
    store = ReviewStore(review_url)
    report = import_label_studio(store, DOCUMENTED.encode("utf-8"), "documented.json", created_by="importer")
    assert (report.sessions_created, report.items_added, report.written, report.issues) == (1, 2, 4, [])
    s = store.session_by_name("Label Studio: documented.json")
    first, second = store.items(s.id)
    assert first.payload == {"question": "Who wrote Emma?", "ground_truth": "Jane Austen", "prediction": "Austen",
                             "ref_id": 456, "meta_info": {"timestamp": "2020-03-09 18:15:28.212882",
                                                          "location": "North Pole"}}
    assert second.payload["prediction"] == "上海"
    got = {(d.item_id, d.annotator): (d.label, d.score, d.comment, d.status, d.updated_at, d.seconds)
           for d in store.decisions(s.id) if d.item_id == first.id}
    assert got == {
        # a user id becomes "label-studio user <id>"; "...728378Z" is UTC
        (first.id, "label-studio user 10"): ("acceptable_variant", None, "", "submitted",
                                             "2021-03-09T22:16:08.728378+00:00", 4.288),
        # 08:05:00.5 at +01:00 is 07:05:00.5 UTC; the two text lines are one comment
        (first.id, "annotator@example.com"): ("model_error", 2, "只写了姓\nsurname only", "submitted",
                                              "2021-03-10T07:05:00.500000+00:00", 30.0),
        # completed_by null: the importing user; was_cancelled: skipped; no updated_at: its created_at
        (first.id, "importer"): (None, None, "", "skipped", "2021-03-11T09:00:00.000000+00:00", None),
    }
    (late,) = [d for d in store.decisions(s.id) if d.item_id == second.id]  # a pre-1.0 completion, no time:
    assert (late.annotator, late.label, late.status) == ("label-studio user 11", "model_error", "submitted")
    assert late.updated_at.endswith("+00:00") and late.updated_at > "2026"   # the import's time


def test_a_label_studio_edit_comes_back_and_an_older_one_is_a_conflict(review_url):
    store = ReviewStore(review_url)
    s, items = _session(store)
    tasks = _tasks(export_tasks(store, s.id))
    alice, bob = tasks[0]["annotations"]
    # in Label Studio alice changed her mind later; bob's copy was edited at a time before his save
    alice["result"][0]["value"]["choices"] = ["acceptable_variant"]
    alice["updated_at"] = "2999-01-01T00:00:00Z"
    bob["result"][0]["value"]["choices"] = ["model_error"]
    bob["updated_at"] = "2000-01-01T00:00:00Z"
    text = "[\n" + ",\n".join(json.dumps(t, ensure_ascii=False) for t in tasks) + "\n]\n"
    report = import_label_studio(store, text.encode("utf-8"), "edited.json")
    assert (report.written, report.unchanged, report.conflicts) == (1, 2, 1)
    (issue,) = report.issues
    assert (issue.kind, issue.line, issue.path) == ("conflict", 2, "[0].annotations[1]")
    a = store.decision(items[0].id, "alice")
    assert (a.label, a.version, a.updated_at) == ("acceptable_variant", 2, "2999-01-01T00:00:00.000000+00:00")
    assert store.decision(items[0].id, "bob").label == "gt_error"   # never replaced by the older edit


def _config_names(config: str) -> tuple[dict[str, str], dict[str, str], set[str]]:
    root = ET.fromstring(config)
    texts = {t.get("name"): t.get("value") for t in root.iter("Text")}
    controls = {c.get("name"): c.get("toName") for tag in ("Choices", "Rating", "TextArea") for c in root.iter(tag)}
    choices = {c.get("value") for c in root.iter("Choice")}
    return texts, controls, choices


@pytest.mark.parametrize("blind", [False, True])
def test_the_labeling_config_matches_the_tasks(tmp_path, blind):
    store = ReviewStore(tmp_path / "r.sqlite")
    s, _ = _session(store, blind=blind)
    pair = store.create_session("A/B", "dialogue_pair", [
        {"kind": "dialogue_pair", "id": f"c{i}", "context": "你好", "ground_truth": "hi",
         "sides": {"A": {"system": "m1", "prediction": f"a{i}"}, "B": {"system": "m2", "prediction": f"b{i}"}}}
        for i in range(2)], created_by="olga")
    store.save_decision(store.items(pair.id)[0].id, "alice", label="b_better")
    for session, labels in ((s, {"model_error", "gt_error", "acceptable_variant", "correct"}),
                            (pair, {"a_better", "b_better", "tie"})):
        config = label_studio_config(store, session.id)
        texts, controls, choices = _config_names(config)            # parses: every user string escaped
        assert choices == labels and set(controls) == {"label", "score", "comment"}
        assert set(controls.values()) <= set(texts)                 # controls point at shown objects
        assert ("system" in texts) is (session is s and not blind)  # a blind session's config hides systems
        for task in _tasks(export_tasks(store, session.id)):
            for name, value in texts.items():                       # every $field exists in every task
                node = task["data"]
                for part in value.lstrip("$").split("."):
                    node = node[part]
                assert isinstance(node, (str, int, float)), (name, node)
            for entry in task["annotations"] + task.get("drafts", []) + task["predictions"]:
                for r in entry["result"]:
                    assert r["from_name"] in controls and r["to_name"] == controls[r["from_name"]]
                    if r["type"] == "choices":
                        assert set(r["value"]["choices"]) <= choices
    assert "&lt;LS&gt; &amp; &quot;export&quot;" in label_studio_config(store, s.id)
    assert _config_names(label_studio_config(store, pair.id))[0] == {
        "context": "$context", "ground_truth": "$ground_truth", "prediction_a": "$sides.A.prediction",
        "prediction_b": "$sides.B.prediction"}


def test_cli_exports_label_studio_and_import_finds_the_format(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    store = ReviewStore(db)
    s, _ = _session(store, name="cli")
    tasks, config = tmp_path / "tasks.json", tmp_path / "config.xml"
    assert main(["review", "export", "--db", str(db), "--session", "cli", "--format", "label-studio",
                 "--out", str(tasks)]) == 0
    assert main(["review", "export", "--db", str(db), "--session", "cli", "--format", "label-studio-config",
                 "--out", str(config)]) == 0
    assert tasks.read_text(encoding="utf-8") == export_tasks(store, s.id)
    assert config.read_text(encoding="utf-8") == label_studio_config(store, s.id)
    other = tmp_path / "other.sqlite"
    assert main(["review", "import", "--db", str(other), "--input", str(tasks)]) == 0   # found: a JSON array
    assert "4 decision(s) written" in capsys.readouterr().out
    assert main(["review", "import", "--db", str(other), "--input", str(tasks), "--format", "jsonl"]) == 2
    assert "nothing imported" in capsys.readouterr().err
    one = tmp_path / "one.json"                                  # one task object: with --format label-studio
    one.write_text(json.dumps(json.loads(DOCUMENTED)[1]), encoding="utf-8")
    assert main(["review", "import", "--db", str(other), "--input", str(one), "--format", "label-studio",
                 "--session", "single"]) == 0
    assert ReviewStore(other).session_by_name("single").n_items == 1
    assert main(["review", "import", "--db", str(other), "--input", str(one), "--format", "csv"]) == 2


def test_the_tasks_stream_as_a_json_array_read_one_task_at_a_time(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    s, _ = _session(store)
    text = export_tasks(store, s.id).encode("utf-8")
    got = list(iter_json_array(text, "tasks.json", chunk_bytes=7))  # chunks cut tasks and characters anywhere
    assert [g[2] for g in got] == json.loads(text) and [g[1] for g in got] == [2, 3, 4, 5]  # one task a line


def test_the_review_page_offers_the_label_studio_downloads(tmp_path, monkeypatch):
    from tests.conftest import ROOT
    from tests.pages.helpers import page_app

    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    s, _ = _session(ReviewStore(tmp_path / "review.sqlite"), name="page")
    at = page_app(str(ROOT / "pages" / "6_Review.py"))
    at.query_params["annotator"] = "olga"
    at.query_params["session"] = str(s.id)
    at.run()
    at.button(key="review_confirm_link").click().run()
    at.segmented_control(key="review_view").set_value("export").run()
    assert not at.exception, at.exception
    assert {b.proto.label for b in at.get("download_button")} >= {"Label Studio tasks (JSON)",
                                                                  "Label Studio labeling config (XML)"}
