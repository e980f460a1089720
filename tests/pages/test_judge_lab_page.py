"""The Judge lab page (AppTest): the demo's figures equal scikit-learn on the demo's own split, the overfit warning
names the version that memorised its dev items, the length bias is found in the version that has one, and labels
from a review session turn each disagreeing id into a link to that item on the Review page."""

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from evaluators.demo import demo_path
from evaluators.judgelab import HumanLabel, assign_split
from evaluators.judgelab.inputs import read_labels, read_verdicts
from evaluators.reports.format import number
from evaluators.review import ReviewStore
from tests.pages.helpers import JUDGELAB_PAGE, capture_downloads, metric_values, page_app, run_page

VERSIONS = ("verdicts_v1.jsonl", "verdicts_v2.jsonl", "verdicts_v3.jsonl")


def _demo_bytes(name):
    return demo_path("judgelab", name).read_bytes()


@pytest.fixture(scope="module")
def demo():
    labels = read_labels(_demo_bytes("labels.jsonl")).labels
    judges = [read_verdicts(_demo_bytes(n)).judges[0] for n in VERSIONS]
    split = assign_split(labels, seed=0, dev_fraction=0.5)  # the lab's default split
    return labels, judges, split


def _side(labels, verdicts, split, side):
    ids = sorted(lab.item_id for lab in labels if split.side(lab.item_id) == side)
    truth = {lab.item_id: lab.label for lab in labels}
    return ids, [truth[i] for i in ids], [verdicts[i] for i in ids]


