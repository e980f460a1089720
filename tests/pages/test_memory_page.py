"""AppTest for pages/5_Long_Memory.py: demo, uploads (results, questions + predictions,
labels, judge cache) and a judge run against a local HTTP endpoint."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

from evaluators.demo import demo_path
from evaluators.memory.judge import JudgeCache
from evaluators.memory.loaders import load_results_file
from evaluators.metrics.agreement import cohen_kappa_ci
from tests.conftest import require_shared
from tests.helpers.http_servers import FakeJudgeServer
from tests.helpers.locomo_reference import locomo_reference_scores
from tests.pages.helpers import memory_metric as metric, open_view, problem_line, problem_table, shown, static_rows
from tests.pages.helpers import run_memory_page as run_page

pytestmark = pytest.mark.usefixtures("isolated")  # no judge endpoint from the environment (tests/pages/conftest.py)


def upload_shared(uploads: dict[str, tuple[str, ...]]) -> AppTest:
    """The upload page with files of ../shared/data/long_memory put in the uploaders ``{key: path parts}``."""
    at = run_page("upload")
    for key, parts in uploads.items():
        path = require_shared("long_memory", *parts)
        at.file_uploader(key=key).set_value((path.name, path.read_bytes(), "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    return at


def test_demo_shows_judge_scores_by_type_and_agreement():
    at = run_page("demo")
    # The demo cache holds 24 judgements for the 25 questions (one unjudged, empty prediction).
    cache = json.loads(demo_path("memory", "demo_judge_cache.json").read_text(encoding="utf-8"))["entries"]
    scores = [e["score"] for e in cache.values()]
    assert len(scores) == 24
    assert metric(at, "Questions") == "25"
    assert metric(at, "Judge score") == f"{sum(scores) / 24:.3f}"
    assert any("24 of 25 questions judged (from the demo judge cache)" in shown(c.value) for c in at.caption)
    # The second judge's 24 labels against ours binarised at 0.5 (score >= 0.5 is correct): they agree on 23,
    # demo-en-1_q5 (our 0.6, their false) is the one disagreement.
    labels = [json.loads(line) for line in demo_path("memory", "demo_judge_labels.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    agree = [(cache[x["question_id"]]["score"] >= 0.5) == x["label"] for x in labels]
    assert (sum(agree), len(agree)) == (23, 24)
    assert metric(at, "Agreement (accuracy)") == f"{23 / 24:.3f}"
    # the kappa's bootstrap interval over the 24 compared questions, flagged as under 30
    ours = [int(cache[x["question_id"]]["score"] >= 0.5) for x in labels]
    theirs = [int(x["label"]) for x in labels]
    figure = cohen_kappa_ci(ours, theirs, labels=[1, 0], seed=0)  # its default: AGREEMENT_RESAMPLES, as the page
    assert figure.ci_low is not None and figure.ci_low < figure.value <= figure.ci_high
    expected = f"Cohen's kappa 95% interval: {figure.ci_low:.3f} – {figure.ci_high:.3f} over 24 compared questions " \
               "(under 30 questions: not yet meaningful)"
    assert any(expected in shown(c.value) for c in at.caption), [shown(c.value) for c in at.caption]
    subheaders = [shown(s.value) for s in at.subheader]
    assert subheaders[:3] == ["LLM judge", "Overall", "By question type"]
    assert "LoCoMo parity (the benchmark's published scoring)" in subheaders
    # the first screen: the by-type table and chart are static, no grid and no Plotly chart
    assert not at.dataframe and not at.get("plotly_chart")
    by_type = static_rows(at, "question_type")
    assert [r[0] for r in by_type] == ["adversarial", "multi_hop", "open_domain", "single_hop", "temporal", "overall"]
    # question types of the 25 demo results, in the table's (sorted) order, then all of them
    demo = [json.loads(line) for line in demo_path("memory", "demo_results.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    types = Counter(r["question_type"] for r in demo)
    assert [int(r[1]) for r in by_type] == [types[t] for t in sorted(types)] + [len(demo)] == [4, 5, 3, 8, 5, 25]
    chart = next(m.value for m in at.markdown if '<figure class="chart">' in m.value)
    assert 'data-series="Judge score"' in chart and 'data-series="LoCoMo F1 (parity)"' in chart
    # the sortable grid holds the same counts, one click away
    grid = open_view(at, "mem_view", "types").dataframe[0].value
    assert list(grid["count"]) == [4, 5, 3, 8, 5, 25] and len(at.get("plotly_chart")) == 1
    # no endpoint configured: no "Run judge" button, an explanation instead
    assert "mem_run_judge" not in [b.key for b in at.button] and [b.key for b in at.button] == ["mem_to_review", "mem_save_button"]
    assert any("EVALBOARD_JUDGE_BASE_URL" in i.value for i in at.info)


def test_demo_drill_down_shows_the_judge_reasoning_in_chinese():
    at = open_view(run_page("demo"), "mem_view", "questions")
    at.selectbox(key="mem_question").set_value("demo-zh-1_q2").run()
    texts = " ".join(m.value for m in at.markdown)
    assert "包含正确答案，多了一个芒果。" in texts  # the judge's reasoning
    assert "荔枝和芒果。" in texts and "continuous" in texts


def test_upload_results_with_a_bad_line_and_stored_labels():
    lines = [
        {"question_id": "e1", "question_type": "single_hop", "question": "Where does Ann live?", "ground_truth": "Oslo",
         "prediction": "Ann lives in Oslo."},
        {"question_id": "e2", "question_type": "temporal", "question": "When?", "ground_truth": "May 2023",
         "prediction": "June 2023"},
        {"question_id": "z1", "question_type": "single_hop", "question": "<b>小王</b>住在哪里？",
         "ground_truth": "成都", "prediction": "成都"},
    ]
    data = ("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n{not json}\n").encode("utf-8")
    labels = b'{"question_id": "e1", "label": true}\n{"question_id": "e2", "label": false}\n' \
             b'{"question_id": "z1", "label": true}\n'
    at = run_page("upload")
    assert any("Upload a results file" in i.value for i in at.info)
    at.file_uploader(key="mem_results").set_value(("r.jsonl", data, "application/jsonl"))
    at.file_uploader(key="mem_labels").set_value(("labels.jsonl", labels, "application/jsonl"))
    at.run()
    assert not at.exception
    issues = " ".join(problem_line(r) for r in problem_table(at))
    assert "r.jsonl:4" in issues and "invalid JSON" in issues  # located, the rest still scored
    assert metric(at, "Questions") == "3"
    assert metric(at, "Judge score") == f"{2 / 3:.3f}"  # stored labels 1, 0, 1
    by_type = open_view(at, "mem_view", "types").dataframe[0].value.set_index("question_type")
    assert by_type.loc["single_hop", "Judge score"] == 1.0 and by_type.loc["temporal", "Judge score"] == 0.0
    # the HTML in the question is shown as text, not rendered
    open_view(at, "mem_view", "questions").selectbox(key="mem_question").set_value("z1").run()
    assert any("&lt;b&gt;小王&lt;/b&gt;" in m.value for m in at.markdown)


def test_upload_questions_and_predictions_keyed_by_id():
    questions = [
        {"question_id": "k1", "question_type": "knowledge-update", "question": "Where do I live now?",
         "answer": "Tokyo"},
        {"question_id": "p1", "question_type": "single-session-preference", "question": "推荐一家餐厅",
         "answer": "用户喜欢素食"},
        {"question_id": "a1_abs", "question_type": "multi-session", "question": "What is my cat's name?",
         "answer": "You never mentioned a cat."},
    ]
    preds = b'{"question_id": "k1", "hypothesis": "Tokyo"}\n{"question_id": "a1_abs", "hypothesis": "Unknown"}\n'
    at = run_page("upload")
    at.file_uploader(key="mem_questions").set_value(
        ("lme.json", json.dumps(questions, ensure_ascii=False).encode("utf-8"), "application/json"))
    at.file_uploader(key="mem_preds").set_value(("preds.jsonl", preds, "application/jsonl"))
    at.run()
    assert not at.exception
    by_type = open_view(at, "mem_view", "types").dataframe[0].value.set_index("question_type")
    assert by_type["count"].to_dict() == {"knowledge_update": 1, "multi_session": 1, "single_session_preference": 1,
                                          "overall": 3}
    issues = " ".join(problem_line(r) for r in problem_table(at))
    assert "1 question(s) have no prediction" in issues  # p1 is scored as a miss, and said so


def test_run_the_judge_from_the_page_resumes_from_its_cache(monkeypatch, isolated):
    results = load_results_file(demo_path("memory", "demo_results.jsonl").read_bytes(), "demo").results
    with FakeJudgeServer() as server:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "page-judge")
        at = run_page("demo")
        at.button(key="mem_run_judge").click().run()
        assert not at.exception
        # The demo cache covers 24 of 25: the one unjudged question is the only request.
        assert len(server.requests) == 1
        assert any("Judged 1 question(s) with page-judge, reused 24 from the cache" in shown(s.value) for s in at.success)
        files = list((isolated / "cache").glob("memory-*.json"))
        assert len(files) == 1
        cache = JudgeCache(files[0])
        judged, stale = cache.matching(results)
        assert len(judged) == 25 and stale == []
        assert judged["demo-zh-1_q10"].model == "page-judge"  # empty prediction judged "No." by the endpoint
        assert judged["demo-zh-1_q10"].score == 0.0
        assert any("25 of 25 questions judged" in shown(c.value) for c in at.caption)
        # A second run needs nothing new: no second call.
        at.button(key="mem_run_judge").click().run()
        assert len(server.requests) == 1
        assert any("Judged 0 question(s) with page-judge, reused 25" in shown(s.value) for s in at.success)


@pytest.mark.realdata
def test_real_longmemeval_judge_output_joined_with_the_question_table():
    at = upload_shared({
        "mem_questions": ("longmemeval", "longmemeval_oracle_questions_slim.json"),
        "mem_labels": ("longmemeval_predictions_sample", "my_predictions.jsonl.eval-results-gpt-4o"),
    })
    # the 8 judged hypotheses are the predictions; 6 of the 8 labels are true
    assert metric(at, "Questions") == "8"
    assert metric(at, "Judge score") == "0.750"
    open_view(at, "mem_view", "types")
    lme = next(df.value for df in at.dataframe if "accuracy" in df.value.columns).set_index("question_type")
    assert lme.loc["temporal_reasoning", "count"] == 8 and lme.loc["temporal_reasoning", "accuracy"] == 0.75
    assert lme.loc["overall", "accuracy"] == 0.75 and lme.loc["abstention (_abs)", "count"] == 0
    assert any("gpt-4o-2024-08-06 (8)" in shown(c.value) for c in at.caption)


@pytest.mark.realdata
def test_real_mem0_results_with_the_locomo_dataset():
    at = upload_shared({"mem_results": ("locomo_predictions_mem0", "results.json"),
                        "mem_questions": ("locomo", "locomo10.json")})
    at.multiselect(key="mem_metrics").set_value(["judge_score"]).run()
    assert not at.exception
    assert metric(at, "Questions") == "1540"
    by_type = open_view(at, "mem_view", "types").dataframe[0].value.set_index("question_type")
    assert by_type["count"].to_dict() == {"multi_hop": 282, "open_domain": 96, "single_hop": 841, "temporal": 321,
                                          "overall": 1540}
    # judge_score = mem0's stored llm_score (445 of 841 single-hop correct)
    assert by_type.loc["single_hop", "Judge score"] == pytest.approx(445 / 841)
    parity = next(df.value for df in at.dataframe if "LoCoMo F1" in df.value.columns).set_index("question_type")
    # the reference: LoCoMo's published scoring (tests/helpers/locomo_reference.py) on the raw mem0 file,
    # category 4 (single-hop) mean = 0.3921 (tests/real/test_memory_real.py compares every question)
    raw = json.loads(require_shared("long_memory", "locomo_predictions_mem0", "results.json").read_text(
        encoding="utf-8"))
    single_hop = [score for category, score in locomo_reference_scores(raw) if category == 4]
    reference = sum(single_hop) / len(single_hop)
    assert parity.loc["single_hop", "LoCoMo F1"] == pytest.approx(reference, abs=1e-9)
    assert round(reference, 4) == 0.3921
    assert parity.loc["single_hop", "LoCoMo F1"] == pytest.approx(0.3921, abs=5e-5)
    assert any("llm_score in the results file" in shown(c.value) for c in at.caption)


@pytest.mark.parametrize("typed_key", [None, "sk-typed"])
def test_a_typed_endpoint_never_gets_the_server_key(monkeypatch, typed_key):
    with FakeJudgeServer() as home, FakeJudgeServer() as typed:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", home.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "page-judge")
        monkeypatch.setenv("EVALBOARD_JUDGE_API_KEY", "sk-server-secret")
        at = run_page("demo")
        at.text_input(key="mem_base_url").set_value(typed.base_url).run()
        if typed_key:
            at.text_input(key="mem_api_key").set_value(typed_key).run()
        at.button(key="mem_run_judge").click().run()
        assert not at.exception
        assert len(typed.requests) == 1 and home.requests == []  # the one question the demo cache lacks
        assert typed.headers[0].get("Authorization") == (f"Bearer {typed_key}" if typed_key else None)
        assert "sk-server-secret" not in str(typed.headers)


def test_a_file_url_for_the_judge_is_refused_on_the_page():
    at = run_page("demo")
    at.text_input(key="mem_base_url").set_value("file:///etc/passwd#").run()
    at.text_input(key="mem_model").set_value("page-judge").run()
    at.button(key="mem_run_judge").click().run()
    assert not at.exception
    assert [shown(e.value) for e in at.error] == ["only http:// and https:// URLs are accepted, not file://"]


def test_an_unusable_upload_says_why_with_file_and_line():
    at = run_page("upload")
    bad = b'{"question_id": "q1", "question": "x"\n{oops\n'
    at.file_uploader(key="mem_results").set_value(("results.jsonl", bad, "application/octet-stream"))
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and shown(at.error[0].value).startswith(
        "No usable question in the upload: error: results.jsonl:1")
    assert not any("Upload a results file" in i.value for i in at.info)


def test_chart_error_bars_are_the_bootstrap_intervals():
    from components.memory_views import by_type_figure
    from evaluators.memory.metrics import aggregate_rows, score_questions

    results = load_results_file(demo_path("memory", "demo_results.jsonl").read_bytes(), "demo").results
    report = aggregate_rows(score_questions(results, None, metrics=["token_f1_char"]), ["token_f1_char"], ci_resamples=2000)
    fig = by_type_figure(report, ["token_f1_char"])
    bar = fig.data[0]
    for t, y, plus, minus in zip(bar.x, bar.y, bar.error_y.array, bar.error_y.arrayminus):
        block = report["by_type"][t]
        assert y + plus == pytest.approx(block["token_f1_char_ci_high"]) and y - minus == pytest.approx(block["token_f1_char_ci_low"])


def test_hidden_characters_in_the_question_table_are_shown():
    rows = [{"question_id": "evil\u202egnp.exe", "question_type": "single_hop", "question": "zero\u200bwidth",
             "ground_truth": "a", "prediction": "a"}]
    at = run_page("upload")
    at.file_uploader(key="mem_results").set_value(
        ("r.jsonl", "\n".join(json.dumps(r) for r in rows).encode(), "application/octet-stream"))
    at.run()
    assert not at.exception
    table = next(df.value for df in open_view(at, "mem_view", "questions").dataframe if "question" in df.value.columns)
    assert list(table["question_id"]) == ["evil⟨U+202E⟩gnp.exe"] and list(table["question"]) == ["zero⟨U+200B⟩width"]


def test_a_stored_score_is_shown_with_its_source_not_as_unjudged():
    # mem0's results layout: llm_score 1 for the first question, 0 for the second; no judge cache, no judge run
    mem0 = {"0": [{"question": "Where does Ann live?", "answer": "Oslo", "response": "Oslo", "category": "4",
                   "llm_score": 1},
                  {"question": "小王什么时候搬家？", "answer": "2023年5月", "response": "六月", "category": "2",
                   "llm_score": 0}]}
    at = run_page("upload")
    at.file_uploader(key="mem_results").set_value(
        ("results.json", json.dumps(mem0, ensure_ascii=False).encode("utf-8"), "application/json"))
    at.run()
    assert not at.exception
    assert metric(at, "Judge score") == f"{(1 + 0) / 2:.3f}"
    open_view(at, "mem_view", "questions")
    for qid, text in (("conv0_0", "1.000 (correct)"), ("conv0_1", "0.000 (wrong)")):
        at.selectbox(key="mem_question").set_value(qid).run()
        assert not at.exception
        stored = [shown(m.value) for m in at.markdown if "Stored label" in m.value]
        assert stored == [f"**Stored label** · {text} · from llm_score in the results file results.json"]
        assert not any("No judge verdict" in i.value for i in at.info)


def test_demo_compares_the_assistant_with_the_no_memory_baseline():
    from evaluators.demo import demo_path
    from evaluators.memory.compare import compare_two, systems_table
    from evaluators.memory.inputs import resolve_inputs
    from evaluators.memory.metrics import score_questions

    at = open_view(run_page("demo"), "mem_view", "systems")
    at.selectbox(key="mem_sbs_metric").set_value("token_f1_char").run()
    # the same numbers from the engine: each demo file resolved and scored on its own
    rows = {}
    for name, file in (("memory assistant", "demo_results.jsonl"), ("no-memory baseline", "demo_results_baseline.jsonl")):
        results = resolve_inputs(results=(file, demo_path("memory", file).read_bytes())).results
        rows[name] = score_questions(results, None, metrics=["token_f1_char"])
    paired = compare_two(rows, "memory assistant", "no-memory baseline", "token_f1_char")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["F1 (char) delta · 差值"] == f"{paired.bootstrap.delta:+.3f}"
    # the baseline answers only every third question (16 of 25 say "I don't remember"): it loses on those
    assert paired.bootstrap.delta < 0 and paired.n_paired == 25
    table = systems_table(rows, "token_f1_char", ci_resamples=0)
    assert [r["system"] for r in table] == ["memory assistant", "no-memory baseline"]


def test_two_mem0_layouts_side_by_side_pair_every_question(tmp_path):
    """Issue 20.1: mem0 results keyed "0" as the run and the same file keyed "conv_0" as another system."""
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    conv_keyed = json.dumps({f"conv_{k}": v for k, v in raw.items()}, ensure_ascii=False).encode("utf-8")
    at = run_page("upload")
    at.file_uploader(key="mem_results").set_value(("results.json", path.read_bytes(), "application/json"))
    at.file_uploader(key="mem_more_results").set_value([("results_conv.json", conv_keyed, "application/json")])
    at.run()
    assert not at.exception, at.exception
    open_view(at, "mem_view", "systems")
    assert "results_conv: 1540 paired by question id." in [shown(c.value) for c in at.caption]
    at.selectbox(key="mem_sbs_metric").set_value("token_f1_char").run()
    matrix = next(d.value for d in at.dataframe if "spread" in d.value.columns)
    # the run is named after its file (results.json), as the other system
    assert len(matrix) == 1540 and matrix["results"].notna().sum() == matrix["results_conv"].notna().sum() == 1540
    assert (matrix["spread"] == 0).all()  # the same answers: every question scores the same in both


def test_overall_shows_a_card_for_every_metric_and_says_rouge1_is_token_f1():
    """Issue 20.3: the demo computes 10 metrics (9 defaults and the LoCoMo parity F1): 10 cards, not 7."""
    at = run_page("demo")
    assert not at.exception
    labels = [m.label for m in at.metric]
    by_type_columns = list(open_view(at, "mem_view", "types").dataframe[0].value.columns)[2:]  # after type, count
    assert len(by_type_columns) == 10
    assert labels[:11] == ["Questions", *by_type_columns]
    help_text = next(m.proto.help for m in at.metric if m.label == "ROUGE-1")
    assert "ROUGE-1 F equals F1 (char) on every answer, by definition" in help_text
    assert "ROUGE-1 F equals F1 (char)" in at.multiselect(key="mem_metrics").help


def test_an_unreadable_local_judge_cache_is_named_and_the_demo_cache_used(isolated):
    """The engine's rule (evaluators/memory/run.py): the local cache wins only when it can be read."""
    from evaluators.memory.records import read_results
    from evaluators.memory.run import local_judge_store

    results = read_results(demo_path("memory", "demo_results.jsonl").read_bytes()).results
    store = local_judge_store(isolated / "cache", results)
    store.parent.mkdir(parents=True)
    store.write_text("{not json", encoding="utf-8")
    at = run_page("demo")
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert any(str(store) in e and "the judge cache cannot be read and is not used" in e for e in errors), errors
    assert any("24 of 25 questions judged (from the demo judge cache)" in shown(c.value) for c in at.caption)


