"""One metric name, one definition, one function: every page and the CLI use the same ones.

- QA's per-record ``exact_match`` / ``token_f1`` are the registry's official metrics
  (``*_squad`` for English records, ``*_cmrc`` for Chinese), maximised over the gold answers.
- Memory and dialogue score with registry metrics under the registry's own names.
- Mode variants carry their own names, so a key never holds two definitions.
- The QA, dialogue and memory pages show the numbers their CLI commands print.
"""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.metrics.registry import _REGISTRY, _VARIANTS, get_metric, metric_names
from evaluators.qa import QAConfig, evaluate_qa_file
from tests.conftest import ROOT, require_shared
from tests.pages.helpers import QA_PAGE, metric_values, run_page


def _official(lang: str, prediction: str, golds) -> tuple[float, float]:
    suffix = "cmrc" if lang == "zh" else "squad"
    em, f1 = get_metric(f"exact_match_{suffix}"), get_metric(f"token_f1_{suffix}")
    return max(em.score(prediction, g) for g in golds), max(f1.score(prediction, g) for g in golds)


@pytest.mark.parametrize("path", [
    ROOT / "evaluators" / "demo" / "qa" / "qa_demo.jsonl",
    ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl",
])
def test_qa_scores_are_the_registry_official_metrics(path):
    report = evaluate_qa_file(path, QAConfig(ci_resamples=0))
    checked = 0
    for r in report.records:
        if r.status != "scored":
            continue
        assert (r.exact_match, r.token_f1) == pytest.approx(_official(r.lang, r.prediction, r.gold_answers)), r.id
        checked += 1
    assert checked >= 10


def test_qa_scores_on_real_cmrc_and_hotpotqa_are_the_registry_metrics():
    hotpot = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    report = evaluate_qa_file(hotpot, QAConfig(ci_resamples=0))
    for r in list(report.records)[:150]:
        if r.status == "scored":
            assert (r.exact_match, r.token_f1) == pytest.approx(_official(r.lang, r.prediction, r.gold_answers))


def test_memory_and_dialogue_use_registry_names_as_keys():
    from evaluators.dialogue.scoring import DEFAULT_METRICS, DEFAULT_WEIGHTS
    from evaluators.memory.metrics import ALL_METRICS, TEXT_METRICS

    assert set(TEXT_METRICS) <= set(metric_names())  # the output key is the registry name
    assert set(ALL_METRICS) - set(TEXT_METRICS) == {"judge_score", "locomo_f1"}  # memory's own two
    assert set(DEFAULT_WEIGHTS) | set(DEFAULT_METRICS) <= set(metric_names())


def test_a_mode_variant_never_reuses_a_default_name():
    get_metric("rouge1")  # load the registry
    for (base, mode), variant in _VARIANTS.items():
        assert variant.name != base and variant.name not in _REGISTRY, (base, mode)
        assert get_metric(base, mode) is variant and get_metric(variant.name) is variant


def test_qa_page_and_cli_show_the_same_numbers(tmp_path):
    out = tmp_path / "qa.json"
    demo = ROOT / "evaluators" / "demo" / "qa" / "qa_demo.jsonl"
    assert main(["qa", "--input", str(demo), "--output-file", str(out)]) == 0
    overall = json.loads(out.read_text(encoding="utf-8"))["overall"]
    at = run_page(QA_PAGE)
    at.radio(key="qa_demo").set_value("qa").run()
    m = metric_values(at)
    assert m["EM"] == f"{100 * overall['exact_match']:.2f}%"
    assert m["F1"] == f"{100 * overall['token_f1']:.2f}%"


def test_dialogue_page_and_cli_show_the_same_combined_scores(tmp_path, capsys, no_embeddings):
    from evaluators.demo import demo_path
    from tests.pages.helpers import DIALOGUE_PAGE, page_app, shown

    folder = demo_path("dialogue")
    assert main(["dialogue", "--cases", str(folder / "persona_cases.json"),
                 "--pred", str(folder / "panda-chat-large.jsonl"),
                 "--pred", str(folder / "panda-chat-small_report.json"), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    cli = {s["model"]: s["combined_score"] for s in printed["by_model"]}
    at = page_app(DIALOGUE_PAGE, timeout=180, source="demo")
    at.run()
    page = {shown(m.label).split(" · ")[0]: m.value for m in at.metric if m.label.endswith("combined")}
    assert page == {model: f"{score:.3f}" for model, score in cli.items()}


def test_no_public_function_name_holds_two_definitions_in_the_metrics_package():
    """``squad.exact_match`` and ``overlap.exact_match`` were two rules under one name; a rule
    now lives in its name (``exact_match_squad``, ``exact_match_normalized`` ...).  Any public
    function defined in two modules of ``evaluators.metrics`` fails this."""
    import importlib
    import inspect
    import pkgutil

    import evaluators.metrics as package

    homes: dict[str, set[str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, obj in vars(module).items():
            if inspect.isfunction(obj) and not name.startswith("_") and obj.__module__ == module.__name__:
                homes.setdefault(name, set()).add(module.__name__)
    assert {n: m for n, m in homes.items() if len(m) > 1} == {}
    assert {"exact_match_squad", "token_f1_squad", "exact_match_normalized", "token_f1_char"} <= set(homes)