def test_demo_versions_side_by_side_equal_sklearn(demo):
    labels, judges, split = demo
    with pytest.MonkeyPatch.context() as mp:
        made = capture_downloads(mp)
        at = run_page(JUDGELAB_PAGE, source="demo")
        report = json.loads(made["judge_calibration.json"]())
    table = at.dataframe[0].value
    kappas = {}
    for (version, verdicts), cal in zip(judges, report["judges"]):
        for side in ("dev", "test"):
            ids, y, v = _side(labels, verdicts, split, side)
            kappa = cohen_kappa_score(y, v)
            assert cal[side]["cohen_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
            assert cal[side]["n_items"] == len(ids)
            assert cal[side]["confusion"] == confusion_matrix(y, v, labels=[0, 1]).tolist()
            row = table[(table["judge"] == version.label) & (table["side"] == side)].iloc[0]
            assert row["kappa"].startswith(f"{number(kappa)} [") and row["n"] == str(len(ids))
            kappas[version.label, side] = kappa
    # the memorised version: dev kappa 1, test kappa about 0.26; the page's cards and its one warning
    assert kappas["v3 few-shot", "dev"] == 1.0 and 0.2 < kappas["v3 few-shot", "test"] < 0.35
    cards = metric_values(at)
    assert cards["Labelled items"] == "200" and cards["Judge versions"] == "3" and cards["Overfit"] == "1"
    assert cards["Dev / test"] == f"{len(split.ids('dev'))} / {len(split.ids('test'))}"
    assert cards["Best test kappa"] == number(max(k for (n, s), k in kappas.items() if s == "test"))
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("v3 few-shot: overfit: dev kappa 1.000 lies above the test kappa")
    # corrected scores: one row per version, the raw judge share = the share of its target verdicts called right
    corrected = at.dataframe[1].value
    targets = {v.label: d for v, d in read_verdicts(_demo_bytes("target_verdicts.jsonl")).judges}
    for name, verdicts in targets.items():
        raw = corrected[corrected["judge"] == name].iloc[0]["raw judge"]
        assert raw.startswith(number(sum(verdicts.values()) / len(verdicts)) + " [")


def test_demo_confusion_and_bias_views(demo):
    labels, judges, split = demo
    at = page_app(JUDGELAB_PAGE, source="demo", jl_view="confusion")
    at.run()
    assert not at.exception
    text = [m.value for m in at.markdown]
    version, verdicts = judges[2]
    ids, y, v = _side(labels, verdicts, split, "test")
    fp = [i for i, a, b in zip(ids, y, v) if a == 0 and b == 1]
    assert f"**test · judge right, people wrong** ({len(fp)}): {', '.join(fp)}" in text
    assert not any("/Review?" in t for t in text)  # labels from a file: no review item to open
    at.segmented_control(key="jl_view").set_value("bias").run()
    assert not at.exception
    lengths = {json.loads(line)["item_id"]: len(json.loads(line)["answer"])
               for line in _demo_bytes("items.jsonl").decode("utf-8").splitlines()}
    bias = at.dataframe[0].value
    assert list(bias["interval excludes 0"]) == ["no", "yes", "no"]  # v2 was built with a length bias
    # the slope: least squares of the verdict on length / 100 and the human label, written here
    truth = {lab.item_id: lab.label for lab in labels}
    for (version, verdicts), (_, row) in zip(judges, bias.iterrows()):
        order = sorted(truth)
        x = np.column_stack([np.ones(len(order)), [lengths[i] / 100 for i in order], [truth[i] for i in order]])
        slope = np.linalg.lstsq(x, np.array([verdicts[i] for i in order], float), rcond=None)[0][1]
        assert row["judge"] == version.label and row["slope per 100 characters"].startswith(number(slope) + " [")
    drift = at.dataframe[1].value
    a, b = judges[0][1], judges[1][1]
    moved = sum(a[i] != b[i] for i in truth)
    assert drift.iloc[0]["moved"].startswith(number(moved / 200) + " [")


def test_upload_without_inputs_says_what_to_give():
    at = run_page(JUDGELAB_PAGE, source="upload")
    assert any("at least one file of judge verdicts" in i.value for i in at.info)
    assert not at.metric


def test_labels_under_two_guidelines_are_refused_unless_pooled():
    rows = [json.loads(line) for line in _demo_bytes("labels.jsonl").decode("utf-8").splitlines()]
    rows[0]["guidelines_version"] = "g2"
    labels = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    at = run_page(JUDGELAB_PAGE, source="upload")
    at.file_uploader(key="jl_labels").set_value(("labels.jsonl", labels, "application/octet-stream"))
    at.file_uploader(key="jl_verdicts").set_value([("v1.jsonl", _demo_bytes("verdicts_v1.jsonl"),
                                                    "application/octet-stream")])
    at.run()
    assert not at.exception
    assert any("2 guidelines versions" in e.value for e in at.error) and not at.metric
    at.checkbox(key="jl_pool").check().run()
    assert not at.error and metric_values(at)["Labelled items"] == "200"


def _review_session(folder, monkeypatch, name, n, adjudicate_every=0):
    """A review session of the demo's first ``n`` answers in ``folder`` (the page's database): ann agrees with the
    demo's label; bo too, except on every ``adjudicate_every``-th item, which carol adjudicates with the demo's label.
    Returns (rows, {id: label}, session, {id: review item})."""
    rows = [json.loads(line) for line in _demo_bytes("items.jsonl").decode("utf-8").splitlines()][:n]
    truth = {lab.item_id: lab.label for lab in read_labels(_demo_bytes("labels.jsonl")).labels}
    store = ReviewStore(folder / "review.sqlite")
    session = store.create_session(name, "qa", [
        {"kind": "qa", "id": r["item_id"], "question": r["question"], "ground_truth": r["reference"],
         "prediction": r["answer"], "question_type": r["slice"]} for r in rows], created_by="lead", k=2)
    db_items = {i.payload["id"]: i for i in store.items(session.id)}
    for k, (rid, item) in enumerate(db_items.items()):
        label = "correct" if truth[rid] else "model_error"
        other = "model_error" if truth[rid] else "correct"
        disputed = adjudicate_every and k % adjudicate_every == 0
        store.save_decision(item.id, "ann", label=label)
        store.save_decision(item.id, "bo", label=other if disputed else label)
        if disputed:
            store.adjudicate(item.id, "carol", label)
    store.engine.dispose()
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(folder))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    return rows, truth, session, db_items


def test_review_session_labels_link_each_disagreeing_item_to_the_review_page(tmp_path, monkeypatch):
    items, truth, session, db_items = _review_session(tmp_path, monkeypatch, "judge calibration 校准", 60)
    at = page_app(JUDGELAB_PAGE, source="upload", jl_view="confusion")
    at.run()
    at.radio(key="jl_label_source").set_value("review").run()
    at.multiselect(key="jl_sessions").set_value([session.id])
    at.file_uploader(key="jl_verdicts").set_value([("v3.jsonl", _demo_bytes("verdicts_v3.jsonl"),
                                                    "application/octet-stream")])
    at.run()
    assert not at.exception, at.exception
    assert metric_values(at)["Labelled items"] == "60"
    labels = [HumanLabel(r["item_id"], truth[r["item_id"]], r["slice"], "") for r in items]
    split = assign_split(labels, seed=0, dev_fraction=0.5)
    verdicts = read_verdicts(_demo_bytes("verdicts_v3.jsonl")).judges[0][1]
    ids, y, v = _side(labels, verdicts, split, "test")
    fn = [i for i, a, b in zip(ids, y, v) if a == 1 and b == 0]
    assert fn
    links = ", ".join(f"[{i}](/Review?session={session.id}&item={db_items[i].id})" for i in fn)
    assert f"**test · judge wrong, people right** ({len(fn)}): {links}" in [m.value for m in at.markdown]


