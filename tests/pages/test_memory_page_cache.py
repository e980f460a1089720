"""pages/5_Long_Memory.py caching: keys made of upload digests and settings (never object ids), scores
computed once per inputs, judge scores and metrics, and computed again when any of them changes."""

from __future__ import annotations

import json

import pytest

import components.uploads as uploads
from evaluators.io.sources import bytes_digest
from evaluators.demo import demo_path
from evaluators.memory import metrics as metrics_mod
from evaluators.memory import run as memory_run
from tests.helpers.http_servers import FakeJudgeServer
from tests.pages.helpers import memory_metric as metric, open_view, run_memory_page as run_page

# no judge endpoint from the environment (tests/pages/conftest.py); nothing kept from another test
pytestmark = pytest.mark.usefixtures("isolated", "empty_result_store")


def _count_calls(monkeypatch, module, name: str) -> list:
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _locomo(sample_id: str) -> bytes:
    return json.dumps([{
        "sample_id": sample_id,
        "conversation": {"speaker_a": "Alice", "speaker_b": "Bob"},
        "qa": [
            {"question": "Which cities did Bob visit?", "answer": "Paris, Rome", "category": 1},
            {"question": "小明去了哪里？", "answer": "北京", "category": 4},
        ],
    }], ensure_ascii=False).encode("utf-8")


MEM0 = json.dumps({"0": [
    {"question": "Which cities did Bob visit?", "answer": "Paris, Rome", "response": "Paris", "category": "1",
     "llm_score": 1},
    {"question": "小明去了哪里？", "answer": "北京", "response": "北京", "category": "4", "llm_score": 1},
]}, ensure_ascii=False).encode("utf-8")


def _question_ids(at) -> list[str]:
    open_view(at, "mem_view", "questions")
    return list(next(d.value for d in at.dataframe if "question_id" in d.value.columns)["question_id"])


def test_widget_reruns_reuse_the_scores_and_settings_recompute_them(monkeypatch):
    scored = _count_calls(monkeypatch, metrics_mod, "score_questions")
    parity = _count_calls(monkeypatch, memory_run, "locomo_parity")  # the name where the run calls it
    at = run_page("demo")
    assert (len(scored), len(parity)) == (1, 1)
    # views, filters and the drill-down do not change the scores
    open_view(at, "mem_view", "questions")
    at.multiselect(key="mem_types").set_value(["temporal"]).run()
    at.checkbox(key="mem_low").check().run()
    open_view(at, "mem_view", "types")
    at.multiselect(key="mem_chart").set_value(["token_f1_char"]).run()
    assert not at.exception
    assert (len(scored), len(parity)) == (1, 1)
    # another metric set is scored once; the parity F1 does not depend on it
    at.multiselect(key="mem_metrics").set_value(["judge_score", "exact_match_normalized"]).run()
    assert not at.exception and len(scored) == 2 and len(parity) == 1
    assert [m.label for m in at.metric][:3] == ["Questions", "Judge score", "EM (normalized)"]
    # back to the first set: still cached
    at.multiselect(key="mem_metrics").set_value(["judge_score", "exact_match_normalized"]).run()
    assert len(scored) == 2


def test_a_judge_run_rescores_with_the_new_judgements(monkeypatch):
    scored = _count_calls(monkeypatch, metrics_mod, "score_questions")
    cache = json.loads(demo_path("memory", "demo_judge_cache.json").read_text(encoding="utf-8"))["entries"]
    scores = [e["score"] for e in cache.values()]
    with FakeJudgeServer() as server:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "page-judge")
        at = run_page("demo")
        assert metric(at, "Judge score") == f"{sum(scores) / 24:.3f}"  # 24 of 25 judged
        at.button(key="mem_run_judge").click().run()
        assert not at.exception
    # the 25th question (an empty prediction) is judged 0.0: the mean is over 25 now
    assert metric(at, "Judge score") == f"{sum(scores) / 25:.3f}"
    assert len(scored) == 2


def _flatten(key):
    if isinstance(key, tuple):
        for part in key:
            yield from _flatten(part)
    else:
        yield key


def test_cache_keys_are_digests_and_settings_not_object_ids(monkeypatch):
    keys = []
    original = uploads.cached

    def recording(key, compute, **kwargs):
        keys.append(key)
        return original(key, compute, **kwargs)

    monkeypatch.setattr(uploads, "cached", recording)
    at = run_page("upload")
    at.file_uploader(key="mem_questions").set_value(("locomo_a.json", _locomo("conv-a"), "application/json"))
    at.file_uploader(key="mem_results").set_value(("results.json", MEM0, "application/json"))
    at.file_uploader(key="mem_labels").set_value(("labels.json", MEM0, "application/json"))
    at.run()
    assert not at.exception
    parts = [p for k in keys for p in _flatten(k)]
    assert not [p for p in parts if isinstance(p, int)], "an object id (or other int) in a cache key"
    assert {k[0] for k in keys} >= {"mem-inputs", "mem-scores", "mem-parity"}
    # the inputs are resolved together (labels and results read against the question file), keyed by the
    # digests of the files in the order results, questions, predictions, labels
    inputs_key = [k for k in keys if k[0] == "mem-inputs"][-1]  # the run after the uploads
    assert inputs_key[1] == (f"results.json:{bytes_digest(MEM0)}",
                             f"locomo_a.json:{bytes_digest(_locomo('conv-a'))}", None,
                             f"labels.json:{bytes_digest(MEM0)}")


def test_results_are_read_again_against_another_question_file():
    at = run_page("upload")
    at.file_uploader(key="mem_questions").set_value(("locomo.json", _locomo("conv-a"), "application/json"))
    at.file_uploader(key="mem_results").set_value(("results.json", MEM0, "application/json"))
    at.run()
    assert not at.exception
    assert _question_ids(at) == ["conv-a_q0", "conv-a_q1"]
    # same results file, same question file name, other content: the mem0 items take the new ids
    at.file_uploader(key="mem_questions").set_value(("locomo.json", _locomo("conv-b"), "application/json"))
    at.run()
    assert not at.exception
    assert _question_ids(at) == ["conv-b_q0", "conv-b_q1"]
    assert metric(at, "Judge score") == "1.000"  # mem0's llm_score, both correct