def test_a_20_mb_prediction_upload_peaks_within_3x_its_input_plus_200_mb():
    """Issue 20 point 10: the demo's 25 results and one with a 20 MB prediction ("x x x ...", 10 M tokens)
    uploaded; the page's peak memory <= 3x the input + 200 MB above the empty page's (was +370 MB: the upload
    copied into the session, a 10 M-entry token list, whole-text copies of LoCoMo's normalisation).

    The long answer shares no token with its ground truth ("a border collie"): 0 on every text metric and
    on LoCoMo's F1, so each overall mean is the demo's 25-question mean x 25 / 26.
    """
    import os
    import subprocess
    import sys

    from evaluators.memory.metrics import compute_metrics
    from tests.conftest import ROOT

    code = r'''
import json, re
from tests.hostile.conftest import DEMO_MEMORY
from tests.pages.helpers import MEMORY_PAGE, metric_values, page_app
def hwm():
    return int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
demo = (DEMO_MEMORY / "demo_results.jsonl").read_text(encoding="utf-8").splitlines()
big = json.dumps({**json.loads(demo[0]), "question_id": "huge", "prediction": "x " * (10 << 20)})
data = ("\n".join([*(ln for ln in demo if ln.strip()), big]) + "\n").encode()
del big
at = page_app(MEMORY_PAGE, source="upload", timeout=600)
at.run()
base = hwm()
at.file_uploader(key="mem_results").set_value(("huge_line.jsonl", data, "application/json"))
at.run()
assert not at.exception, at.exception
print(json.dumps({"base": base, "peak": hwm(), "input": len(data) / 2**20, "metrics": metric_values(at)}))
'''
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALBOARD_JUDGE_", "OPENAI_"))}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["peak"] <= out["base"] + 3 * out["input"] + 200, out
    demo = load_results_file(demo_path("memory", "demo_results.jsonl").read_bytes(), "demo").results
    overall = compute_metrics(demo)["overall"]
    assert out["metrics"]["Questions"] == "26"
    for label, key in (("F1 (char)", "token_f1_char"), ("ROUGE-L", "rougeL"), ("BLEU-4", "bleu4"),
                       ("EM (normalized)", "exact_match_normalized")):
        assert out["metrics"][label] == f"{overall[key] * 25 / 26:.3f}", (label, out["metrics"])


