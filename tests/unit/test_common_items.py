"""The rule of every side-by-side view (issue 26.1): systems are compared on the items they all scored."""

from __future__ import annotations

from evaluators.memory.compare import systems_common, systems_table
from evaluators.memory.metrics import QuestionScores
from evaluators.results import common_items


def test_common_items_keep_the_first_systems_order_and_each_own_n():
    c = common_items({"a": ["q3", "q1", "q2", "q1"], "b": ["q1", "q3"], "c": ["问题", "q3", "q1"]}, unit="questions")
    assert c.ids == ("q3", "q1") and c.n_common == 2
    assert c.n_by_system == {"a": 3, "b": 2, "c": 3}                  # a key listed twice counts once
    assert not c.same
    assert c.describe() == "n common = 2 questions; own n: a 3, b 2, c 3"
    assert "over the 2 questions every system scored" in c.warning()


def test_same_items_need_no_warning_and_none_in_common_says_not_comparable():
    assert common_items({"a": [1, 2], "b": [2, 1]}).warning() is None
    none = common_items({"a": ["故事"], "b": ["story"]}, unit="stories")
    assert none.n_common == 0 and "No story is scored by every system" in none.warning()
    assert none.units(1) == "1 story" and none.units(1540) == "1,540 stories"


def _rows(values):
    return [QuestionScores(f"q{i}", "t", {"token_f1_char": v}) for i, v in enumerate(values)]


def test_memory_systems_table_scores_each_system_on_the_common_questions_too():
    # big: 4 questions, mean (1 + 0 + 0 + 0) / 4 = 0.25 on its own, 1.0 on q0; tiny: q0 only, 1.0
    rows = {"big": _rows([1.0, 0.0, 0.0, 0.0]), "tiny": _rows([1.0])}
    assert systems_common(rows, "token_f1_char").ids == ("q0",)
    table = systems_table(rows, "token_f1_char", ci_resamples=0)
    assert [(r["n"], r["mean"], r["n_common"], r["mean_common"]) for r in table] == [(4, 0.25, 1, 1.0),
                                                                                   (1, 1.0, 1, 1.0)]


def test_the_qa_comparison_report_draws_the_common_records_and_says_so():
    from evaluators.qa import QAConfig, evaluate_qa
    from evaluators.qa.compare import runs_of, side_by_side
    from evaluators.reports.html import comparison_report

    a = evaluate_qa(b'{"id":"1","answer":"Paris","final_answer":"Paris"}\n'
                    b'{"id":"2","answer":"Rome","final_answer":"Milan"}\n'
                    b'{"id":"3","answer":"\xe5\x8c\x97\xe4\xba\xac","final_answer":"\xe4\xb8\x8a\xe6\xb5\xb7"}\n',
                    "a.jsonl", QAConfig(ci_resamples=0))
    b = evaluate_qa(b'{"id":"1","answer":"Paris","final_answer":"Paris"}\n', "b.jsonl", QAConfig(ci_resamples=0))
    view = side_by_side(runs_of([a, b]), n_resamples=0)
    assert view.common.ids == ("1",) and [s.n for s in view.common_scores] == [1, 1]
    assert [s.exact_match for s in view.common_scores] == [1.0, 1.0] and view.scores[0].exact_match == 1 / 3
    html = comparison_report(view, None, "sig")
    assert "n common = 1 record; own n: a.jsonl 3, b.jsonl 1" in html
    assert "EM and F1 by system on the 1 record every system scored, n common = 1 (95% CI)" in html
