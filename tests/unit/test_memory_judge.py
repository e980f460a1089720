"""Judge modes, reply parsing, official prompt wording, mode choice and the cache file."""

import json

import pytest

from evaluators.io import InputError
from evaluators.memory.judge import (
    JudgeCache, Judgement, auto_mode, batch_judge, build_prompt, judge_answer, parse_binary_reply,
    parse_continuous_reply,
)
from evaluators.memory.records import EvalResult


class ScriptedLLM:
    """In-process stand-in: returns the scripted replies in order and records the prompts."""

    model = "scripted"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.prompts = []

    def complete(self, prompt, *, max_tokens=None):
        self.prompts.append((prompt, max_tokens))
        return self.replies.pop(0)


@pytest.mark.parametrize("reply, score, note", [
    ('{"score": 0.8, "reasoning": "mostly right"}', 0.8, None),
    ('```json\n{"score": 1, "reasoning": "对"}\n```', 1.0, None),
    ('Here you go: {"score": "0.4", "reasoning": "partly"} thanks', 0.4, None),
    ('{"score": 0.75, "reasoning": "x"}', 0.8, "score 0.75 rounded to the 0.2 grid"),  # 0.75*5 = 3.75 steps -> 4 -> 0.8
    ('{"score": 0.1, "reasoning": "x"}', 0.2, "score 0.1 rounded to the 0.2 grid"),    # 0.5 steps: halves up
    ('{"score": 0.09, "reasoning": "x"}', 0.0, "score 0.09 rounded to the 0.2 grid"),  # 0.45 steps -> 0
])
def test_continuous_reply_parsing(reply, score, note):
    j = parse_continuous_reply(reply, "m")
    assert (j.score, j.note, j.error) == (pytest.approx(score), note, None)


@pytest.mark.parametrize("reply, reason", [
    ("7/10", "no JSON object in the reply"),
    ('{"score": 7, "reasoning": "x"}', "'score' 7 is outside [0, 1]"),
    ('{"reasoning": "x"}', "'score' is missing or not a number"),
    ('{"score": true}', "'score' is missing or not a number"),
    ('[0.5]', "the reply is JSON but not an object"),
    ('{"score": 0.5, "reasoning": "x"', "no JSON object in the reply"),
])
def test_malformed_continuous_replies_are_recorded_not_raised(reply, reason):
    j = parse_continuous_reply(reply)
    assert j.score is None and j.error == f"malformed reply: {reason}" and j.reply == reply


@pytest.mark.parametrize("reply, score, has_note", [
    ("Yes.", 1.0, False), ("yes", 1.0, False), ("No", 0.0, False), ("no, it is wrong", 0.0, False),
    ("", 0.0, True), ("Correct", 0.0, True),
    # the official rule is a substring test: 'yes' in reply.lower()
    ("Not yes", 1.0, False),
])
def test_binary_reply_reads_like_the_official_script(reply, score, has_note):
    j = parse_binary_reply(reply, "default_binary")
    assert j.score == score and (j.note is not None) == has_note


def test_longmemeval_prompts_keep_the_official_wording():
    q, a, r = "How many days?", "18 days", "19 days"
    temporal = build_prompt(q, a, r, "temporal_reasoning")
    assert "do not penalize off-by-one errors for the number of days" in temporal
    assert temporal.endswith("Question: How many days?\n\nCorrect Answer: 18 days\n\nModel Response: 19 days\n\n"
                             "Is the model response correct? Answer yes or no only.")
    ku = build_prompt(q, a, r, "knowledge_update")
    assert "as long as the updated answer is the required answer.\n\nQuestion:" in ku
    pref = build_prompt(q, a, r, "preference")
    assert "\n\nRubric: 18 days\n\n" in pref and "recalls and utilizes the user's personal information" in pref
    abst = build_prompt(q, a, r, "abstention")
    assert abst.startswith("I will give you an unanswerable question, an explanation")
    assert abst.endswith("Does the model correctly identify the question as unanswerable? Answer yes or no only.")
    default = build_prompt(q, a, r, "default_binary")
    assert "If the response only contains a subset of the information required by the answer, answer no. \n\n" \
           in default
    assert build_prompt(q, a, r, "adversarial") is None


def test_modes_need_an_llm_except_adversarial():
    for mode in ("continuous", "temporal_reasoning", "knowledge_update", "preference", "default_binary"):
        with pytest.raises(ValueError, match="needs an LLM"):
            judge_answer("q", "a", "p", mode=mode)
    with pytest.raises(ValueError, match="unknown judge mode"):
        judge_answer("q", "a", "p", mode="fuzzy")
    assert judge_answer("q", "未提及", "对话中没有提到。", mode="adversarial").score == 1.0
    assert judge_answer("What did Alice adopt?", "Not mentioned", "A dog", mode="adversarial").score == 0.0


