"""Issue 31: the extraction audit — parsed / unparsed / ambiguous per system, review items, rule changes."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.qa.audit import (
    AMBIGUOUS,
    PARSED,
    UNPARSED,
    audit_items,
    load_rules,
    parse_choice,
    parse_verdict,
    review_payloads,
    rule_change,
)

P, U, A = PARSED, UNPARSED, AMBIGUOUS

# 30 multiple-choice answers: (system, answer, gold, expected label, expected status)
CHOICES = [
    ("sys1", "答案：A、C", "A、C", "A,C", P),
    ("sys1", "我選擇 B", "B", "B", P),
    ("sys1", "選 A", "A", "A", P),
    ("sys1", "Ａ", "A", "A", P),                      # full-width letter (NFKC)
    ("sys1", "（Ｂ）", "B", "B", P),                  # full-width brackets and letter
    ("sys1", "答案：Ｃ", "C", "C", P),
    ("sys1", "最终答案：B、D", "B、D", "B,D", P),
    ("sys1", "最終答案是 D", "D", "D", P),
    ("sys1", "我选择C", "C", "C", P),
    ("sys1", "选A", "B", "A", P),                     # parsed, wrong
    ("sys1", "Let's think step by step. The first option mentions a year…", "A", None, U),
    ("sys1", "讓我們一步一步思考……", "C", None, U),
    ("sys1", "答案是A或B", "A", "A", A),              # two letters offered
    ("sys1", "答案：A。不對，答案：B", "B", "B", A),  # the answer changes
    ("sys1", "The answer is (B).", "B", "B", P),
    ("sys2", "I choose A and C", "A、C", "A,C", P),
    ("sys2", "B", "B", "B", P),
    ("sys2", "选项：Ｄ", "D", "D", P),
    ("sys2", "<think>选A吧</think>答案：C", "C", "C", P),  # reasoning removed first
    ("sys2", "正確答案為 E", "E", "E", P),
    ("sys2", "我覺得都不對", "A", None, U),
    ("sys2", "a", "A", None, U),                      # a lower-case word is not a choice
    ("sys2", "Let's think. Option A is wrong, option B is right", "B", "B", A),
    ("sys2", "答案：A，C", "A、C", "A,C", P),
    ("sys2", "選 Ｂ", "B", "B", P),
    ("sys2", "答案為：（Ｃ）", "C", "C", P),
    ("sys2", "嗯……", "D", None, U),
    ("sys2", "A、B", "A、B", "A,B", P),
    ("sys2", "我选 D。", "D", "D", P),
    ("sys2", "final answer: F", "F", "F", P),
]

# 30 fact-check answers: (system, answer, gold, expected label, expected status)
VERDICTS = [
    ("sys1", "成立", "T", "T", P),
    ("sys1", "不成立", "F", "F", P),
    ("sys1", "證據不足", "uncertain", "uncertain", P),
    ("sys1", "該主張不成立。", "F", "F", P),
    ("sys1", "根據資料，證據不足以支持此說法。", "uncertain", "uncertain", P),
    ("sys1", "综合来看，该说法成立。", "T", "T", P),
    ("sys1", "经过分析，证据不足。", "uncertain", "uncertain", P),
    ("sys1", "答案：Ｔ", "T", "T", P),                 # full-width letter after a label
    ("sys1", "結論：不成立", "F", "F", P),
    ("sys1", "Let's think step by step about the claim…", "T", None, U),
    ("sys1", "我不太清楚。", "F", None, U),
    ("sys1", "雖然有人說成立，但其實不成立", "F", "F", A),
    ("sys1", "结论：不成立，但也可能成立", "F", "T", A),
    ("sys1", "Ｆ", "F", "F", P),
    ("sys1", "站得住脚", "T", None, U),               # a spelling the parser does not know
    ("sys2", "supports", "T", "T", P),
    ("sys2", "NOT ENOUGH INFO", "uncertain", "uncertain", P),
    ("sys2", "The claim is not supported by the evidence.", "F", "F", P),
    ("sys2", "<think>可能成立？</think>该主张成立。", "T", "T", P),
    ("sys2", "判斷：成立", "T", "T", P),
    ("sys2", "說法站得住腳。", "T", None, U),
    ("sys2", "Let's think… I am not sure.", "uncertain", None, U),
    ("sys2", "這個主張屬實。", "T", "T", P),
    ("sys2", "该主张错误。", "F", "F", P),
    ("sys2", "無法判斷", "uncertain", "uncertain", P),
    ("sys2", "不好说", "uncertain", None, U),
    ("sys2", "True", "T", "T", P),
    ("sys2", "證據不足，無法確定是否成立", "uncertain", "T", A),
    ("sys2", "答案：不成立", "F", "F", P),
    ("sys2", "站得住脚，成立", "T", "T", P),
]


@pytest.mark.parametrize("system,text,gold,label,status", CHOICES)
def test_choice_answers_are_read_as_written(system, text, gold, label, status):
    e = parse_choice(text)
    assert (e.label, e.status) == (label, status), e


@pytest.mark.parametrize("system,text,gold,label,status", VERDICTS)
def test_verdict_answers_are_read_as_written(system, text, gold, label, status):
    e = parse_verdict(text)
    assert (e.label, e.status) == (label, status), e


def _items(cases):
    return [{"system": s, "id": f"{s}-{i}", "text": t, "gold": g} for i, (s, t, g, _, _) in enumerate(cases)]


def test_audit_counts_per_system_with_examples_and_review_items():
    assert len(CHOICES) + len(VERDICTS) == 60
    for kind, cases in (("choice", CHOICES), ("verdict", VERDICTS)):
        result = audit_items(_items(cases), kind, examples=2)
        for s in result.systems:
            mine = [c for c in cases if c[0] == s.system]
            assert (s.parsed, s.unparsed, s.ambiguous) == tuple(sum(1 for c in mine if c[4] == x) for x in (P, U, A))
            assert len(s.examples[UNPARSED]) == min(2, s.unparsed)
            right = sum(1 for c in mine if c[3] is not None and c[3] == (parse_choice(c[2]).label if kind == "choice"
                                                                         else parse_verdict(c[2]).label))
            assert s.accuracy == pytest.approx(right / len(mine))
        payloads = review_payloads(result, include_ambiguous=False)
        expected = [c for c in cases if c[4] == U]
        assert [p["prediction"] for p in payloads] == [c[1] for c in expected]
        assert all(p["kind"] == "qa" and p["extraction"]["status"] == U and p["verdict"] == "unparsed"
                   for p in payloads)
        assert len(review_payloads(result)) == sum(1 for c in cases if c[4] in (U, A))


def test_a_rule_change_gives_the_per_system_delta_and_the_items_that_moved():
    before = audit_items(_items(VERDICTS), "verdict")
    rules = load_rules(json.dumps({"T": ["站得住脚", "站得住腳"], "uncertain": ["不好说"]}).encode())
    change = rule_change(before, rules)
    moved = {(m.system, m.text): (m.before, m.after) for m in change.moved}
    assert moved == {("sys1", "站得住脚"): (None, "T"), ("sys2", "說法站得住腳。"): (None, "T"),
                     ("sys2", "不好说"): (None, "uncertain")}
    d1, d2 = change.systems
    assert (d1.system, d1.moved, d1.unparsed_before, d1.unparsed_after) == ("sys1", 1, 3, 2)
    assert d1.delta == pytest.approx(1 / 15) and d2.delta == pytest.approx(2 / 15)


def test_audit_command_prints_counts_delta_and_writes_review_items(tmp_path, capsys):
    src = tmp_path / "fc.jsonl"
    src.write_text("".join(json.dumps({"id": f"c{i}", "claim": f"主張{i}", "system": s, "label": g, "prediction": t},
                                      ensure_ascii=False) + "\n" for i, (s, t, g, _, _) in enumerate(VERDICTS)),
                   encoding="utf-8")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"T": ["站得住脚", "站得住腳"]}, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "review.json"
    assert main(["audit", "--input", str(src), "--task", "factcheck", "--rules", str(rules),
                 "--review-output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Extraction audit (verdict): 30 answers, 2 system(s)" in text
    assert "Rule change" in text and "+6.67" in text  # sys1: 1 of 15 moved to the right verdict
    payloads = json.loads(out.read_text(encoding="utf-8"))
    assert {p["prediction"] for p in payloads if p["extraction"]["status"] == U} == {c[1] for c in VERDICTS
                                                                                      if c[4] == U}


def test_audit_command_prints_each_system_s_delta_and_the_items_that_moved(tmp_path, capsys):
    """A rule change that moves one sys1 answer and two sys2 answers onto their gold verdicts: the printed table
    gives each system its own delta (sys1 11/15 -> 12/15 = +6.67 points, sys2 11/15 -> 13/15 = +13.33) and
    unparsed counts, then each moved item."""
    src = tmp_path / "fc.jsonl"
    src.write_text("".join(json.dumps({"id": f"c{i}", "claim": f"主張{i}", "system": s, "label": g, "prediction": t},
                                      ensure_ascii=False) + "\n" for i, (s, t, g, _, _) in enumerate(VERDICTS)),
                   encoding="utf-8")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"T": ["站得住脚", "站得住腳"], "uncertain": ["不好说"]}, ensure_ascii=False),
                     encoding="utf-8")
    assert main(["audit", "--input", str(src), "--task", "factcheck", "--rules", str(rules)]) == 0
    text = capsys.readouterr().out
    change = text.split("Rule change (", 1)[1]
    assert change.split("\n", 1)[0].endswith("): 3 answer(s) read differently")
    rows = {line.split()[0]: line.split() for line in change.splitlines() if line.startswith("sys")}
    assert rows["sys1"] == ["sys1", "73.33%", "80.00%", "+6.67", "3", "2", "1"]
    assert rows["sys2"] == ["sys2", "73.33%", "86.67%", "+13.33", "3", "1", "2"]
    moved = [line.strip() for line in change.splitlines() if line.startswith("  sys")]
    assert moved == ["sys1 c14: unparsed -> T (user-mapping); gold T: '站得住脚'",
                     "sys2 c20: unparsed -> T (user-mapping); gold T: '說法站得住腳。'",
                     "sys2 c25: unparsed -> uncertain (user-mapping); gold uncertain: '不好说'"]
