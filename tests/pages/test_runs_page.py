"""AppTest of pages/8_Runs.py: the empty registry and its demo runs, the runs list, a trend with a real step and
an unjoined run, two runs side by side; each download equals ``runs list|trend|compare --format json``."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.reports.format import percent, points
from evaluators.reports.runs import to_json
from evaluators.runs import RunStore
from tests.helpers.runs_history import history
from tests.pages.helpers import RUNS_PAGE, capture_downloads, page_app


@pytest.fixture
def db(tmp_path, monkeypatch):
    """An empty registry the page reads (``EVALBOARD_DATABASE_URL``)."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    monkeypatch.setenv("EVALBOARD_DATABASE_URL", url)
    return url


def _cli(capsys, *argv) -> bytes:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out.encode("utf-8")


def _run(state=None):
    at = page_app(RUNS_PAGE, **(state or {}))
    at.run()
    assert not at.exception, at.exception
    return at


def test_empty_registry_says_how_to_log_and_logs_the_demo(db, capsys, monkeypatch):
    files = capture_downloads(monkeypatch)
    at = _run()
    (info,) = at.info
    assert "python -m evaluators qa FILE --log --run-name NAME" in info.value
    at.button(key="runs_log_demo").click().run()
    assert not at.exception, at.exception
    (table,) = at.dataframe
    rows = table.value.to_dict("records")
    # the demo's three systems, 16 questions each: EM 31.25%, 62.50%, 68.75% as `compare qa_systems_demo.jsonl` prints
    assert [(r["run"], r["items"], r["exact_match"]) for r in rows] == [
        ("demo/baseline-7b", 16, 5 / 16), ("demo/rag-7b", 16, 10 / 16), ("demo/rag-70b", 16, 11 / 16)]
    page = files["runs.json"]()
    assert page.encode("utf-8") == _cli(capsys, "runs", "list", "--format", "json", "--db", db)


@pytest.fixture
def steps(db):
    """Six runs of 400 items: 70% right, a real drop to 45% at v4, then a seventh run sharing 40% of the items."""
    store = RunStore(db)
    records = history(store, [0.7, 0.7, 0.7, 0.45, 0.45, 0.45, 0.45], overlap_last=0.4)
    store.dispose()
    return records


def test_trend_is_the_runs_trend_command(db, steps, capsys, monkeypatch):
    files = capture_downloads(monkeypatch)
    at = _run({"runs_view": "trend"})
    page = json.loads(files["trend.json"]())
    cli = json.loads(_cli(capsys, "runs", "trend", "--metric", "exact_match", "--ci-resamples", "1000", "--format",
                          "json", "--db", db))
    assert page == cli
    assert [p["mean"] for p in page["points"]] == [r.summary[0]["mean"] for r in steps]
    # only the real drop is flagged (v3 -> v4); repeats have a zero difference; v7 is not joined
    assert [s["flagged"] for s in page["steps"]] == [False, False, True, False, False, False]
    assert [s["joined"] for s in page["steps"]][-1] is False
    table = at.dataframe[0].value.to_dict("records")
    assert [(r["step"], r["n common"], r["flagged"]) for r in table][2] == ("v3 → v4", 400, True)
    notes = [c.value for c in at.caption]
    assert any("v6 → v7: v6 and v7 are not joined: n common = 160 of 400 and 400 items" in n for n in notes)
    assert any("**Holm (family-wise error)**" in n for n in notes)
    chart = at.get("plotly_chart")[0].proto.spec
    assert '"flagged step"' in chart and '"fill":"tonexty"' in chart


def test_trend_by_slice_with_benjamini_hochberg(db, steps, capsys, monkeypatch):
    files = capture_downloads(monkeypatch)
    at = _run({"runs_view": "trend", "runs_slice": "lang", "runs_correction": "bh", "runs_metric": "token_f1"})
    page = json.loads(files["trend.json"]())
    cli = json.loads(_cli(capsys, "runs", "trend", "--metric", "token_f1", "--slice", "lang", "--correction", "bh",
                          "--ci-resamples", "1000", "--format", "json", "--db", db))
    assert page == cli
    assert {p["slice_value"] for p in page["points"]} == {"all", "en", "zh"}
    assert any("Benjamini-Hochberg (false discovery rate)" in c.value for c in at.caption)


def test_two_runs_side_by_side_are_runs_compare(db, steps, capsys, monkeypatch):
    files = capture_downloads(monkeypatch)
    at = _run({"runs_view": "compare", "runs_a": "v3", "runs_b": "v4"})
    page = files["comparison.json"]()
    assert page.encode("utf-8") == _cli(capsys, "runs", "compare", "v3", "v4", "--format", "json", "--db", db)
    c = json.loads(page)
    (em,) = [m for m in c["metrics"] if m["metric"] == "exact_match"]
    rows = at.dataframe[0].value.to_dict("records")
    assert rows[0]["metric"] == "exact_match" and rows[0]["n paired"] == 400
    assert em["bootstrap"]["delta"] == pytest.approx(steps[3].summary[0]["mean"] - steps[2].summary[0]["mean"])
    assert at.metric[0].value == "400"


