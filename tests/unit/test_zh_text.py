"""Issue 31: tokenizer provenance, script conversion with exact offsets, rank sensitivity (Chinese)."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from evaluators.cli import main
from evaluators.qa.evaluate import QAConfig, evaluate_qa
from evaluators.qa.run import QAInput, run_qa
from evaluators.qa.sensitivity import rank_sensitivity, script_effect
from evaluators.text import provenance as prov
from evaluators.text.script import convert, convert_with_offsets
from evaluators.text.tokenize import TOKENIZERS, TextView

# Two systems that swap rank between characters and jieba: "alpha" scrambles the gold's characters
# (char F1 = 1: the same multiset; jieba F1 = 0: no dictionary word survives), "beta" adds one word
# (北京大学校: char F1 = 2*4/(5+4) = 0.889; jieba [北京大学, 校] vs [北京大学]: 2*1/(2+1) = 0.667).
SWAP = [("北京大学", "学大京北", "北京大学校"), ("中华人民共和国", "国和共民人华中", "中华人民共和国成立"),
        ("清华大学", "学大华清", "清华大学里"), ("上海交通大学", "学大通交海上", "上海交通大学的")]


def swap_rows(system: str | None = None) -> list[dict]:
    rows = []
    for k in range(3):
        for i, (gold, a, b) in enumerate(SWAP):
            rid = f"q{4 * k + i + 1}"
            for name, pred in (("alpha", a), ("beta", b)):
                if system in (None, name):
                    rows.append({"id": rid, "system": name, "answer": gold, "prediction": pred})
    return rows


def write_jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


# ------------------------------------------------------------------------------------------------ provenance

def test_jieba_signature_names_the_dictionary_sha256():
    import jieba
    import os

    path = os.path.join(os.path.dirname(jieba.__file__), "dict.txt")
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    assert f"dict=sha256:{digest[:12]}" in TOKENIZERS["jieba"].signature
    assert "hmm=off" in TOKENIZERS["jieba"].signature
    p = prov.JiebaSetup().provenance()
    assert p.dictionary_sha256 == digest and p.hmm is False and p.user_dict_sha256 is None
    assert p.stopwords_sha256 == prov.stopwords_sha256() and len(p.stopwords_sha256) == 64
    # keyword_jaccard (stop words) carries the stop-word list's digest
    from evaluators.metrics.registry import get_metric

    assert f"sha256:{prov.stopwords_sha256()[:12]}" in get_metric("keyword_jaccard").signature


def test_digests_are_computed_once(tmp_path, monkeypatch):
    f = tmp_path / "d.txt"
    f.write_text("北京大学 10\n", encoding="utf-8")
    first = prov.file_sha256(f)
    calls = []
    real = prov.hashlib.sha256
    monkeypatch.setattr(prov.hashlib, "sha256", lambda *a: calls.append(1) or real(*a))
    assert prov.file_sha256(f) == first and calls == []


def test_user_dictionary_changes_tokens_and_provenance(tmp_path):
    user = tmp_path / "user.txt"
    user.write_text("佩奇乔治 100 nr\n", encoding="utf-8")
    plain = TOKENIZERS["jieba"]("佩奇乔治来了")
    tok = prov.jieba_tokenizer(user_dict=user)
    assert tok.name.startswith("jieba[user=") and tok("佩奇乔治来了")[0] == "佩奇乔治" != plain[0]
    assert TextView("佩奇乔治来了").tokens(tok.name)[0] == "佩奇乔治"  # registered: views use it by name
    p = prov.JiebaSetup(user_dict=str(user)).provenance()
    assert p.user_dict_sha256 == hashlib.sha256(user.read_bytes()).hexdigest()
    assert f"user=sha256:{p.user_dict_sha256[:12]}" in p.signature()
    # HMM on is a tokenizer of its own, named
    hmm = prov.jieba_tokenizer(hmm=True)
    assert hmm.name == "jieba[hmm]" and "hmm=on" in hmm.signature


def test_provenance_differences_name_what_differs():
    a = prov.JiebaSetup().provenance().to_dict()
    b = dict(a, version="0.42.0", dictionary_sha256="0" * 64)
    diffs = prov.provenance_differences({"jieba": b}, {"jieba": a})
    assert any(d.startswith("jieba version: 0.42.0 -> ") for d in diffs)
    assert any(d.startswith("jieba dictionary_sha256: 000000000000 -> ") for d in diffs)
    assert prov.provenance_differences({"jieba": a}, {"jieba": a}) == []
    assert prov.provenance_differences(None, {"jieba": a}) == ["the baseline records no tokenizer provenance"]


# ------------------------------------------------------------------------------------------- script conversion

def test_script_conversion_examples():
    assert convert("國家", "t2s") == "国家"
    assert convert("看著", "t2s") == "看著" and convert("看著", "tw2s") == "看着"  # OpenCC #555
    assert convert("國家", None) == "國家"
    with pytest.raises(ValueError, match="unknown script conversion"):
        convert("國家", "x2y")


def _qa(rows, **config):
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    return evaluate_qa(data, "x.jsonl", QAConfig(ci_resamples=0, **config))


def test_qa_exact_match_under_script_conversion_and_off_by_default():
    rows = [{"id": "1", "answer": "國家", "prediction": "国家"}, {"id": "2", "answer": "看著", "prediction": "看着"}]
    off = _qa(rows)
    assert [r.exact_match for r in off.records] == [0.0, 0.0]  # off by default: 國家 != 国家
    assert "script=" not in off.signature and off.provenance["qa"]["script"] == "none"
    t2s = _qa(rows, script="t2s")
    assert [r.exact_match for r in t2s.records] == [1.0, 0.0]  # t2s keeps 著
    tw2s = _qa(rows, script="tw2s")
    assert [r.exact_match for r in tw2s.records] == [1.0, 1.0]
    assert "script=tw2s (opencc " in tw2s.signature  # the report header names the config
    assert tw2s.provenance["qa"]["script"].startswith("tw2s") and tw2s.provenance["jieba"]["script"].startswith("tw2s")
    # the difference between t2s and tw2s, shown item by item
    runs = {"sys": list(off.records)}
    moved_t2s = {c.id: c for c in script_effect(runs, "t2s")}
    moved_tw2s = {c.id: c for c in script_effect(runs, "tw2s")}
    assert set(moved_t2s) == {"1"} and set(moved_tw2s) == {"1", "2"}
    assert moved_tw2s["2"].explanation == "著->着" and moved_t2s["1"].explanation == "國->国"


def test_one_thousand_random_spans_round_trip_exactly():
    # phrase conversion (s2twp) changes lengths: U盘 -> 隨身碟, 内存 -> 記憶體, 鼠标 -> 滑鼠
    pieces = ["我的U盘", "和软件", "在计算机里，", "鼠标和内存", "都是信息技术。", "他说：“看着吧！”", "Peppa 和乔治"]
    rng = random.Random(31)
    text = "".join(rng.choice(pieces) for _ in range(400))
    spans = []
    for _ in range(1000):
        s = rng.randrange(0, len(text))
        spans.append((s, rng.randrange(s, min(len(text), s + 40)) + 1))
    conv = convert_with_offsets(text, "s2twp", keep=[x for sp in spans for x in sp])
    assert len(conv.text) != len(text)  # lengths changed, so the map is not the identity
    for s, e in spans:
        cs, ce = conv.to_converted(s, e)
        assert conv.to_original(cs, ce) == (s, e)
        assert conv.text[cs:ce] == convert_with_offsets(text[s:e], "s2twp", keep=[x - s for sp in spans
                                                                                  for x in sp if s <= x <= e]).text
    # the maps are monotone and end at the ends
    assert list(conv.forward) == sorted(conv.forward) and conv.forward[-1] == len(conv.text)
    assert list(conv.backward) == sorted(conv.backward) and conv.backward[-1] == len(text)
    # a length-keeping configuration maps one to one
    same = convert_with_offsets("看著國家的軟體", "tw2s")
    assert same.text == "看着国家的软体" and same.forward == tuple(range(8))


# -------------------------------------------------------------------------------------------- rank sensitivity

def test_two_systems_swap_rank_between_characters_and_jieba(tmp_path):
    src = tmp_path / "swap.jsonl"
    write_jsonl(src, swap_rows())
    runs = run_qa(QAInput(src), QAConfig(ci_resamples=0)).runs()
    rep = rank_sensitivity(runs, n_resamples=300)
    assert rep.score("alpha", "char").mean == 1.0 and rep.score("alpha", "jieba").mean == 0.0
    assert rep.score("beta", "jieba").mean == pytest.approx(2 / 3)
    assert rep.score("beta", "char").mean == pytest.approx((8 / 9 + 14 / 16 + 8 / 9 + 12 / 13) / 4)
    assert rep.score("alpha", "char").rank == 1 and rep.score("alpha", "jieba").rank == 2
    flips = [f for f in rep.flips if f.metric == "token_f1" and f.tokenization == "jieba"]
    assert len(flips) == 1
    f = flips[0]
    assert (f.a, f.b, f.n_paired) == ("alpha", "beta", 12)
    assert f.delta_reference < 0 < f.delta
    assert f.ci_reference[0] <= f.delta_reference <= f.ci_reference[1] and f.ci_reference[1] < 0
    assert f.ci[0] <= f.delta <= f.ci[1]
    assert rep.score("beta", "char").ci_low <= rep.score("beta", "char").mean <= rep.score("beta", "char").ci_high
    assert rep.provenance["jieba"]["dictionary_sha256"] == prov.JiebaSetup().provenance().dictionary_sha256


def test_big_dictionary_and_user_dictionary_alternatives(tmp_path):
    big = tmp_path / "big.txt"  # a "big" dictionary that knows the scrambled words
    big.write_text("学大京北 10 n\n北京大学 5 nt\n", encoding="utf-8")
    user = tmp_path / "user.txt"
    user.write_text("学大华清 10 n\n", encoding="utf-8")
    src = tmp_path / "swap.jsonl"
    write_jsonl(src, swap_rows())
    runs = run_qa(QAInput(src), QAConfig(ci_resamples=0)).runs()
    rep = rank_sensitivity(runs, big_dictionary=big, user_dict=user, n_resamples=0)
    keys = [t.key for t in rep.tokenizations]
    assert keys == ["char", "jieba", "jieba_big", "jieba_hmm", "jieba_user"]
    assert rep.provenance["jieba_big"]["dictionary_sha256"] == hashlib.sha256(big.read_bytes()).hexdigest()
    assert rep.provenance["jieba_user"]["user_dict_sha256"] == hashlib.sha256(user.read_bytes()).hexdigest()
    assert rep.score("alpha", "jieba_big").mean != rep.score("alpha", "jieba").mean


def test_sensitivity_command_and_tokenizer_warnings_in_compare_and_gate(tmp_path, capsys):
    src = tmp_path / "swap.jsonl"
    write_jsonl(src, swap_rows())
    out = tmp_path / "sens.json"
    assert main(["sensitivity", "--input", str(src), "--ci-resamples", "200", "--output-file", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Order changes (" in text and "alpha  beta" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    digest = prov.JiebaSetup().provenance().dictionary_sha256
    assert data["provenance"]["jieba"]["dictionary_sha256"] == digest
    assert any(f["tokenization"] == "jieba" and f["metric"] == "token_f1" for f in data["flips"])

    # a baseline written with a user dictionary and one from another jieba version / dictionary
    user = tmp_path / "user.txt"
    user.write_text("北京大学校 10 n\n", encoding="utf-8")
    base = tmp_path / "base.json"
    assert main(["qa", "--input", str(src), "--user-dict", str(user), "--ci-resamples", "0",
                 "--output-file", str(base)]) == 0
    assert json.loads(base.read_text(encoding="utf-8"))["provenance"]["jieba"]["dictionary_sha256"] == digest
    old = json.loads(base.read_text(encoding="utf-8"))
    old["provenance"]["jieba"].update(version="0.39", dictionary_sha256="f" * 64, user_dict_sha256=None)
    older = tmp_path / "older.json"
    older.write_text(json.dumps(old), encoding="utf-8")
    capsys.readouterr()
    assert main(["compare", "--input", str(src), "--ci-resamples", "0", "--baseline-report", str(base)]) == 0
    err = capsys.readouterr().err
    assert "tokenizer changed since the baseline" in err and "jieba user_dict_sha256:" in err
    assert main(["compare", "--input", str(src), "--ci-resamples", "0", "--baseline-report", str(older)]) == 0
    err = capsys.readouterr().err
    assert "jieba version: 0.39 -> " in err and "jieba dictionary_sha256: ffffffffffff -> " + digest[:12] in err
    # the same settings: no warning
    same = tmp_path / "same.json"
    assert main(["qa", "--input", str(src), "--ci-resamples", "0", "--output-file", str(same)]) == 0
    capsys.readouterr()
    assert main(["compare", "--input", str(src), "--ci-resamples", "0", "--baseline-report", str(same)]) == 0
    assert "tokenizer changed" not in capsys.readouterr().err
    # the gate
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, swap_rows("alpha"))
    write_jsonl(b, swap_rows("beta"))
    main(["review", "gate", "--baseline", str(a), "--candidate", str(b), "--resamples", "200",
          "--baseline-report", str(older)])
    err = capsys.readouterr().err
    assert "tokenizer changed since the baseline" in err and "jieba version: 0.39" in err


def test_qa_command_lists_the_records_conversion_moved(tmp_path, capsys):
    src = tmp_path / "zh.jsonl"
    write_jsonl(src, [{"id": "1", "answer": "國家", "prediction": "国家"}, {"id": "2", "answer": "看著", "prediction": "看着"}])
    assert main(["qa", "--input", str(src), "--ci-resamples", "0", "--script", "t2s"]) == 0
    out = capsys.readouterr().out
    assert "Script conversion t2s: 1 record(s)" in out and "1: EM 0 -> 1" in out and "script=t2s (opencc" in out
    assert main(["qa", "--input", str(src), "--ci-resamples", "0", "--script", "tw2s"]) == 0
    out = capsys.readouterr().out
    assert "Script conversion tw2s: 2 record(s)" in out and "2: EM 0 -> 1, F1 0.50 -> 1.00 (著->着)" in out
    assert main(["qa", "--input", str(src), "--ci-resamples", "0"]) == 0
    assert "Script conversion" not in capsys.readouterr().out  # off by default


def test_keyword_jaccard_with_a_user_dictionary_in_dialogue(tmp_path, capsys):
    from evaluators.metrics.registry import PairScorer, get_metric

    user = tmp_path / "user.txt"
    user.write_text("佩奇乔治 100 nr\n", encoding="utf-8")
    plain, with_user = PairScorer(["keyword_jaccard"]), PairScorer(["keyword_jaccard"], user_dict=str(user))
    # without the word: {佩奇, 乔治, 来} vs {佩奇, 乔治, 走} -> 2/4; with it: {佩奇乔治, 来} vs {佩奇乔治, 走} -> 1/3
    # (来/走/了 are not in the stop-word list; 了 is)
    a, b = "佩奇乔治来了", "佩奇乔治走了"
    assert plain.score(a, b)["keyword_jaccard"] != with_user.score(a, b)["keyword_jaccard"]
    digest = hashlib.sha256(user.read_bytes()).hexdigest()
    assert f"user=sha256:{digest[:12]}" in with_user.signatures["keyword_jaccard"]
    assert get_metric("keyword_jaccard").signature == plain.signatures["keyword_jaccard"]  # the default unchanged
    # the dialogue command: --user-dict recorded in the report's metric signatures
    from evaluators.demo import demo_path

    out = tmp_path / "out"
    cases = demo_path("dialogue", "persona_cases.json")
    preds = demo_path("dialogue", "panda-chat-small_report.json")
    assert main(["dialogue", "--cases", str(cases), "--pred", str(preds), "--user-dict", str(user),
                 "--out", str(out)]) == 0
    report = next(p for p in out.iterdir() if p.suffix == ".json")
    assert f"user=sha256:{digest[:12]}" in report.read_text(encoding="utf-8")
    assert main(["dialogue", "--cases", str(cases), "--pred", str(preds), "--user-dict", str(tmp_path / "no.txt")]) == 2


def test_an_uploaded_dictionary_is_kept_privately_and_a_planted_file_is_never_loaded(tmp_path, monkeypatch):
    """The upload's file was ``<tmp>/evalboard-jieba-<sha256>.txt``, reused when its size matched: any local
    user could plant a same-size file under that name.  Now: a private folder, and the bytes must be equal."""
    import hashlib
    import stat

    from evaluators.text.provenance import stored_dictionary

    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    data = "云计算 5 n\n深度学习 5 n\n".encode("utf-8")
    path = stored_dictionary(data)
    assert path == str(tmp_path / "jieba_dicts" / f"{hashlib.sha256(data).hexdigest()}.txt")
    assert open(path, "rb").read() == data
    assert stat.S_IMODE((tmp_path / "jieba_dicts").stat().st_mode) == 0o700
    planted = b"x" * len(data)                              # same size, other bytes
    open(path, "wb").write(planted)
    assert stored_dictionary(data) == path and open(path, "rb").read() == data
    assert stored_dictionary(data) == path                  # the same bytes again: nothing rewritten
    assert [p.name for p in (tmp_path / "jieba_dicts").iterdir()] == [f"{hashlib.sha256(data).hexdigest()}.txt"]


def test_script_effect_scores_as_the_report_does_with_the_run_s_language():
    """script_effect had its own copy of the CJK test and ignored ``lang``: under ``lang="en"`` a Chinese pair is
    scored by SQuAD's rules in the report, and must be in the list of moved records too."""
    from evaluators.qa.evaluate import QAConfig, evaluate_qa, official_scores
    from evaluators.qa.sensitivity import script_effect

    data = '{"id": "1", "answer": "國家", "final_answer": "国家"}\n'.encode("utf-8")
    for lang in ("auto", "en", "zh"):
        off = evaluate_qa(data, "r.jsonl", QAConfig(ci_resamples=0, lang=lang))
        on = evaluate_qa(data, "r.jsonl", QAConfig(ci_resamples=0, lang=lang, script="t2s"))
        (change,) = script_effect({"r": list(off.records)}, "t2s", lang)
        assert (change.exact_match_before, change.exact_match_after) == (off.records[0].exact_match,
                                                                         on.records[0].exact_match) == (0.0, 1.0)
        assert (change.token_f1_before, change.token_f1_after) == (off.records[0].token_f1, on.records[0].token_f1)
    # the one rule: SQuAD's whitespace tokens make 國家 / 国家 one token each (F1 0), CMRC's characters 1 of 2
    assert official_scores("国家", ["國家"], "en")[1:] == (0.0, 0.0)
    assert official_scores("国家", ["國家"], "zh")[1:] == (0.0, 0.5)
    assert official_scores("国家", ["國家"], "auto", "t2s") == ("zh", 1.0, 1.0)


