"""compute_metrics: by-type aggregation of the judge score and the shared text metrics.

Text metrics come from evaluators.metrics.registry (char tokens: English words, Chinese
characters; exact match after NFKC, lower case, dropping punctuation and spaces).
"""

from __future__ import annotations

import pytest

from evaluators.memory.judge import Judgement
from evaluators.memory.metrics import (
    ALL_METRICS, DEFAULT_METRICS, TEXT_METRICS, compute_metrics, metric_availability, resolve_metrics,
    score_questions,
)
from evaluators.memory.records import EvalResult
from evaluators.metrics import embeddings
from evaluators.metrics.registry import MetricUnavailable, get_metric


RESULTS = [
    # English: tokens [ann, lives, in, oslo] vs [oslo]: P = 1/4, R = 1, F1 = 2*(1/4)/(5/4) = 0.4; EM 0
    EvalResult("s", "e1", "single_hop", "Where does Ann live?", "Oslo", "Ann lives in Oslo."),
    # English exact after normalisation: "May 2023." == "may 2023" -> EM 1, F1 1
    EvalResult("s", "e2", "temporal", "When?", "may 2023", "May 2023."),
    # Chinese chars [他 住 在 成 都] vs [成 都]: P = 2/5, R = 1, F1 = 2*(2/5)/(7/5) = 4/7; EM 0
    EvalResult("t", "z1", "single_hop", "小王住在哪里？", "成都", "他住在成都"),
    # Chinese exact: "咪咪。" vs "咪咪" -> EM 1, F1 1
    EvalResult("t", "z2", "temporal", "猫叫什么？", "咪咪", "咪咪。"),
    # empty prediction with a ground truth: a miss, scored 0 (counted)
    EvalResult("t", "z3", "open_domain", "他喜欢什么？", "爬山", ""),
]
JUDGE = {"e1": 1.0, "e2": Judgement(1.0, "continuous"), "z1": 0.6, "z2": 0.0, "z3": None}


def test_hand_derived_values_by_type_and_overall():
    report = compute_metrics(RESULTS, JUDGE, metrics=["judge_score", "exact_match_normalized", "token_f1_char", "rouge1"])
    by = report["by_type"]
    assert by["single_hop"]["count"] == 2
    assert by["single_hop"]["token_f1_char"] == pytest.approx((0.4 + 4 / 7) / 2)
    assert by["single_hop"]["exact_match_normalized"] == 0.0
    assert by["temporal"]["exact_match_normalized"] == 1.0 and by["temporal"]["token_f1_char"] == 1.0
    assert by["open_domain"]["token_f1_char"] == 0.0 and by["open_domain"]["judge_score"] is None
    assert by["open_domain"]["judged"] == 0
    overall = report["overall"]
    assert overall["count"] == 5
    assert overall["token_f1_char"] == pytest.approx((0.4 + 1 + 4 / 7 + 1 + 0) / 5)
    assert overall["exact_match_normalized"] == pytest.approx(2 / 5)
    # judge: e1 1, e2 1, z1 0.6, z2 0; z3 not judged -> mean over 4 judged
    assert overall["judge_score"] == pytest.approx((1 + 1 + 0.6 + 0) / 4) and overall["judged"] == 4
    # task-averaged = mean over types with a judge score: single_hop 0.8, temporal 0.5
    assert overall["task_averaged_judge_score"] == pytest.approx((0.8 + 0.5) / 2)
    # ROUGE-1 F on unigram counts equals token F1 on the same tokens
    assert overall["rouge1"] == pytest.approx(overall["token_f1_char"])
    assert set(report["signature"]) >= {"judge_score", "exact_match_normalized", "token_f1_char", "rouge1"}


def test_bleu1_matches_nltk():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    r = RESULTS[0]
    got = compute_metrics([r], metrics=["bleu1"])["overall"]["bleu1"]
    expected = sentence_bleu([["oslo"]], ["ann", "lives", "in", "oslo"], weights=(1.0,),
                             smoothing_function=SmoothingFunction().method1)
    assert got == pytest.approx(expected)