def test_systems_on_different_questions_are_compared_on_the_common_ones():
    """Issue 26.1: 1,540 vs 45 vs 2 questions side by side, the 2-question system looking best."""
    def rows(n, answer):
        return "".join(json.dumps({"question_id": f"q{i}", "question_type": "single-hop", "question": f"问题 {i}",
                                   "ground_truth": "北京", "prediction": answer(i)}, ensure_ascii=False) + "\n"
                       for i in range(n)).encode("utf-8")

    at = run_page("upload")
    at.file_uploader(key="mem_results").set_value(
        ("run.jsonl", rows(4, lambda i: "北京" if i == 0 else "上海"), "application/jsonl"))
    at.file_uploader(key="mem_more_results").set_value([("tiny.jsonl", rows(1, lambda i: "北京"), "application/jsonl")])
    at.run()
    open_view(at, "mem_view", "systems")
    at.selectbox(key="mem_sbs_metric").set_value("exact_match_normalized").run()
    assert not at.exception, at.exception
    assert any("n common = 1 question; own n: run 4, tiny 1" in shown(w.value) for w in at.warning)
    table = next(d.value for d in at.dataframe if "n common" in d.value.columns)
    assert list(table["n"]) == [4, 1] and list(table["n common"]) == [1, 1]
    assert list(table["mean"]) == [1.0, 1.0] and list(table["mean (own questions)"]) == [0.25, 1.0]
    title = "\n".join(str(json.loads(c.proto.spec)["layout"]["title"]["text"]) for c in at.get("plotly_chart"))
    assert "n common = 1" in title


