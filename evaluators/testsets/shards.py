"""Keyword test-set runs in shards: one shard's items (or dialogues) scored (:func:`score_shard`) and the report of
the pooled shards (:func:`merged_report`), equal to the single-process report (see :mod:`evaluators.shards`).

Every shard loads the whole test set and answers file (the same items, issues and answers as one process), deals
the items by (category, id) (a multi-turn set's dialogues by (scenario, id)), so every category is split evenly,
and scores its own with the per-item function of the run (:func:`evaluators.testsets.evaluate.item_result`,
``_dialogue_result``, in chunks as the run scores them).  A result travels as typed JSON; the merge puts them back in input order and builds the
report with :func:`~evaluators.testsets.evaluate.single_report` (multi-turn:
:func:`~evaluators.testsets.evaluate.multi_turn_report`), the single-process run's code (means, intervals,
coverages and id lists computed once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evaluators.io.gt_patch import GTPatchSet
from evaluators.parallel import map_ordered
from evaluators.testsets.evaluate import (
    CHUNK_ITEMS,
    Answer,
    AnswerSet,
    DialogueResult,
    ItemResult,
    _score_dialogues,
    _score_items,
    answer_for,
    load_answers,
    multi_turn_report,
    single_report,
)
from evaluators.testsets.run import TestSetsConfig, TestSetsInputs, TestSetsReport
from evaluators.testsets.schema import TestSet, load_test_set
from evaluators.shards import assign, assignment_digest, pooled_rows

#: The per-item columns of a test-set shard file: the item's position, its group (category or scenario), its id,
#: its result, and (single-turn sets) the item itself and its answer as ``[turn, answer]`` (typed JSON; what a GT
#: patch applied at the merge scores again).
COLUMNS = ("index", "group", "id", "result", "item", "answer")


@dataclass(frozen=True)
class TestSetsShard:
    """One shard of a test-set run, scored.

    Attributes
    ----------
    test_set : TestSet
    answers : AnswerSet
        The whole input, as loaded.
    assignment : str
        :func:`evaluators.shards.assignment_digest` of the whole input's assignment.
    keys : list of (group, id)
        Every item's key, in input order.
    positions : list of int
        This shard's items' positions.
    results : list of ItemResult or DialogueResult
        Their results, in input order.
    """

    __test__ = False

    test_set: TestSet
    answers: AnswerSet
    assignment: str
    keys: list[tuple[str, str]] = field(repr=False)
    positions: list[int] = field(repr=False)
    results: list = field(repr=False)


def _group(item: Any, kind: str) -> str:
    return str(getattr(item, "scenario" if kind == "multi_turn" else "category", "") or "")


def score_shard(inputs: TestSetsInputs, config: TestSetsConfig, shard: int, n_shards: int,
                seed: int = 0, *, workers: int = 1) -> TestSetsShard:
    """Score shard ``shard`` of ``n_shards`` of a test-set run on the test set as read (``workers`` processes score
    chunks of its items, as in the single-process run); a GT patch is applied by the merge, to the pooled report.

    Raises
    ------
    InputError
        A file unusable as a whole.
    ValueError
        ``config.gt_patch`` on a multi-turn set.
    """
    test_set = load_test_set(inputs.items, inputs.items_name, config.kind)
    answers = load_answers(inputs.answers, inputs.answers_name)
    if config.gt_patch:
        from evaluators.testsets.patch import require_single_turn

        require_single_turn(test_set)
    keys = [(_group(item, test_set.kind), item.id) for item in test_set.items]
    shards = assign(keys, n_shards, seed)
    positions = [k for k, s in enumerate(shards) if s == shard]
    mine = [test_set.items[k] for k in positions]
    if test_set.kind == "multi_turn":
        work = [(d, [answers.answers.get((d.id, t.turn)) for t in sorted(d.turns, key=lambda t: t.turn)])
                for d in mine]
        results = list(map_ordered(_score_dialogues, work, workers, chunk_size=CHUNK_ITEMS))
    else:
        pairs = [(item, answer_for(answers, item.id)) for item in mine]
        results = list(map_ordered(_score_items, pairs, workers, chunk_size=CHUNK_ITEMS))
    return TestSetsShard(test_set, answers, assignment_digest(shards), keys, positions, results)


def shard_rows(result: TestSetsShard) -> list[list]:
    """The shard's rows in :data:`COLUMNS` order (the result as typed JSON)."""
    from evaluators.io.typed_json import encode

    items, answers = result.test_set.items, result.answers.answers
    rows = []
    for k, r in zip(result.positions, result.results):
        item = answer = None
        if result.test_set.kind == "single":
            item = encode(items[k])
            turn = None if (r.id, None) in answers else 1  # as answer_for finds it
            if (r.id, turn) in answers:
                answer = [turn, encode(answers[(r.id, turn)])]
        rows.append([k, *result.keys[k], encode(r), item, answer])
    return rows