def test_signature_differences_name_a_changed_jieba_dictionary_version_hmm_and_script(tmp_path):
    """What a logged run keeps is its signature: the facts the Runs page and ``runs compare`` compare (dictionary,
    version, user dictionary, HMM, stop words, script), read from the tokenizers' real signatures."""
    from evaluators.metrics.registry import get_metric

    base = get_metric("keyword_jaccard").signature
    digest = prov.JiebaSetup().provenance().dictionary_sha256
    facts = prov.signature_tokenizer_facts(base)
    assert facts == {"jieba version": prov.jieba_version(), "jieba mode": "accurate", "jieba hmm": "off",
                     "jieba dict": f"sha256:{digest[:12]}", "jieba user": "none",
                     "stopwords sha256": prov.stopwords_sha256()[:12], "script": "none"}
    # a baseline cut with another dictionary and another jieba version
    older = base.replace(f"jieba-{prov.jieba_version()}(", "jieba-0.39(").replace(digest[:12], "f" * 12)
    assert prov.signature_differences(older, base) == [f"jieba dict: sha256:{'f' * 12} -> sha256:{digest[:12]}",
                                                       f"jieba version: 0.39 -> {prov.jieba_version()}"]
    assert prov.signature_differences(base, base) == []
    # HMM on (a setup with its own name, its version inside the brackets) and a user dictionary
    user = tmp_path / "user.txt"
    user.write_text("北京大学校 10 n\n", encoding="utf-8")
    assert prov.signature_differences(base, prov.jieba_tokenizer(hmm=True).signature) == ["jieba hmm: off -> on"]
    assert prov.signature_differences(base, prov.jieba_tokenizer(user_dict=user).signature) == [
        f"jieba user: none -> sha256:{hashlib.sha256(user.read_bytes()).hexdigest()[:12]}"]
    # the QA scores' signature: NLTK's version and the script conversion (absent = none)
    off = _qa([{"id": "1", "answer": "國家", "prediction": "国家"}]).signature
    on = _qa([{"id": "1", "answer": "國家", "prediction": "国家"}], script="t2s").signature
    assert prov.signature_differences(off, on) == [f"script: none -> {prov.script_label('t2s')}"]
    assert prov.signature_differences(off, off.replace("nltk==", "nltk==0.")) == [
        f"nltk version: {prov.signature_tokenizer_facts(off)['nltk version']} -> 0."
        f"{prov.signature_tokenizer_facts(off)['nltk version']}"]
    # a tokenizer only one side uses is another metric set, not a change
    assert prov.signature_differences(base, TOKENIZERS["char"].signature) == []