def test_tokenization_view_on_the_demo_recomputes_the_overlap_metrics_per_tokenization():
    from evaluators.demo import demo_path
    from evaluators.memory.inputs import resolve_inputs
    from evaluators.reports.format import percent

    at = open_view(run_page("demo"), "mem_view", "tokenization")
    table = at.dataframe[0].value
    assert list(table.columns) == ["system", "char", "jieba", "jieba_hmm"]
    assert list(table["system"]) == ["memory assistant", "no-memory baseline"]
    # the character column is the report's F1 (char): the same tokens and formula
    results = resolve_inputs(results=("demo_results.jsonl", demo_path("memory", "demo_results.jsonl")
                                      .read_bytes())).results
    from evaluators.memory.metrics import compute_metrics

    f1 = compute_metrics(results, None, metrics=["token_f1_char"])["overall"]["token_f1_char"]
    assert table["char"][0].startswith(f"{percent(f1)} #1 [")
    assert at.radio(key="mem_sens_metric").options == ["F1 (char) = ROUGE-1", "ROUGE-2", "ROUGE-L", "BLEU-1",
                                                        "BLEU-2", "BLEU-4"]
    at.radio(key="mem_sens_metric").set_value("bleu4").run()
    assert not at.exception, at.exception
    # a Chinese ground truth cut by each tokenization
    example = at.dataframe[-1].value
    assert list(example["tokenization"]) == ["char", "jieba", "jieba_hmm"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in example["tokens"][0])


