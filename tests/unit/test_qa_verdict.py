"""Verdict normalization: Chinese and English spellings, negation first, <think>, final verdict, unparsed."""

from __future__ import annotations

import pytest

from evaluators.qa.verdict import extract_answer, is_verdict_like, normalize_verdict, strip_think

CASES = [
    # (raw answer, expected verdict, rule)
    ("T", "T", "exact"),
    ("True", "T", "exact"),
    ("成立", "T", "exact"),
    ("正确", "T", "exact"),
    ("支持", "T", "exact"),
    ("Yes", "T", "exact"),
    ("SUPPORTS", "T", "exact"),
    ("f", "F", "exact"),
    ("FALSE", "F", "exact"),
    ("不成立", "F", "exact"),
    ("错误", "F", "exact"),
    ("不支持", "F", "exact"),
    ("no", "F", "exact"),
    ("Refutes", "F", "exact"),
    ("uncertain", "uncertain", "exact"),
    ("U", "uncertain", "exact"),
    ("不确定", "uncertain", "exact"),
    ("证据不足", "uncertain", "exact"),
    ("无法判断", "uncertain", "exact"),
    ("NOT ENOUGH INFO", "uncertain", "exact"),
    ("Not Enough Info", "uncertain", "exact"),
    ("“成立”。", "T", "exact"),                              # quotes and full stop trimmed
    ("**False**", "F", "exact"),                             # markdown bold trimmed
    ("Ｔｒｕｅ", "T", "exact"),                              # full-width, NFKC
    ("该主张不成立", "F", "last-phrase"),                    # negated form before 成立
    ("该主张成立", "T", "last-phrase"),
    ("综合以上分析，该主张成立。", "T", "last-phrase"),
    ("<think>也许不成立？再想想。</think>综合以上分析，该主张成立。", "T", "last-phrase"),
    ("<think>证据不足</think>\n答案：F", "F", "labelled"),
    ("虽然有人认为成立，但经核实该说法错误。", "F", "last-phrase"),  # final verdict wins
    ("证据不足以支持该主张。", "uncertain", "last-phrase"),       # not 支持
    ("经核查，这一说法不正确。", "F", "last-phrase"),
    ("判断结果：不确定", "uncertain", "labelled"),
    ("該主張不成立", "F", "last-phrase"),                     # traditional script
    ("The claim is not supported by the evidence.", "F", "last-phrase"),
    ("The evidence does not support the claim.", "F", "last-phrase"),
    ("After checking the sources, the statement is true.", "T", "last-phrase"),
    ("There is not enough information to decide.", "uncertain", "last-phrase"),
    ("Verdict: refutes", "F", "labelled"),
    ("Final answer: yes", "T", "labelled"),
    ("<answer>uncertain</answer>", "uncertain", "exact"),
    ("There is no evidence about it in the text.", "unparsed", "none"),   # bare "no" inside text is not a verdict
    ("这个问题很难说。", "unparsed", "none"),
    ("<think>thinking that never ends", "unparsed", "empty"),
    ("", "unparsed", "empty"),
    (None, "unparsed", "empty"),
    (1, "T", "hover-int"),
    (0, "F", "hover-int"),
    (False, "F", "bool"),
    (float("nan"), "unparsed", "empty"),
]


@pytest.mark.parametrize("raw,label,rule", CASES)
def test_normalize_verdict(raw, label, rule):
    v = normalize_verdict(raw)
    assert (v.label, v.rule) == (label, rule)


def test_case_table_is_big_enough():
    zh = [c for c in CASES if isinstance(c[0], str) and any("\u4e00" <= ch <= "\u9fff" for ch in c[0])]
    en = [c for c in CASES if isinstance(c[0], str) and c[0].isascii() and c[0]]
    assert len(CASES) >= 25 and len(zh) >= 10 and len(en) >= 10


def test_unparsed_is_not_uncertain():
    assert normalize_verdict("blah").label == "unparsed" != normalize_verdict("U").label


def test_think_and_answer_extraction():
    assert strip_think("<think>a</think>b<THINK>c</THINK>d") == " b d"
    assert strip_think("reasoning cut off</think>成立") == "成立"
    assert extract_answer("<think>x</think> <answer> 1989 </answer>") == "1989"
    assert extract_answer("<answer>a</answer><answer>b</answer>") == "b"
    assert extract_answer("  plain  ") == "plain"


def test_is_verdict_like():
    assert is_verdict_like("supports") and is_verdict_like("人工: T".split(": ")[1]) and is_verdict_like(1)
    assert not is_verdict_like("Jane Austen") and not is_verdict_like("该主张成立")


def test_is_verdict_like_is_the_whole_answer_rules_of_normalize_verdict():
    """The shortcut (no phrase search) agrees with ``normalize_verdict``'s rule on every kind of value."""
    import json

    from tests.conftest import require_shared

    values = [None, True, False, 0, 1, 2, -1, 1.0, 0.0, float("nan"), "", "   ", "T", " f. ", "「成立」", "Ｔｒｕｅ",
              "NOT ENOUGH INFO", "<think>F</think>T", "<answer>no</answer>", "该主张成立", "Answer: T", "yes it is",
              "Jane Austen", ["T"], {"label": "T"}, "</think>uncertain", "<think>unclosed T"]
    for name in (("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl"),
                 ("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")):
        for line in require_shared(*name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            values += [v for k, v in row.items() if k != "original_row"]
    rules = [normalize_verdict(v).rule in ("exact", "bool", "hover-int") for v in values]
    assert [is_verdict_like(v) for v in values] == rules
    assert 0 < sum(rules) < len(values)  # both answers occur
