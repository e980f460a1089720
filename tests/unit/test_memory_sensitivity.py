"""Issue 31 for long memory: the memory overlap metrics under other tokenizations, --user-dict provenance."""

from __future__ import annotations

import hashlib
import json

import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.memory.compare import read_other_system
from evaluators.memory.inputs import resolve_inputs
from evaluators.memory.run import MemoryConfig, run_memory
from evaluators.memory.sensitivity import engine_metrics, memory_sensitivity

# "alpha" scrambles the ground truth's characters (char F1 = 1, jieba F1 = 0: no dictionary word
# survives); "beta" adds one character (北京大学校: char F1 = 2*4/(5+4) = 0.889; jieba [北京大学, 校]
# against [北京大学]: 2*1/(2+1) = 0.667).  Under characters alpha leads, under jieba beta does.
SWAP = [("北京大学", "学大京北", "北京大学校"), ("中华人民共和国", "国和共民人华中", "中华人民共和国成立"),
        ("清华大学", "学大华清", "清华大学里"), ("上海交通大学", "学大通交海上", "上海交通大学的")]


def write_system(path, which: int) -> None:
    rows = []
    for k in range(3):
        for i, triple in enumerate(SWAP):
            rows.append({"question_id": f"q{4 * k + i + 1}", "question_type": "single_hop", "question": "哪所大学？",
                         "ground_truth": triple[0], "prediction": triple[which]})
    rows.append({"question_id": "q_nogt", "question_type": "single_hop", "question": "?", "ground_truth": "",
                 "prediction": "北京"})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def read(path):
    return resolve_inputs(results=(path.name, path.read_bytes())).results


def test_memory_systems_swap_rank_between_characters_and_jieba(tmp_path):
    write_system(tmp_path / "alpha.jsonl", 1)
    write_system(tmp_path / "beta.jsonl", 2)
    rep = memory_sensitivity({"alpha": read(tmp_path / "alpha.jsonl"), "beta": read(tmp_path / "beta.jsonl")},
                             n_resamples=300)
    assert rep.metrics == ("token_f1", "rouge2", "rougeL", "bleu1", "bleu2", "bleu4")
    alpha, beta = rep.score("alpha", "char"), rep.score("beta", "char")
    assert alpha.n == beta.n == 12  # the question without ground truth is left out, as from the report's metrics
    assert alpha.mean == 1.0 and rep.score("alpha", "jieba").mean == 0.0
    assert rep.score("beta", "jieba").mean == pytest.approx(2 / 3)
    assert (alpha.rank, rep.score("alpha", "jieba").rank) == (1, 2)
    flips = [f for f in rep.flips if f.metric == "token_f1" and f.tokenization == "jieba"]
    assert [(f.a, f.b, f.n_paired) for f in flips] == [("alpha", "beta", 12)]
    f = flips[0]
    assert f.ci_reference[0] <= f.delta_reference <= f.ci_reference[1] < 0  # beta - alpha < 0 under characters
    assert f.ci[0] <= f.delta <= f.ci[1] and f.delta > 0
    assert alpha.ci_low is not None and beta.ci_low <= beta.mean <= beta.ci_high


def test_the_character_column_is_the_memory_report_number():
    data = demo_path("memory", "demo_results.jsonl").read_bytes()
    inputs = resolve_inputs(results=("demo_results.jsonl", data))
    other, pairing, _ = read_other_system("baseline.jsonl", demo_path("memory", "demo_results_baseline.jsonl")
                                          .read_bytes(), inputs.results)
    report = run_memory(inputs, MemoryConfig(ci_resamples=0))
    rep = memory_sensitivity({"assistant": inputs.results, "baseline": other}, metrics=report.names, n_resamples=0)
    overall = report.metrics["overall"]
    for key, engine in (("token_f1_char", "token_f1"), ("rouge1", "token_f1"), ("rouge2", "rouge2"),
                        ("rougeL", "rougeL"), ("bleu1", "bleu1"), ("bleu2", "bleu2"), ("bleu4", "bleu4")):
        assert rep.score("assistant", "char", engine).mean == pytest.approx(overall[key], abs=1e-12), key
    assert engine_metrics(["judge_score", "exact_match_normalized", "bleu4", "rouge1", "token_f1_char"]) == \
        ("bleu4", "token_f1")


def test_memory_user_dict_is_recorded_in_the_report_and_used_by_sensitivity(tmp_path, capsys):
    write_system(tmp_path / "alpha.jsonl", 1)
    write_system(tmp_path / "beta.jsonl", 2)
    user = tmp_path / "user.txt"
    user.write_text("北京大学校 100 n\n", encoding="utf-8")
    digest = hashlib.sha256(user.read_bytes()).hexdigest()
    out = tmp_path / "memory.json"
    assert main(["memory", str(tmp_path / "alpha.jsonl"), "--user-dict", str(user), "--ci-resamples", "0",
                 "--out", str(out)]) == 0
    provenance = json.loads(out.read_text(encoding="utf-8"))["provenance"]
    assert provenance["jieba"]["user_dict_sha256"] == digest and provenance["char"]["tokenizer"] == "char"
    assert main(["memory", str(tmp_path / "alpha.jsonl"), "--user-dict", str(tmp_path / "none.txt")]) == 2
    capsys.readouterr()
    sens = tmp_path / "sens.json"
    assert main(["sensitivity", "--memory", str(tmp_path / "alpha.jsonl"), str(tmp_path / "beta.jsonl"),
                 "--user-dict", str(user), "--ci-resamples", "200", "--output-file", str(sens)]) == 0
    text = capsys.readouterr().out
    assert "Order changes (" in text and "jieba_user" in text
    data = json.loads(sens.read_text(encoding="utf-8"))
    assert data["task"] == "memory" and data["systems"] == ["alpha", "beta"]
    assert data["provenance"]["jieba_user"]["user_dict_sha256"] == digest
    # with 北京大学校 one word, beta's 北京大学校 shares no token with 北京大学: (0 + 3 x 2/3) / 4 = 0.5
    assert [s["mean"] for s in data["scores"] if s["system"] == "beta" and s["metric"] == "token_f1"
            and s["tokenization"] in ("jieba", "jieba_user")] == [pytest.approx(2 / 3), pytest.approx(0.5)]
