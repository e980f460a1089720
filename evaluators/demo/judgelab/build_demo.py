"""Build the judge-lab demo files (run from a checkout: ``python -m evaluators.demo.judgelab.build_demo``).

Written for EvalBoard, not copied from anywhere: 200 short-answer questions (arithmetic, unit conversion and
calendar questions, half in Chinese, half in English) with a model's answer each, labelled right / wrong by a
person (the human label is whether the answer holds the reference value), and three versions of a judge
prompt run through the project's stub judge (``tests/helpers/judge_stub.py``: a verdict per item from its
true label, seeded by the item id, so the files are the same on every run):

- ``v1 plain``: an honest prompt, sensitivity 0.85, specificity 0.75;
- ``v2 strict 中文``: an honest, better prompt that likes long answers (+0.25 on the chance of "right" per 100
  characters above 80): its length bias shows in the bias panel;
- ``v3 few-shot``: a prompt whose examples are the dev items (it memorised them: dev kappa 1.0) and that is
  weak elsewhere (sensitivity 0.7, specificity 0.6): the overfit warning.

The dev / test split is the lab's default (``seed=0``, ``dev_fraction=0.5``, stratified by label x slice).
Beside the calibration set, each version's verdicts on 300 answers nobody labelled (``target_verdicts.jsonl``,
true accuracy about 0.6) give the corrected scores.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
N_LABELLED, N_TARGET = 200, 300
GUIDELINES = "g1 (right = holds the reference value)"
PROMPTS = {
    "v1 plain": "VERSION: v1\nIs the answer right? Say yes or no.\nQuestion: {question}\nReference: {reference}\n"
                "Answer: {answer}\n\nVerdict:",
    "v2 strict 中文": "VERSION: v2\n判断回答是否与参考答案一致，只回答 yes 或 no。\n问题: {question}\n参考: {reference}\n"
                    "Answer: {answer}\n\n结论:",
    "v3 few-shot": "VERSION: v3\nExamples (from the dev items): ...\nQuestion: {question}\nReference: {reference}\n"
                   "Answer: {answer}\n\nVerdict:",
}
PADDING_EN = ["Let me work through it step by step.", "I double-checked the calculation.",
              "This follows directly from the definition.", "Rounding is not needed here.",
              "Note that the units matter.", "I hope this helps."]
PADDING_ZH = ["我一步一步地算了一遍。", "这个结果我又核对了一次。", "这可以直接从定义推出。", "这里不需要四舍五入。",
              "注意单位。", "希望这个回答有帮助。"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def _question(rng: random.Random, zh: bool) -> tuple[str, str, str]:
    """(slice, question, reference value)."""
    kind = rng.choice(("arithmetic", "units", "calendar"))
    if kind == "arithmetic":
        a, b = rng.randint(12, 99), rng.randint(12, 99)
        q = f"{a} 乘以 {b} 等于多少？" if zh else f"What is {a} times {b}?"
        return kind, q, str(a * b)
    if kind == "units":
        km = rng.randint(2, 60)
        q = f"{km} 公里等于多少米？" if zh else f"How many metres are there in {km} kilometres?"
        return kind, q, str(km * 1000)
    m = rng.randrange(12)
    q = f"平年的{m + 1}月有多少天？" if zh else f"How many days does {MONTHS[m]} have in a common year?"
    return kind, q, str(DAYS[m])


def _answer(rng: random.Random, zh: bool, reference: str, right: bool) -> str:
    value = reference if right else str(int(reference) + rng.choice((-10, -2, -1, 1, 2, 10, 100)))
    core = (f"答案是 {value}。" if zh else f"The answer is {value}.") if rng.random() < 0.7 else value
    padding = PADDING_ZH if zh else PADDING_EN
    extra = rng.sample(padding, rng.choice((0, 0, 1, 2, 4, 6)))
    return " ".join([core, *extra]) if not zh else "".join([core, *extra])


def make_items(n: int, prefix: str, p_right: float, seed: int) -> list[dict]:
    """``n`` questions with an answer each; ``label`` is whether the answer holds the reference."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        zh = i % 2 == 0
        kind, question, reference = _question(rng, zh)
        right = rng.random() < p_right
        out.append({"item_id": f"{prefix}{i:03d}", "slice": f"{kind} {'zh' if zh else 'en'}", "question": question,
                    "reference": reference, "answer": _answer(rng, zh, reference, right), "label": int(right)})
    return out


def _jsonl(path: Path, records) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def main() -> None:
    from evaluators.judgelab import HumanLabel, JudgeVersion, assign_split
    from tests.helpers.judge_stub import StubJudge  # the project's stub judge: a checkout, not an install

    labelled = make_items(N_LABELLED, "c", 0.55, seed=33)
    target = make_items(N_TARGET, "t", 0.6, seed=34)
    labels = [HumanLabel(r["item_id"], r["label"], r["slice"], GUIDELINES) for r in labelled]
    dev = frozenset(assign_split(labels, seed=0, dev_fraction=0.5).ids("dev"))
    stubs = {"v1 plain": StubJudge(sensitivity=0.85, specificity=0.75, seed=1),
             "v2 strict 中文": StubJudge(sensitivity=0.9, specificity=0.88, length_bias=0.25, length_centre=80,
                                       seed=2),
             "v3 few-shot": StubJudge(sensitivity=0.7, specificity=0.6, memorised=dev, seed=3)}
    _jsonl(HERE / "items.jsonl", [{k: r[k] for k in ("item_id", "slice", "question", "reference", "answer")}
                                  for r in labelled])
    _jsonl(HERE / "labels.jsonl", [{"item_id": r["item_id"], "label": r["label"], "slice": r["slice"],
                                    "guidelines_version": GUIDELINES} for r in labelled])
    target_records = []
    for n, (name, stub) in enumerate(stubs.items(), start=1):
        version = JudgeVersion.make("stub-judge", PROMPTS[name], {"max_tokens": 10, "temperature": 0},
                                    "yes-in-reply", name)
        head = {"judge": name, "model": version.model, "prompt_hash": version.prompt_hash,
                "parameters": dict(version.parameters), "parser": version.parser}
        _jsonl(HERE / f"verdicts_v{n}.jsonl",
               [{"item_id": r["item_id"], "verdict": stub.verdict(r["item_id"], r["label"], len(r["answer"])), **head}
                for r in labelled])
        target_records += [{"item_id": r["item_id"], "judge": name,  # grouped by name: no version fields needed
                            "verdict": stub.verdict(r["item_id"], r["label"], len(r["answer"]))} for r in target]
    _jsonl(HERE / "target_verdicts.jsonl", target_records)
    for n, name in enumerate(stubs, start=1):
        (HERE / f"prompt_v{n}.txt").write_text(PROMPTS[name], encoding="utf-8")


if __name__ == "__main__":
    main()