def test_ground_truth_against_itself_scores_one():
    # texts of 4+ tokens, so that 2- to 4-gram metrics (ROUGE-2, BLEU-4) are defined
    texts = ["She moved to Oslo in May 2023", "a border collie named Pixel", "他住在成都的郊区", "小林最喜欢吃荔枝"]
    names, _ = resolve_metrics(None)
    same = [EvalResult("s", f"q{i}", "single_hop", "?", t, t) for i, t in enumerate(texts)]
    report = compute_metrics(same, {r.question_id: 1.0 for r in same})
    for name in names:
        assert report["overall"][name] == pytest.approx(1.0), name


def test_empty_input_and_missing_ground_truth():
    empty = compute_metrics([], {}, metrics=["judge_score", "token_f1_char"])
    assert empty["by_type"] == {}
    assert empty["overall"]["count"] == 0
    assert empty["overall"]["token_f1_char"] is None and empty["overall"]["judge_score"] is None  # nothing to average
    no_gt = compute_metrics([EvalResult("s", "x", "multi_session", "?", "", "something")], metrics=["token_f1_char"])
    assert no_gt["overall"]["token_f1_char"] is None and no_gt["overall"]["gt_missing"] == 1


def test_default_metrics_leave_out_what_cannot_run_with_the_reason():
    availability = metric_availability()
    report = compute_metrics(RESULTS[:1], {"e1": 1.0})
    for name in DEFAULT_METRICS:
        if availability[name] is None:
            assert name in report["metrics"] and report["overall"][name] is not None
        else:
            assert name not in report["overall"] and name in report["unavailable"]
            assert "install" in report["unavailable"][name]


def test_meteor_is_selectable_but_not_a_default_and_never_warned_about(monkeypatch):
    import nltk

    def not_found(resource, *args, **kwargs):
        raise LookupError(resource)

    monkeypatch.setattr(nltk.data, "find", not_found)  # no WordNet, as offline
    assert "meteor" in ALL_METRICS and "meteor" not in DEFAULT_METRICS
    names, unavailable = resolve_metrics(None)
    assert "meteor" not in names and "meteor" not in unavailable  # nothing to warn about on a default run
    assert metric_availability(["meteor"])["meteor"] is not None  # still listed, with its reason, when asked


