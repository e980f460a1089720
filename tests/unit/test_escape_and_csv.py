"""The one escaping helper (evaluators.reports.escape) and the one CSV writer (evaluators.reports.csv_writer),
and every CSV the project writes going through it."""

from __future__ import annotations

import csv
import io
import json

import pytest

from evaluators.reports.csv_writer import csv_cell, csv_column, safe_cell, write_csv, write_dict_csv
from evaluators.reports.escape import html_text, md, visible

PAYLOAD = "=cmd|' /C calc'!A0"


@pytest.mark.parametrize("text,expected", [
    ("abc\u202egnp.exe", "abc⟨U+202E⟩gnp.exe"),          # right-to-left override
    ("张\u200b三\ufeff", "张⟨U+200B⟩三⟨U+FEFF⟩"),          # zero-width space, BOM
    ("a\tb\nc", "a\tb\nc"),                              # tab and newline kept
    ("x\ry\x00\x1b", "x⟨U+000D⟩y⟨U+0000⟩⟨U+001B⟩"),       # CR, NUL, ESC
    (None, ""),
])
def test_visible(text, expected):
    assert visible(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("**bold**", r"\*\*bold\*\*"),
    (":red[RED]", r"\:red\[RED\]"),
    ("$x^2$", r"\$x^2\$"),                                  # no formula without '$'
    ("![x](http://127.0.0.1:9/b)", "!\\[x\\](http\u2060://127.0.0.1:9/b)"),  # no image without '[ ]'
    ("[link](javascript:alert(1))", r"\[link\](javascript\:alert(1))"),
    ("<script>alert(1)</script>", r"&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("# 标题\n\n- 列表", r"\# 标题 - 列表"),                   # one line: no heading; '-' mid-line is no list
    ("- 列表", r"\- 列表"),                                   # a list marker at the start of the line
    ("3. 第三", r"3\. 第三"),                                 # an ordered list marker
    ("3.5 分", "3.5 分"),                                     # a number
    ("a & b", "a &amp; b"),                                 # the entity is not broken by a backslash
    ("普通中文", "普通中文"),
    ("long_memory/locomo_predictions_mem0/results.json", "long_memory/locomo_predictions_mem0/results.json"),
    ("CH_002_牛郎织女_v3.json", "CH_002_牛郎织女_v3.json"),    # '_' inside a word is no emphasis
    ("_x_ __y__", r"\_x\_ \_\_y\_\_"),                       # at a word's edge it is
    ("a | b ~~c~~ `d`", r"a \| b \~\~c\~\~ \`d\`"),
    # GFM autolink literals form after escapes are resolved: a word joiner (U+2060) before ':', '.', '@'
    ("see www.x.org, me@x.org", "see www\u2060.x.org, me\u2060@x.org"),
    ("邮件 张三@例子.中国 HTTPS://a.b", "邮件 张三\u2060@例子.中国 HTTPS\u2060://a.b"),
    ("xhttp://a.b", "xhttp://a.b"),             # inside a word: no autolink, no joiner
    # trimmed (walked: "**question ? **" showed its asterisks; four spaces would open a code block)
    ("concert ? ", "concert ?"),
    ("    indented", "indented"),
])
def test_md(text, expected):
    assert md(text) == expected


def test_md_multi_line_keeps_breaks_without_blank_lines():
    assert md("第一行\n\n第二行 *x*", one_line=False) == "第一行  \n第二行 \\*x\\*"


@pytest.mark.parametrize("text,expected", [
    ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"),
    ("a\n\nb", "a<br><br>b"),                 # a blank line cannot end the HTML block
    ("a\r\rb", "a⟨U+000D⟩⟨U+000D⟩b"),         # nor can bare carriage returns
    ("'单引号'", "&#x27;单引号&#x27;"),          # safe inside a quoted attribute
])
def test_html_text(text, expected):
    assert html_text(text) == expected


def test_html_text_without_breaks_is_one_line():
    assert html_text("a\nb", breaks=False) == "a b"


def test_safe_cell_and_writer():
    assert safe_cell(PAYLOAD) == "'" + PAYLOAD
    for start in "=+-@\t\r":
        assert safe_cell(start + "1") == "'" + start + "1"
    assert safe_cell(-0.5) == -0.5 and safe_cell(3) == 3 and safe_cell("中文=1") == "中文=1"
    text = write_csv(["a", "=b"], [[PAYLOAD, -1.5], ["+SUM(A1)", None]])
    assert text == "a,'=b\r\n'=cmd|' /C calc'!A0,-1.5\r\n'+SUM(A1),\r\n"
    assert list(csv.reader(io.StringIO(text)))[1] == ["'" + PAYLOAD, "-1.5"]
    assert write_dict_csv(["x", "y"], [{"x": "@me"}], lineterminator="\n") == "x,y\n'@me,\n"