def test_runs_sharing_too_few_items_are_not_compared(db, steps):
    at = _run({"runs_view": "compare", "runs_a": "v6", "runs_b": "v7"})
    (warning,) = at.warning
    assert "n common = 160 of 400 and 400 items" in warning.value


def test_filters_and_leaderboard(db, steps):
    at = _run({"runs_tag": "seed=1"})
    assert at.warning[0].value == "No run matches these filters."
    at = _run({"runs_view": "leaderboard"})
    rows = at.dataframe[0].value.to_dict("records")
    assert [(r["rank"], r["system"], r["run"], r["n"]) for r in rows] == [(1, "model", "v7", 400)]


def test_gt_versions_marked_and_the_current_gt_line(db, tmp_path, capsys):
    """The QA demo logged on its GT (v0), then with a GT patch (v1): the change is marked, and the "on the current
    GT" line is ``runs trend --current-gt``."""
    from evaluators.demo import demo_path
    from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
    from evaluators.runs import view as rv

    demo = demo_path("qa", "qa_systems_demo.jsonl")
    patch = tmp_path / "fix.jsonl"
    patch.write_text(write_gt_patch([PatchEntry("en-08", file_sha256(demo), "add_answer", ("seven", "7"),
                                                ("seven continents",), "lead", "test")]), encoding="utf-8")
    _cli(capsys, "qa", str(demo), "--log", "--run-name", "before", "--db", db)
    _cli(capsys, "qa", str(demo), "--gt-patch", str(patch), "--log", "--run-name", "after", "--db", db)
    store = RunStore(db)
    records = store.runs(system="rag-70b")
    assert [(r.name, r.dataset_version) for r in records] == [("before/rag-70b", 0), ("after/rag-70b", 1)]
    assert rv.gt_changes(records) == [(1, 0, 1)]
    rescored = rv.rescored_trend(store, records, "exact_match")
    cli = json.loads(_cli(capsys, "runs", "trend", "--system", "rag-70b", "--metric", "exact_match", "--current-gt",
                          "--ci-resamples", "1000", "--format", "json", "--db", db))
    assert json.loads(to_json(rescored)) == cli
    # on the current GT both runs are the same predictions scored alike: no difference
    assert [p["mean"] for p in cli["points"]] == [cli["points"][1]["mean"]] * 2 and cli["steps"][0]["tests"][0][
        "delta"] == 0
    store.dispose()
    at = _run({"runs_view": "trend", "runs_current_gt": True, "runs_system": "rag-70b"})
    chart = at.get("plotly_chart")[0].proto.spec
    assert '"on the current GT"' in chart and "GT v0 → v1" in chart
    assert len(at.dataframe) == 2  # the steps as scored, then on the current GT


def test_noise_of_repeats_is_runs_noise(db, steps, capsys):
    """The seven runs share system, dataset version and config: one group of repeats, its floor that of
    ``runs noise``."""
    at = _run({"runs_view": "trend", "runs_noise_on": True})
    (row,) = at.dataframe[1].value.to_dict("records")
    cli = json.loads(_cli(capsys, "runs", "noise", *[r.name for r in steps], "--metric", "exact_match", "--format",
                          "json", "--db", db))["noise_floor"]
    assert row["repeats"] == "v1, v2, v3, v4, v5, v6, v7" and row["items"] == cli["n_items"] == 160  # the 40% v7 shares
    assert (row["flip rate"], row["noise band"], row["flaky items"]) == (
        percent(cli["flip_rate"]), points(cli["band"]), len(cli["flaky"]))


def test_hostile_run_names_show_as_typed(db):
    """Run names with markup, a right-to-left override and Chinese: shown as typed, hidden characters made visible,
    in the table, the chart and the steps."""
    from tests.helpers.runs_history import run_result

    store = RunStore(db)
    names = ["<b>粗体</b>", "evil\u202egnp", "模型 `v3` **x**"]
    for k, name in enumerate(names):
        store.log_run(run_result([1.0, 0.0, 1.0, float(k % 2)], [1.0, 0.5, 1.0, 0.5], [f"q-{i}" for i in range(4)]),
                      name=name, who="test", gt_name="h.jsonl", gt_digest="a" * 64,
                      created_at=f"2026-11-0{k + 1}T00:00:00Z")
    store.dispose()
    at = _run()
    assert at.dataframe[0].value["run"].tolist() == ["<b>粗体</b>", "evil⟨U+202E⟩gnp", "模型 `v3` **x**"]
    at = _run({"runs_view": "trend"})
    x = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["x"]  # plotly reads <b> as markup
    assert x == ["&lt;b&gt;粗体&lt;/b&gt;", "evil⟨U+202E⟩gnp", "模型 `v3` **x**"]
    steps = at.dataframe[0].value["step"].tolist()
    assert steps == ["<b>粗体</b> → evil⟨U+202E⟩gnp", "evil⟨U+202E⟩gnp → 模型 `v3` **x**"]