def test_script_conversion_is_named_in_the_report_header_and_absent_by_default(tmp_path, capsys):
    """Off by default; when on, the terminal report's Configuration block names the OpenCC config (before the
    counts and scores), and the JSON report's first section, ``config``, records it."""
    from evaluators.text.provenance import script_label

    src = tmp_path / "zh.jsonl"
    write_jsonl(src, [{"id": "1", "answer": "國家", "prediction": "国家"}])
    assert main(["qa", "--input", str(src), "--ci-resamples", "0", "--script", "tw2s"]) == 0
    out = capsys.readouterr().out
    header = out.split("Configuration\n", 1)[1].split("=" * 80, 1)[0]
    assert f"  script:       {script_label('tw2s')} (Traditional/Simplified conversion before scoring)\n" in header
    assert script_label("tw2s").startswith("tw2s (opencc ")
    assert main(["qa", "--input", str(src), "--ci-resamples", "0"]) == 0
    header = capsys.readouterr().out.split("Configuration\n", 1)[1].split("=" * 80, 1)[0]
    assert "  script:" not in header and "opencc" not in header
    for script, expected in ((None, None), ("t2s", "t2s")):
        out_file = tmp_path / f"{script}.json"
        assert main(["qa", "--input", str(src), "--ci-resamples", "0", "--output-file", str(out_file),
                     *(["--script", script] if script else [])]) == 0
        data = json.loads(out_file.read_text(encoding="utf-8"))
        assert list(data)[:2] == ["file", "config"] and data["config"]["script"] == expected
        assert data["provenance"]["qa"]["script"] == script_label(script)
        assert data["overall"]["exact_match"] == (1.0 if script else 0.0)
