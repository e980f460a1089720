"""The Judge lab page on real data: mem0's LoCoMo answers with their stored judge labels and a rule judge as two
versions, a scripted review of 100 answers as the calibration set (read from the review database), the other
1,440 answers as the target; the page's figures, links and corrected scores against a hand computation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluators.judgelab import assign_split
from evaluators.reports.format import number
from evaluators.review import ReviewStore
from tests.pages.helpers import JUDGELAB_PAGE, capture_downloads, metric_values, page_app
from tests.real.test_judgelab_real import scripted_review

pytestmark = pytest.mark.realdata


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def test_the_page_on_mem0_locomo_with_a_scripted_review(tmp_path, monkeypatch):
    records, session, human, got = scripted_review(tmp_path)
    verdicts = {"stored judge": {r["id"]: int(r["llm_score"]) for r in records},
                "rule judge": {r["id"]: int(r["f1_score"] >= 0.3) for r in records}}
    files = {name: _jsonl({"item_id": i, "verdict": v, "judge": name} for i, v in vs.items())
             for name, vs in verdicts.items()}
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    made = capture_downloads(monkeypatch)
    at = page_app(JUDGELAB_PAGE, source="upload")
    at.run()
    at.radio(key="jl_label_source").set_value("review").run()
    at.multiselect(key="jl_sessions").set_value([session])
    at.file_uploader(key="jl_verdicts").set_value([(f"{n}.jsonl", b, "application/octet-stream")
                                                   for n, b in files.items()])
    at.file_uploader(key="jl_target").set_value(("target.jsonl", files["stored judge"] + files["rule judge"],
                                                 "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    assert metric_values(at)["Labelled items"] == "100"
    split = assign_split(got.labels, seed=0, dev_fraction=0.5)
    report = json.loads(made["judge_calibration.json"]())
    table = at.dataframe[0].value
    for cal in report["judges"]:
        v = verdicts[cal["version"]["name"]]
        for side in ("dev", "test"):
            ids = [i for i in sorted(human) if split.side(i) == side]
            kappa = cohen_kappa_score([human[i] for i in ids], [v[i] for i in ids])
            assert cal[side]["cohen_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
            row = table[(table["judge"] == cal["version"]["name"]) & (table["side"] == side)].iloc[0]
            assert row["kappa"].startswith(number(kappa))
    # corrected scores: the raw judge share on the 1,440 answers nobody reviewed
    target = [verdicts["stored judge"][r["id"]] for r in records if r["id"] not in human]
    assert len(target) == 1440
    corrected = report["corrected"]["stored judge"]["estimates"]
    assert corrected[0]["name"] == "raw_judge" and corrected[0]["estimate"] == pytest.approx(np.mean(target))
    # each disagreeing item of the stored judge's test side links to its review item
    store = ReviewStore(tmp_path / "review.sqlite")
    db = {i.payload["id"]: i.id for i in store.items(session)}
    store.engine.dispose()
    at.segmented_control(key="jl_view").set_value("confusion").run()
    text = "\n".join(m.value for m in at.markdown)
    wrong = [i for i in sorted(human) if split.side(i) == "test" and human[i] != verdicts["stored judge"][i]]
    assert wrong and all(f"(/Review?session={session}&item={db[i]})" in text for i in wrong)
    # the review payloads' predictions give the lengths: a length-bias row per version, on the 100 items
    at.segmented_control(key="jl_view").set_value("bias").run()
    bias = at.dataframe[0].value
    assert list(bias["judge"]) == ["stored judge", "rule judge"] and set(bias["n"]) == {"100"}