def test_writer_chinese_cells_and_quoting():
    # "=张三" starts a formula -> apostrophe; "+1" is text -> apostrophe; -0.5 is a number -> as is;
    # a comma and a quote force csv quoting ("" doubles the quote); "李四" is plain text.
    text = write_csv(["名字", "分数", "备注"], [["=张三", -0.5, '说"好",行'], ["李四", "+1", "@提及"]])
    assert text == '名字,分数,备注\r\n\'=张三,-0.5,"说""好"",行"\r\n李四,\'+1,\'@提及\r\n'


def _neutralised(text: str) -> None:
    cells = [c for row in csv.reader(io.StringIO(text.lstrip("\ufeff"))) for c in row]
    assert "'" + PAYLOAD in cells and PAYLOAD not in cells


def test_qa_csv_export(tmp_path):
    from evaluators.cli import main

    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "1", "question": PAYLOAD, "answer": "a", "prediction": PAYLOAD}) + "\n",
                    encoding="utf-8")
    out = tmp_path / "out.csv"
    assert main(["qa", "--input", str(data), "--output-file", str(out)]) == 0
    _neutralised(out.read_text(encoding="utf-8"))


def test_dialogue_annotation_csv():
    from evaluators.dialogue import DialogueConfig, evaluate_dialogue, load_cases
    from evaluators.dialogue.inputs import PredictionRow
    from evaluators.reports.dialogue import annotation_csv

    cases = load_cases(json.dumps({"test_cases_by_scene": {"s": [
        {"context": PAYLOAD, "expected_response": "好", "scene": "s", "dialogue_index": 1}]}}).encode(), "c.json")
    rows = [PredictionRow("m", "s", "1", PAYLOAD)]
    ev = evaluate_dialogue(cases.cases, rows, DialogueConfig(metrics=("exact_match_normalized",)))
    _neutralised(annotation_csv(ev))


def test_memory_csv(tmp_path, capsys):
    from evaluators.cli import main
    from evaluators.memory.records import EvalResult, results_to_jsonl

    path = tmp_path / "r.jsonl"
    path.write_text(results_to_jsonl([EvalResult("s", "q1", "single_hop", PAYLOAD, "a", PAYLOAD)]), encoding="utf-8")
    assert main(["memory", "--results", str(path), "--metrics", "token_f1_char", "--format", "csv"]) == 0
    _neutralised(capsys.readouterr().out)


def test_narrative_mismatch_csv():
    from evaluators.narrative.batch import evaluate_batch
    from evaluators.io import InputFile
    from evaluators.reports.narrative import mismatches_csv
    from tests.unit.test_narrative_batch_cli import _doc

    gt = _doc([("甲", "", "")], [])
    pred = _doc([(PAYLOAD, "", "")], [])
    batch = evaluate_batch([InputFile("X_v3.json", gt)], [InputFile("X_pred.json", pred)])
    _neutralised(mismatches_csv(batch))


def test_visible_frame_shows_hidden_characters_in_text_cells_only():
    import pandas as pd

    from components.tables import visible_frame

    source = pd.DataFrame({"model": ["evil\u202egnp.exe", "张\u200b三", None], "score": [-0.5, 1.0, None]})
    shown = visible_frame(source)
    assert shown["model"].tolist()[:2] == ["evil⟨U+202E⟩gnp.exe", "张⟨U+200B⟩三"]
    assert shown["model"][2] == "—"          # a missing text cell shows a dash, never the grid's literal "None"
    assert pd.isna(shown["score"][2])                              # a missing number stays missing
    assert shown["score"].tolist()[:2] == [-0.5, 1.0]              # numbers untouched
    assert source["model"][0] == "evil\u202egnp.exe"               # the caller's frame is not changed
    assert visible_frame([{"id": "q\x1b1"}]).to_dict("records") == [{"id": "q⟨U+001B⟩1"}]


def test_cells_rendered_one_by_one_join_to_the_csv_writers_text():
    """csv_cell / csv_column (the QA report's column-wise rows) give write_csv's bytes: formula text, quotes,
    commas, line breaks, Chinese, numbers, None, booleans."""
    import random

    rng = random.Random(27)
    pieces = ["a", "林远", ",", '"', "\n", "\r", "=", "+1", "-", "@x", "\t", " ", "0.5", "é"]
    values = [None, True, False, 0, -3, 0.25, -0.5, 1e-5, float("nan")]
    for _ in range(300):
        n_cols = rng.randint(2, 4)  # (a row of one empty cell the csv module writes as ""; never a QA row)
        rows = [[rng.choice(values) if rng.random() < 0.3 else "".join(rng.choices(pieces, k=rng.randint(0, 5)))
                 for _ in range(n_cols)] for _ in range(rng.randint(1, 4))]
        header = [f"c{k}" for k in range(n_cols)]
        columns = [csv_column([row[k] for row in rows], repeating=bool(k % 2)) for k in range(n_cols)]
        by_cells = ",".join(header) + "\r\n" + "".join(",".join(cells) + "\r\n" for cells in zip(*columns))
        assert by_cells == write_csv(header, rows)
        assert [csv_cell(v) for v in rows[0]] == [c[0] for c in columns]