def test_public_hotpotqa_systems_logged_and_shown(db, capsys, monkeypatch):
    """The public HotpotQA file's three systems logged by ``qa --log``: the page's trend and side by side are the
    ``runs`` commands' files, and the leaderboard ranks the systems as ``compare`` does."""
    from tests.conftest import require_shared

    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    _cli(capsys, "qa", str(path), "--log", "--run-name", "hotpot", "--db", db)
    files = capture_downloads(monkeypatch)
    _run({"runs_view": "trend"})
    assert files["trend.json"]() == _cli(capsys, "runs", "trend", "--metric", "exact_match", "--ci-resamples", "1000",
                                         "--format", "json", "--db", db).decode("utf-8")
    a, b = "hotpot/Decomp_SearchFallback", "hotpot/Decomp_FullPipeline"
    _run({"runs_view": "compare", "runs_a": a, "runs_b": b})
    assert files["comparison.json"]() == _cli(capsys, "runs", "compare", a, b, "--format", "json",
                                              "--db", db).decode("utf-8")
    at = _run({"runs_view": "leaderboard"})
    rows = at.dataframe[0].value.to_dict("records")
    # exact match of the 50 questions, as `compare DERIVED_seed_format.jsonl` prints: 66%, 54%, 44%
    assert [(r["system"], r["exact_match"]) for r in rows] == [
        ("Decomp_FullPipeline", "66.00%"), ("Decomp_RelaxedInitial", "54.00%"), ("Decomp_SearchFallback", "44.00%")]


def test_side_by_side_warns_when_the_two_runs_were_tokenized_differently(db, tmp_path, capsys):
    """Issue 31 (provenance): two runs whose text was cut differently -- a QA run with Traditional->Simplified
    conversion against one without, a persona run with a jieba user dictionary against one without -- get
    "tokenizer changed since run A" naming what differs, on the page and from ``runs compare`` (stderr); two runs
    cut alike get none."""
    import hashlib

    from evaluators.demo import demo_path
    from evaluators.reports.escape import md
    from evaluators.text.script import opencc_version

    zh = tmp_path / "zh.jsonl"
    zh.write_text('{"id": "1", "answer": "國家", "prediction": "国家"}\n'
                  '{"id": "2", "answer": "看著", "prediction": "看着"}\n', encoding="utf-8")
    _cli(capsys, "qa", str(zh), "--log", "--run-name", "plain", "--db", db)
    _cli(capsys, "qa", str(zh), "--log", "--run-name", "again", "--db", db)
    _cli(capsys, "qa", str(zh), "--script", "tw2s", "--log", "--run-name", "tw2s", "--db", db)
    expected = f"tokenizer changed since run plain (run tw2s): script: none -> tw2s (opencc {opencc_version()})"
    at = _run({"runs_view": "compare", "runs_a": "plain", "runs_b": "tw2s"})
    assert [w.value for w in at.warning] == [md(expected)]  # as markdown (md: "->" written "-&gt;")
    rows = at.dataframe[0].value.to_dict("records")  # and the comparison itself: EM 0% -> 100% on both records
    assert (rows[0]["metric"], rows[0]["A"], rows[0]["B"], rows[0]["n paired"]) == ("exact_match", "0.00%",
                                                                                   "100.00%", 2)
    at = _run({"runs_view": "compare", "runs_a": "plain", "runs_b": "again"})
    assert not at.warning and at.dataframe[0].value.to_dict("records")[0]["B"] == "0.00%"
    capsys.readouterr()
    assert main(["runs", "compare", "plain", "tw2s", "--db", db]) == 0
    assert f"warning: {expected}\n" in capsys.readouterr().err
    assert main(["runs", "compare", "plain", "again", "--db", db]) == 0
    assert "tokenizer changed" not in capsys.readouterr().err

    # a jieba user dictionary on the persona metrics (keyword_jaccard cuts with jieba): its digest named
    user = tmp_path / "user.txt"
    user.write_text("北京大学校 10 n\n", encoding="utf-8")
    digest = hashlib.sha256(user.read_bytes()).hexdigest()
    cases, preds = demo_path("dialogue", "persona_cases.json"), demo_path("dialogue", "panda-chat-small_report.json")
    _cli(capsys, "dialogue", "--cases", str(cases), "--pred", str(preds), "--log", "--run-name", "persona", "--db", db)
    _cli(capsys, "dialogue", "--cases", str(cases), "--pred", str(preds), "--user-dict", str(user), "--log",
         "--run-name", "persona+dict", "--db", db)
    at = _run({"runs_view": "compare", "runs_dataset": "persona_cases.json", "runs_a": "persona",
               "runs_b": "persona+dict"})
    changed = [w.value for w in at.warning if "tokenizer changed" in w.value]
    assert changed == [md(f"tokenizer changed since run persona (run persona+dict): jieba user: none -> "
                          f"sha256:{digest[:12]}")]