def test_judge_answer_sends_the_mode_prompt_and_reads_the_reply():
    llm = ScriptedLLM('{"score": 0.6, "reasoning": "date off by a month"}', "yes")
    j = judge_answer("她什么时候搬家的？", "2023年5月", "2023年6月", llm=llm, mode="continuous")
    assert (j.score, j.reasoning, j.model) == (0.6, "date off by a month", "scripted")
    assert "Correct Answer: 2023年5月" in llm.prompts[0][0] and llm.prompts[0][1] == 300
    k = judge_answer("Where do I live now?", "Tokyo", "You moved from Osaka to Tokyo.", llm=llm,
                     mode="knowledge_update")
    assert k.score == 1.0 and llm.prompts[1][1] == 10


@pytest.mark.parametrize("qtype, qid, mode", [
    ("adversarial", "x", "adversarial"), ("temporal_reasoning", "x", "temporal_reasoning"),
    ("knowledge_update", "x", "knowledge_update"), ("single_session_preference", "x", "preference"),
    ("single_session_user", "x", "default_binary"), ("multi_session", "x_abs", "abstention"),
    ("single_hop", "x", "continuous"), ("temporal", "x", "continuous"), ("自定义", "x", "continuous"),
])
def test_auto_mode_by_question_type(qtype, qid, mode):
    r = EvalResult("s", qid, qtype, "q", "a", "p", abstention=qid.endswith("_abs"))
    assert auto_mode(r) == mode


def test_batch_judge_without_llm_uses_rules_and_says_what_is_missing(tmp_path):
    adv = EvalResult("s", "a1", "adversarial", "q", "Not mentioned", "I don't know")
    other = EvalResult("s", "b1", "single_hop", "q", "Paris", "Paris")
    run = batch_judge([adv], cache_path=tmp_path / "c.json")
    assert run.scores() == {"a1": 1.0}
    with pytest.raises(ValueError, match=r"1 question\(s\) are not in the judge cache and need an LLM judge "
                                         r"\(modes: continuous\)"):
        batch_judge([adv, other])
    with pytest.raises(ValueError, match="duplicate question_id 'a1'"):
        batch_judge([adv, adv])


def test_mode_mapping_and_single_mode():
    r = EvalResult("s", "t1", "temporal", "When?", "May", "May")
    llm = ScriptedLLM("yes", '{"score": 1.0, "reasoning": "ok"}')
    assert batch_judge([r], llm=llm, mode={"temporal": "temporal_reasoning"}).judgements["t1"].mode == \
        "temporal_reasoning"
    assert batch_judge([r], llm=llm, mode="continuous").judgements["t1"].score == 1.0
    with pytest.raises(ValueError, match="unknown judge mode 'nope'"):
        batch_judge([r], llm=llm, mode="nope")


def test_interrupted_run_keeps_what_arrived_and_resumes(tmp_path):
    results = [EvalResult("s", f"q{i}", "single_hop", f"Q{i}", "a", "a") for i in range(4)]
    path = tmp_path / "cache.json"

    class Interrupt(Exception):
        pass

    def stop_after_two(done, total):
        if done == 2:
            raise Interrupt  # e.g. the page reran or Ctrl-C

    llm = ScriptedLLM(*['{"score": 1.0, "reasoning": "ok"}'] * 4)
    with pytest.raises(Interrupt):
        batch_judge(results, llm=llm, cache_path=path, progress=stop_after_two, max_workers=1)
    saved = json.loads(path.read_text(encoding="utf-8"))["entries"]
    # saved on the way out: with one worker the two answers before the interruption, no more
    assert len(saved) == 2
    llm2 = ScriptedLLM(*['{"score": 0.8, "reasoning": "ok"}'] * 4)
    resumed = batch_judge(results, llm=llm2, cache_path=path)
    assert resumed.n_cached == len(saved) and resumed.n_judged == 4 - len(saved)
    assert len(llm2.prompts) == 4 - len(saved)


def test_cache_file_validation(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"entries": {}}', encoding="utf-8")
    with pytest.raises(InputError, match="not a judge cache"):
        JudgeCache(bad)
    partly = json.dumps({"format": "evalboard-memory-judge-cache", "version": 1, "entries": {
        "ok": {"fingerprint": "f", "score": 0.4, "mode": "continuous", "reasoning": "部分正确"},
        "bad": {"fingerprint": "f", "score": 4, "mode": "continuous"},
        "worse": {"score": 1.0, "mode": "vibes"},
    }}, ensure_ascii=False).encode("utf-8")
    cache = JudgeCache.from_bytes(partly, "cache.json")
    assert list(cache.judgements()) == ["ok"] and cache.judgements()["ok"].reasoning == "部分正确"
    assert [(i.path, i.message) for i in cache.issues] == [
        ("entries.bad", "judge cache entry skipped: 'score' must be a number in [0, 1] or null, found 4"),
        ("entries.worse", "judge cache entry skipped: 'mode' must be one of ('continuous', 'adversarial', "
                          "'temporal_reasoning', 'knowledge_update', 'preference', 'default_binary', 'abstention'),"
                          " found 'vibes'"),
    ]
    round_trip = Judgement.from_dict(Judgement(0.2, "continuous", "r", "raw", None, "n", "m").to_dict())
    assert round_trip == Judgement(0.2, "continuous", "r", "raw", None, "n", "m")