def test_hostile_names_and_broken_records_are_shown_inert():
    """An item id and a judge name holding HTML and Markdown, a line that is no JSON, a verdict that is no verdict:
    nothing raises, the problems are listed, the text shows escaped."""
    ids = ["<img src=x onerror=alert(1)>", "**粗体** :red[x]", *(f"q{i}" for i in range(38))]
    labels = "".join(json.dumps({"item_id": i, "label": n % 2}, ensure_ascii=False) + "\n"
                     for n, i in enumerate(ids)) + "{not json\n"
    judge = "<script>alert(1)</script> v1"
    verdicts = "".join(json.dumps({"item_id": i, "verdict": 1 - n % 2 if n < 4 else n % 2, "judge": judge},
                                  ensure_ascii=False) + "\n" for n, i in enumerate(ids))
    verdicts += json.dumps({"item_id": "q5", "verdict": "maybe", "judge": judge}) + "\n"
    at = run_page(JUDGELAB_PAGE, source="upload")
    at.file_uploader(key="jl_labels").set_value(("labels.jsonl", labels.encode("utf-8"), "application/octet-stream"))
    at.file_uploader(key="jl_verdicts").set_value([("v.jsonl", verdicts.encode("utf-8"), "application/octet-stream")])
    at.run()
    assert not at.exception, at.exception
    assert metric_values(at)["Labelled items"] == "40"
    at.segmented_control(key="jl_view").set_value("confusion").run()
    assert not at.exception, at.exception
    shown = [str(e.value) for kind in ("markdown", "caption", "warning", "error", "info", "subheader")
             for e in at.get(kind)]
    shown += [h.proto.body for h in at.get("html")]
    assert not any("<script" in s or "<img" in s for s in shown)
    text = "\n".join(shown)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; v1" in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    # the two records left out are listed (the broken line with its line number), the rest still scored
    assert [e.label for e in at.expander if e.label.startswith("Input problems")] == [
        "Input problems: 2 errors, 0 warnings — the rest of the data is still scored"]
    assert "labels.jsonl:41" in text and "verdict &#x27;maybe&#x27; is not right / wrong" in text




def test_the_download_button_downloads_without_a_rerun():
    """As tests/pages/test_download_buttons.py for the other pages: a click only downloads (``on_click="ignore"``)."""
    at = run_page(JUDGELAB_PAGE, source="demo")
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["Calibration report (JSON) · 校准报告"]
    assert all(b.proto.ignore_rerun for b in buttons)


def test_review_session_download_is_judge_calibrate_with_the_session(tmp_path, monkeypatch):
    """The page's calibration JSON with labels from a review session = ``judge calibrate --session NAME`` bytes."""
    from evaluators.cli import main

    _, _, session, _ = _review_session(tmp_path, monkeypatch, "校准 parity", 80, adjudicate_every=7)
    made = capture_downloads(monkeypatch)
    at = page_app(JUDGELAB_PAGE, source="upload", jl_label_source="review", jl_sessions=[session.id])
    at.run()
    at.file_uploader(key="jl_verdicts").set_value([(n, _demo_bytes(n), "application/octet-stream")
                                                   for n in VERSIONS[:2]])
    at.run()
    assert not at.exception, at.exception
    page = made["judge_calibration.json"]().encode("utf-8")
    for n in VERSIONS[:2]:
        (tmp_path / n).write_bytes(_demo_bytes(n))
    out = tmp_path / "cli.json"
    assert main(["judge", "calibrate", "--db", str(tmp_path / "review.sqlite"), "--session", "校准 parity",
                 "--verdicts", str(tmp_path / VERSIONS[0]), "--verdicts", str(tmp_path / VERSIONS[1]),
                 "--format", "json", "--out", str(out)]) == 0
    assert page == out.read_bytes()
    data = json.loads(page)
    assert data["n_labels"] == 80 and [j["version"]["name"] for j in data["judges"]] == ["v1 plain", "v2 strict 中文"]