def test_tokenization_view_takes_the_user_dictionary_and_records_it(tmp_path):
    import hashlib

    at = run_page("demo")
    data = "记忆助手 10 n\n".encode()
    at.file_uploader(key="mem_user_dict").upload("user.txt", data).run()
    assert not at.exception, at.exception
    open_view(at, "mem_view", "tokenization")
    assert "jieba_user" in at.dataframe[0].value.columns
    digest = hashlib.sha256(data).hexdigest()[:12]
    assert any(digest in c.value for c in at.code)


def test_an_empty_judge_cache_download_says_why_instead_of_a_file(deferred_downloads):
    """Issue 26 (walk: empty downloads say why instead of giving 0 bytes): results scored without a judge
    verdict offer no judge-cache file but say why; the demo, whose cache holds 24 verdicts, offers them."""
    rows = "".join(json.dumps({"question_id": f"q{i}", "question_type": "single-hop", "question": f"问题 {i}",
                               "ground_truth": "北京", "prediction": "北京"}, ensure_ascii=False) + "\n"
                   for i in range(3)).encode("utf-8")
    at = run_page("upload")
    at.file_uploader(key="mem_results").set_value(("run.jsonl", rows, "application/jsonl"))
    at.run()
    assert not at.exception, at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Judge cache (JSON)" not in labels and "Report (JSON)" in labels
    (caption,) = [shown(c.value) for c in at.caption if "Judge cache (JSON)" in shown(c.value)]
    assert "no judge verdict for these questions yet" in caption and "the file would be empty" in caption
    assert "judge_cache.json" not in deferred_downloads

    demo = run_page("demo")
    assert "Judge cache (JSON)" in [b.proto.label for b in demo.get("download_button")]
    entries = json.loads(deferred_downloads["judge_cache.json"]())["entries"]
    cache = json.loads(demo_path("memory", "demo_judge_cache.json").read_text(encoding="utf-8"))["entries"]
    assert len(entries) == 24 and entries == cache    # the 24 verdicts of the demo's 25 questions