def shard_extra(result: TestSetsShard) -> dict[str, Any]:
    """What the merge needs of the whole input besides the items' results: the test set's header and issues, the
    answers file's name, issues and keys (the answers' texts stay in the results)."""
    from evaluators.io.typed_json import encode

    t, a = result.test_set, result.answers
    return {"test_set": encode(TestSet(t.file, t.kind, t.version, t.description, (), tuple(t.issues))),
            "answers_file": a.file, "answers_issues": encode(list(a.issues)),
            "answer_keys": [list(k) for k in a.answers]}


def merged_report(extra: dict[str, Any], columns: Sequence[str], rows: Sequence[Sequence], *,
                  gt_patch: GTPatchSet | None = None, gt_digest: str | None = None) -> TestSetsReport:
    """The report of the pooled rows of every shard, computed once (:func:`single_report` /
    :func:`multi_turn_report`); with ``gt_patch`` (made for the test-set file of SHA-256 ``gt_digest``) patched as
    :func:`evaluators.testsets.run.run_testsets` patches it (:func:`evaluators.testsets.patch.patch_testsets`: the
    changed items scored again, the mean keyword score before and after with a paired test).

    Raises
    ------
    ValueError
        Other columns, an item twice, or a result that does not decode.
    GTPatchMismatch
        ``gt_patch`` holds a correction made for another test-set file.
    """
    from evaluators.io.typed_json import decode

    ordered = pooled_rows(columns, COLUMNS, rows, what="test-set items", item="item")
    test_set = decode(extra["test_set"])
    results = [decode(r[3]) for r in ordered]
    kind = DialogueResult if test_set.kind == "multi_turn" else ItemResult
    if not isinstance(test_set, TestSet) or not all(isinstance(r, kind) for r in results):
        raise ValueError(f"a row is not a {test_set.kind} test-set result")
    # the answers as their keys: what the report reads of them besides the texts the results hold
    answers = AnswerSet(extra["answers_file"], {(k, t): Answer("") for k, t in extra["answer_keys"]},
                        list(decode(extra["answers_issues"])))
    if test_set.kind == "multi_turn":
        return TestSetsReport(test_set, answers, multi_turn_report(test_set, answers, results))
    test_set = replace(test_set, items=tuple(decode(r[4]) for r in ordered))
    for r in ordered:
        if r[5] is not None:  # the answers the items were scored with (the others are known by their keys)
            answers.answers[(r[2], r[5][0])] = decode(r[5][1])
    report = single_report(test_set, answers, results)
    if not gt_patch:
        return TestSetsReport(test_set, answers, report)
    from evaluators.testsets.patch import patch_testsets

    after, corrections = patch_testsets(test_set, answers, report, gt_patch, test_set.file, gt_digest)
    return TestSetsReport(test_set, answers, after, report, corrections)


__all__ = ["COLUMNS", "TestSetsShard", "merged_report", "score_shard", "shard_extra", "shard_rows"]
