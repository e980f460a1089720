"""Judge versions run live: three prompt versions through the local stub judge server (OpenAI-compatible, no
network beyond 127.0.0.1), the one HTTP client, the content-addressed reply cache, then calibrated."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluators.judgelab import assign_split, calibrate
from evaluators.io.judge_calls import JudgeCallCache, call_key
from evaluators.judgelab.run import PARSERS, JudgeItem, run_judge
from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient
from tests.helpers.judge_stub import StubJudge, StubJudgeServer
from tests.unit.test_judgelab_calibration import _labels

TEMPLATES = {
    "v1": "VERSION: v1\nIs the answer right?\nQuestion: {question}\nReference: {reference}\nAnswer: {answer}\n\n"
          "Say yes or no.",
    "v2": "VERSION: v2\n判断回答是否正确。\n问题：{question}\n参考答案：{reference}\nAnswer: {answer}\n\n只回答 yes 或 no。",
    "v3": "VERSION: v3\nExamples: (the dev items)\nQuestion: {question}\nReference: {reference}\nAnswer: {answer}\n\n"
          "Say yes or no.",
}


def test_three_prompt_versions_through_the_stub_server(tmp_path):
    labels = _labels()
    split = assign_split(labels, seed=11)
    truth = {lab.item_id: lab.label for lab in labels}
    rng = np.random.default_rng(0)
    items = [JudgeItem(lab.item_id, f"[item {lab.item_id}] 第 {k} 个问题 / question {k}?", "参考 reference",
                       "答" * int(rng.integers(20, 200))) for k, lab in enumerate(labels)]
    stubs = {"v1": StubJudge(0.85, 0.8, seed=1), "v2": StubJudge(0.92, 0.6, seed=2),
             "v3": StubJudge(0.65, 0.65, memorised=frozenset(split.ids("dev")), seed=3)}
    cache = JudgeCallCache(tmp_path / "replies.sqlite")
    with StubJudgeServer(stubs, truth) as server:
        client = OpenAICompatibleClient(LLMConfig(base_url=server.base_url, model="stub-judge", timeout_s=10.0,
                                                  max_retries=0, concurrency=4))
        runs = [run_judge(items, TEMPLATES[v], client, name=v, cache=cache) for v in ("v1", "v2", "v3")]
        assert server.requests == 600 and all(r.cached == 0 and not r.errors for r in runs)
        cache.close()
        # the same versions again, from the cache opened again from its file: no request sent, the same verdicts
        again = run_judge(items, TEMPLATES["v2"], client, name="v2", cache=JudgeCallCache(tmp_path / "replies.sqlite"))
        assert server.requests == 600 and again.cached == 200 and again.verdicts == runs[1].verdicts
        client.close()
    for run, v in zip(runs, ("v1", "v2", "v3")):
        # the server applied the stub's rules to the item named in each prompt
        assert run.verdicts == {i: stubs[v].verdict(i, truth[i]) for i in truth}
        assert run.version.model == "stub-judge" and run.version.parser == "yes-in-reply"
        assert dict(run.version.parameters) == {"max_tokens": 10, "temperature": 0}
    assert len({r.version.key for r in runs}) == 3  # the prompt hash tells the versions apart
    report = calibrate(labels, [(r.version, r.verdicts) for r in runs], split=split, seed=11, n_resamples=300)
    for run, cal in zip(runs, report.judges):
        for figs in (cal.dev, cal.test):
            ids = split.ids(figs.side)
            y, p = [truth[i] for i in ids], [run.verdicts[i] for i in ids]
            assert figs.cohen_kappa.value == pytest.approx(cohen_kappa_score(y, p), abs=1e-12)
    assert [cal.overfit for cal in report.judges] == [False, False, True]


def test_cache_key_and_parsers():
    fields, p10, p11 = {"question": "q", "answer": "a"}, {"max_tokens": 10}, {"max_tokens": 11}
    keys = {call_key("m", "t", fields, p10).key, call_key("m", "t", fields, p11).key, call_key("n", "t", fields, p10).key,
            call_key("m", "t2", fields, p10).key, call_key("m", "t", {**fields, "answer": "b"}, p10).key}
    assert len(keys) == 5  # model, template, input and parameters each change the key
    assert call_key("m", "t", {"answer": "a", "question": "q"}, p10) == call_key("m", "t", fields, p10)  # field order
    assert [PARSERS["yes-in-reply"](r) for r in ("Yes.", "no", "The answer is yes")] == [1, 0, 1]
    first = PARSERS["first-word"]
    assert [first(r) for r in ("Yes, it is", "  incorrect", "正确。", "错误", "不对", "maybe", "")] == \
        [1, 0, 1, 0, 0, None, None]


class _Echo:
    model = "echo"

    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    def complete(self, prompt, *, max_tokens=None):
        self.prompts.append(prompt)
        return self.reply


def test_a_reply_without_a_verdict_and_a_bad_template_are_reported():
    items = [JudgeItem("a", "q", "r", "x")]
    got = run_judge(items, "{question} / {reference} / {answer}", _Echo("perhaps"), parser="first-word")
    assert got.verdicts == {} and "no verdict" in got.errors["a"] and got.replies == {"a": "perhaps"}
    with pytest.raises(ValueError, match="question"):
        run_judge(items, "{context}", _Echo("yes"))
    with pytest.raises(ValueError, match="parser"):
        run_judge(items, "{answer}", _Echo("yes"), parser="regex")


def test_a_length_bias_injected_in_the_stub_server_shows_in_the_bias_panel():
    from evaluators.judgelab import length_bias

    labels = _labels()
    truth = {lab.item_id: lab.label for lab in labels}
    rng = np.random.default_rng(3)
    lengths = {lab.item_id: int(rng.integers(100, 500)) for lab in labels}
    items = [JudgeItem(i, f"[item {i}] question", "ref", "长" * lengths[i]) for i in truth]
    stubs = {"long": StubJudge(0.8, 0.8, length_bias=0.1, seed=4), "clean": StubJudge(0.8, 0.8, seed=4)}
    template = "VERSION: {v}\nQuestion: {{question}}\nReference: {{reference}}\nAnswer: {{answer}}\n\nyes or no?"
    with StubJudgeServer(stubs, truth) as server:
        client = OpenAICompatibleClient(LLMConfig(base_url=server.base_url, model="stub-judge", timeout_s=10.0,
                                                  max_retries=0, concurrency=4))
        runs = {v: run_judge(items, template.format(v=v), client) for v in stubs}
        client.close()
    ids = sorted(truth)
    for v, run in runs.items():
        # the server measured each answer's length from the prompt: the verdicts are the stub's own
        assert run.verdicts == {i: stubs[v].verdict(i, truth[i], lengths[i]) for i in ids}
    panel = {v: length_bias([runs[v].verdicts[i] for i in ids], [lengths[i] for i in ids], [truth[i] for i in ids],
                            n_resamples=1000, seed=0) for v in runs}
    assert panel["long"].excludes_zero and panel["long"].ci_low > 0
    assert panel["clean"].ci_low <= 0 <= panel["clean"].ci_high
