"""A tiny exact-match classification task plugged in through the Task protocol alone (issue 27's acceptance).

GT: JSONL ``{"id", "label", "category"}``; predictions: JSONL ``{"id", "system", "label"}``.  One metric,
``exact_match`` (1.0 when the predicted label equals the GT label after stripping and case folding, 0.0
otherwise; undefined when the record has no GT label); one slice, ``category``.

Importing this module registers the task; the CLI loads it through ``EVALBOARD_TASKS=tests.helpers.toy_task``.
It uses only public building blocks (``evaluators.io``, ``evaluators.run_result``, ``evaluators.tasks``):
no engine module knows it exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from evaluators.io.errors import InputIssue
from evaluators.io.readers import iter_jsonl
from evaluators.io.sources import InputFile
from evaluators.run_result import ItemTable, RunResult
from evaluators.tasks import InputRole, register


@dataclass(frozen=True)
class ToyConfig:
    """``case_sensitive``: compare labels as typed (default: case folded)."""

    case_sensitive: bool = False


@dataclass(frozen=True)
class ToyInputs:
    gold: Mapping[str, tuple[str, ...]]        # id -> accepted labels
    category: Mapping[str, str]
    predictions: tuple[tuple[str, str, str], ...]  # (system, id, label)
    issues: tuple[InputIssue, ...]


def _read(file: InputFile, need: tuple[str, ...]) -> tuple[list[dict], list[InputIssue]]:
    rows, issues = [], []
    for item in iter_jsonl(file.data, file.name):
        if isinstance(item, InputIssue):
            issues.append(item)
            continue
        lacking = [k for k in need if not isinstance(item.data.get(k), str)]
        if lacking:
            issues.append(InputIssue(file.name, f"expected string field(s) {', '.join(lacking)}", line=item.line))
            continue
        rows.append(item.data)
    return rows, issues


class ToyTask:
    """Exact-match label classification (see the module docstring)."""

    name = "toylabel"
    title = "Toy label classification"
    unit = "record"
    roles = (InputRole("gt", "GT", "GT labels, JSONL {id, label, category}", is_gt=True),
             InputRole("predictions", "PRED", "predicted labels, JSONL {id, system, label}"))
    config_type = ToyConfig

    def read(self, files: Mapping[str, InputFile]) -> ToyInputs:
        gt_rows, gt_issues = _read(files["gt"], ("id", "label"))
        pred_rows, pred_issues = _read(files["predictions"], ("id", "label"))
        return ToyInputs({r["id"]: (r["label"],) for r in gt_rows},
                         {r["id"]: str(r.get("category") or "") for r in gt_rows},
                         tuple((str(r.get("system") or files["predictions"].name), r["id"], r["label"])
                               for r in pred_rows),
                         tuple(gt_issues + pred_issues))

    def run(self, inputs: ToyInputs, config: ToyConfig) -> RunResult:
        fold = (lambda s: s.strip()) if config.case_sensitive else (lambda s: s.strip().casefold())
        ids, systems, em, cats, questions, gts, preds = [], [], [], [], [], [], []
        for system, rid, label in inputs.predictions:
            gold = inputs.gold.get(rid, ())
            ids.append(rid)
            systems.append(system)
            em.append(float(any(fold(label) == fold(g) for g in gold)) if gold else None)
            cats.append(inputs.category.get(rid))
            questions.append(rid)
            gts.append(gold)
            preds.append(label)
        table = ItemTable(tuple(ids), tuple(systems), {"exact_match": em}, {"category": cats},
                          {"question": questions, "ground_truth": gts, "prediction": preds})
        return RunResult(self.name, table, unit=self.unit, issues=inputs.issues,
                         config={"case_sensitive": config.case_sensitive},
                         signature=f"toylabel:exact_match(strip{'' if config.case_sensitive else '+casefold'})",
                         native=inputs)

    def gold_answers(self, inputs: ToyInputs) -> Mapping[str, tuple[str, ...]]:
        return dict(inputs.gold)

    def with_gold(self, inputs: ToyInputs, gold: Mapping[str, tuple[str, ...]]) -> ToyInputs:
        return replace(inputs, gold={**inputs.gold, **gold})


TASK = register(ToyTask())

#: The toy task's demo: four GT records (one bad line) and two systems' predictions.
DEMO_GT = "\n".join([
    '{"id": "r1", "label": "cat", "category": "animal"}',
    '{"id": "r2", "label": "dog", "category": "animal"}',
    '{"id": "r3", "label": "红色", "category": "colour"}',
    '{"id": "r4", "label": "blue", "category": "colour"}',
    "not json", ""]).encode("utf-8")
DEMO_PRED = "\n".join([
    '{"id": "r1", "system": "A", "label": "Cat"}', '{"id": "r2", "system": "A", "label": "wolf"}',
    '{"id": "r3", "system": "A", "label": "红色"}', '{"id": "r4", "system": "A", "label": "navy"}',
    '{"id": "r1", "system": "B", "label": "cat"}', '{"id": "r2", "system": "B", "label": "dog"}',
    '{"id": "r3", "system": "B", "label": "绿色"}', '{"id": "r4", "system": "B", "label": "blue"}', ""]).encode("utf-8")


def demo_files() -> dict[str, InputFile]:
    """The demo inputs by role."""
    return {"gt": InputFile("toy_gt.jsonl", DEMO_GT), "predictions": InputFile("toy_pred.jsonl", DEMO_PRED)}