def test_meteor_help_names_the_download_once(capsys):
    from evaluators.cli import main

    with pytest.raises(SystemExit):
        main(["memory", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert text.count("python -m nltk.downloader wordnet omw-1.4") == 1


def _make_unavailable(name: str, request, monkeypatch) -> None:
    """Take away what ``name`` needs, whatever this machine has installed."""
    if name == "meteor":  # nltk's WordNet data not found
        import nltk

        def not_found(resource, *args, **kwargs):
            raise LookupError(resource)

        monkeypatch.setattr(nltk.data, "find", not_found)
    elif name == "bert_f1":  # no local BERTScore model named
        monkeypatch.delenv(embeddings.ENV_BERTSCORE_MODEL, raising=False)
    else:  # semantic_similarity: an embedding backend that cannot run
        request.getfixturevalue("no_embeddings")


@pytest.mark.parametrize("name", ["meteor", "bert_f1", "semantic_similarity"])
def test_an_unavailable_metric_asked_for_raises_with_the_install_command(name, request, monkeypatch):
    _make_unavailable(name, request, monkeypatch)
    assert metric_availability([name])[name] is not None
    with pytest.raises(ImportError) as exc:  # MetricUnavailable is an ImportError, never a 0
        compute_metrics(RESULTS[:1], metrics=[name])
    assert isinstance(exc.value, MetricUnavailable)
    assert "install" in str(exc.value)
    # named once ("meteor: ..."), not "meteor (meteor): ..."
    assert str(exc.value).startswith(f"{name}: ") and f"({name})" not in str(exc.value)


@pytest.mark.parametrize("name", ["meteor", "bert_f1", "semantic_similarity"])
def test_an_available_optional_metric_is_the_registry_metric(name):
    if metric_availability([name])[name] is not None:
        pytest.skip(f"{name} cannot run here (the unavailable path is tested above)")
    value = compute_metrics(RESULTS[:1], metrics=[name])["overall"][name]
    r = RESULTS[0]
    assert value is not None and -1.0 <= value <= 1.0
    assert value == pytest.approx(get_metric(name).score(r.prediction, r.ground_truth))


def test_score_questions_keeps_the_judgement_for_the_drill_down():
    rows = score_questions(RESULTS[:2], JUDGE, metrics=["judge_score"])
    assert rows[0].judgement is None and rows[0].scores == {"judge_score": 1.0}
    assert rows[1].judgement.mode == "continuous"
    with pytest.raises(ValueError, match="unknown metric"):
        score_questions(RESULTS, metrics=["bleu3"])


def test_identical_value_lists_are_resampled_once_with_the_same_interval(monkeypatch):
    """ROUGE-1 and F1 (char) are the same values (by definition): one bootstrap serves both (issue 21)."""
    from evaluators.memory import metrics as metrics_mod
    from evaluators.memory.records import EvalResult
    from evaluators.metrics import statistics

    calls = []
    original = statistics.bootstrap_ci
    monkeypatch.setattr(statistics, "bootstrap_ci", lambda values, **kw: calls.append(len(values)) or
                        original(values, **kw))
    results = [EvalResult("s", "q1", "single_hop", "q", "the cat sat", "the cat"),
               EvalResult("s", "q2", "single_hop", "q", "北京市", "北京"),
               EvalResult("s", "q3", "temporal", "q", "May 7", "7 May")]
    rows = metrics_mod.score_questions(results, None, metrics=["token_f1_char", "rouge1", "rouge2"])
    out = metrics_mod.aggregate_rows(rows, ["token_f1_char", "rouge1", "rouge2"], ci_resamples=200)
    # overall: f1 = rouge1 = (0.8 + 0.8 + 1.0) / 3; two distinct lists per block (f1 = rouge1, rouge2)
    assert out["overall"]["rouge1"] == out["overall"]["token_f1_char"] == pytest.approx(2.6 / 3)
    assert (out["overall"]["rouge1_ci_low"], out["overall"]["rouge1_ci_high"]) == (
        out["overall"]["token_f1_char_ci_low"], out["overall"]["token_f1_char_ci_high"])
    assert sorted(calls) == [1, 1, 2, 2, 3, 3]  # overall, single_hop, temporal: 2 resamplings each, not 3
    # each interval is bootstrap_ci's own (drawn on threads, in any order)
    f1_overall = original([0.8, 0.8, 1.0], n_resamples=200, seed=metrics_mod.CI_SEED)
    assert (out["overall"]["token_f1_char_ci_low"], out["overall"]["token_f1_char_ci_high"]) == (
        f1_overall.ci_low, f1_overall.ci_high)


def test_text_metrics_are_keyed_and_scored_by_their_registry_names():
    """No map between memory's keys and the registry: the key is the name, the value the registry's."""
    report = compute_metrics(RESULTS[2:3])  # 他住在成都 vs 成都: token_f1_char 4/7, exact_match_normalized 0
    text = [m for m in report["metrics"] if m in TEXT_METRICS]
    assert {"exact_match_normalized", "token_f1_char", "rouge1", "bleu4"} <= set(text)
    assert report["overall"]["token_f1_char"] == pytest.approx(4 / 7)
    r = RESULTS[2]
    for name in text:
        assert report["overall"][name] == pytest.approx(get_metric(name).score(r.prediction, r.ground_truth)), name
        assert report["signature"][name] == get_metric(name).signature


def test_a_mean_over_questions_has_one_name_in_the_memory_modules():
    # DESIGN.md: micro = pooled counts, macro = mean of per-unit values; the project writes a mean of
    # per-question scores "macro over questions" (QA, memory metrics, the Long Memory page), so the
    # LoCoMo and LongMemEval parity modules say so too.
    from tests.conftest import ROOT

    texts = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "evaluators" / "memory").glob("*.py")}
    assert [n for n, t in texts.items() if "micro over questions" in t] == []
    assert all("macro over questions" in texts[n] for n in ("metrics.py", "locomo_parity.py", "agreement.py"))
